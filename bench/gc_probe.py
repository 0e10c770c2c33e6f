"""Run `gitreg` with the garbage collector watched: each collection's generation and pause.

    python -m bench.gc_probe OUT.json serve --config registry.yaml ...

The first SIGUSR2 starts the count afresh (after start-up, before the load), the second writes
OUT.json (before the shutdown, whose own collections are no serving figure); else it is written
at exit (after SIGTERM, once the server has stopped): per generation, the
number of collections, their total and longest pause in ms, and the objects tracked at the end
(frozen ones apart). Used by bench.http_requests --gc to find where a p99 goes.
"""

from __future__ import annotations

import atexit
import gc
import json
import signal
import sys
import time
from pathlib import Path
from typing import Any

from gitreg.commands.cli import main as gitreg_main


class Watch:
    def __init__(self) -> None:
        self.started = (0.0, 0.0)
        # (wall, thread CPU) seconds of each collection: a wall time far over its CPU time
        # is the machine's noise (the process was not running), not the collector's work.
        self.pauses: dict[int, list[tuple[float, float]]] = {0: [], 1: [], 2: []}

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self.started = (time.perf_counter(), time.thread_time())
        else:
            wall, cpu = self.started
            pause = (time.perf_counter() - wall, time.thread_time() - cpu)
            self.pauses[info["generation"]].append(pause)

    def reset(self) -> None:
        for pauses in self.pauses.values():
            pauses.clear()

    def summary(self) -> dict[str, object]:
        return {
            "generations": {
                str(g): {
                    "count": len(p),
                    "total_ms": round(sum(w for w, _ in p) * 1000, 2),
                    "max_ms": round(max((w for w, _ in p), default=0.0) * 1000, 2),
                    "cpu_total_ms": round(sum(c for _, c in p) * 1000, 2),
                    "cpu_max_ms": round(max((c for _, c in p), default=0.0) * 1000, 2),
                }
                for g, p in self.pauses.items()
            },
            "tracked": len(gc.get_objects()),
            "frozen": gc.get_freeze_count(),
        }


def main() -> int:
    out = Path(sys.argv[1])
    watch = Watch()
    gc.callbacks.append(watch)
    signals = 0

    def write() -> None:  # whole or not at all: the bench reads it as soon as it is there
        temporary = out.with_suffix(".tmp")
        temporary.write_text(json.dumps(watch.summary()))
        temporary.rename(out)

    def on_signal(*_: object) -> None:
        nonlocal signals
        signals += 1
        if signals == 1:
            watch.reset()
        else:
            write()

    signal.signal(signal.SIGUSR2, on_signal)

    def at_exit() -> None:
        if not out.exists():
            write()

    atexit.register(at_exit)
    return gitreg_main(sys.argv[2:])


if __name__ == "__main__":
    raise SystemExit(main())
