"""Issue 25's latency goals, probed round after round: one 5-second probe of a catch-up against
one of idle, minutes apart, moves with whatever the machine did in either window (a run's p99
ratio went from 1.5 to 5.2 with nothing changed). Each round here measures a busy window and the
idle one it is compared with close together, and the figures are the medians of the rounds'
ratios, with their range.

- A catch-up round starts the big server again (warm clones, its persisted index), probes it as
  soon as it answers while its start-up fetch runs, waits until it is quiet, and probes it idle.
- A reload round probes the running server idle, then while a SIGHUP reload runs (the catalog
  rewritten each round, so that each reload has a module to add or remove).
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from bench.scale.server import (
    STARTUP_FETCH,
    Server,
    latency_during_reload,
    latency_for,
    percentile,
    serving,
)


@dataclass(frozen=True)
class Round:
    busy: list[float]  # latencies of the requests begun during the busy window, seconds
    idle: list[float]  # and during the idle window it is compared with
    note: str = ""  # what the round saw (the fetch over before the probe ended, ...)

    def p99(self) -> float:
        return percentile(self.busy, 0.99) / percentile(self.idle, 0.99)

    def top(self) -> float:
        return max(self.busy) / max(self.idle)


def catch_up_rounds(
    config: Path, log: Path, tree: Path, path: str, rounds: int, seconds: float
) -> list[Round]:
    """`rounds` starts of the server of `config`, each probed during its catch-up, then idle."""
    done = []
    for _ in range(rounds):
        with serving(config, log, tree) as server:
            _answering(server, path)
            busy, _ = asyncio.run(latency_for(server.base + path, seconds))
            note = "" if server.logged(STARTUP_FETCH) == 0 else "the fetch ended within the probe"
            server.wait_quiet()
            idle, _ = asyncio.run(latency_for(server.base + path, seconds))
        done.append(Round(busy, idle, note))
    return done


def reload_rounds(
    server: Server, path: str, rewrite: Callable[[int], None], rounds: int, seconds: float
) -> list[Round]:
    """`rounds` reloads of `server`, each probed after `seconds` of an idle probe; `rewrite(n)`
    writes the catalog the n-th reads."""
    done = []
    for n in range(rounds):
        rewrite(n)
        server.wait_quiet()
        probe = asyncio.run(latency_during_reload(server, server.base + path, seconds))
        done.append(Round(probe.busy, probe.idle, f"reload logged after {probe.reload:.1f} s"))
    return done


def _answering(server: Server, path: str, until: float = 600.0) -> None:
    """Once `path` answers 200: the probe measures a catch-up, not a start."""
    deadline = time.perf_counter() + until
    with httpx.Client(base_url=server.base, timeout=30) as client:
        while True:
            try:
                if client.get(path).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if server.process.poll() is not None:
                raise RuntimeError(f"the server exited; see {server.log}")
            if time.perf_counter() > deadline:
                raise TimeoutError(f"{path} did not answer 200; see {server.log}")
            time.sleep(0.05)


def rows(label: str, done: list[Round], say: Callable[[str], None]) -> None:
    """Each round's p99 and max against its idle window, then their medians and ranges."""
    say(f"{label}: busy / idle, each round (ms: p99 busy, idle; max busy, idle)")
    for n, r in enumerate(done, 1):
        say(
            f"  round {n}: p99 {r.p99():.2f} ({percentile(r.busy, 0.99) * 1000:.1f},"
            f" {percentile(r.idle, 0.99) * 1000:.1f}); max {r.top():.2f}"
            f" ({max(r.busy) * 1000:.1f}, {max(r.idle) * 1000:.1f}); n {len(r.busy)}, {len(r.idle)}"
            + (f"; {r.note}" if r.note else "")
        )
    if done:
        p99s, tops = [r.p99() for r in done], [r.top() for r in done]
        say(
            f"  median p99 / idle {statistics.median(p99s):.2f} ({min(p99s):.2f}-{max(p99s):.2f};"
            f" goal <= 2), max / idle {statistics.median(tops):.2f}"
            f" ({min(tops):.2f}-{max(tops):.2f}; goal <= 5)"
        )
