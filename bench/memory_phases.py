"""A server's resident memory in each phase of its life, at `bench.scale`'s shape: from its
start to every clone read, the start-up fetch, the docs warming (every module's docs written to
`cache_dir/docs/`), the dependents rebuild and settling until quiet, then a steady state. The
peak RSS sampled in each phase, and VmHWM at its end. By default the docs cache and the
persisted index are emptied first, the clones kept (a start after `bench.scale` made them: the
docs of every module built from nothing); `--keep-docs` measures the start that finds them, and
`--empty-cache` a `cache_dir` with nothing at all (a new pod: the start-up fetch clones all).

    python -m bench.memory_phases [--repos 1000] [--versions 50] [--workdir DIR] [--tree PATH]
        [--keep-docs | --empty-cache] [--steady 10]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path


def _docs_written(root: Path) -> int:
    """How many docs files the cache holds (one per module once warmed)."""
    try:
        clones = list(os.scandir(root))
    except FileNotFoundError:
        return 0
    return sum(len(os.listdir(c.path)) for c in clones if c.is_dir())


class Sampler:
    """VmRSS every `every` seconds on a thread: the peak of each named phase."""

    def __init__(self, rss: object, every: float = 0.1) -> None:
        self._rss = rss
        self._every = every
        self.phase = "start"
        self.peaks: dict[str, float] = {}
        self.ends: dict[str, tuple[float, float]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                now, _ = self._rss()  # type: ignore[operator]
            except (OSError, KeyError):
                return
            phase = self.phase
            self.peaks[phase] = max(self.peaks.get(phase, 0.0), now)
            time.sleep(self._every)

    def next(self, phase: str, spawned: float) -> None:
        """The current phase is over: its end's time and VmHWM kept; `phase` begins."""
        _, peak = self._rss()  # type: ignore[operator]
        self.ends[self.phase] = (time.perf_counter() - spawned, peak)
        self.phase = phase

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repos", type=int, default=1000, help="10 modules each")
    parser.add_argument("--versions", type=int, default=50)
    parser.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "gitreg-bench-memory"
    )
    parser.add_argument("--tree", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--keep-docs", action="store_true", help="start with the docs cached")
    parser.add_argument("--empty-cache", action="store_true", help="start with no clones either")
    parser.add_argument("--steady", type=float, default=10.0, help="seconds of steady state")
    args = parser.parse_args()
    tree = args.tree.resolve()
    sys.path.insert(0, str(tree))

    from bench.harness import git_daemon
    from bench.scale.repos import Shape, daemon_port, generate, warm, write_catalog
    from bench.scale.server import CLONES_READ, STARTUP_FETCH, serving

    shape = Shape(args.repos, 10, args.versions)
    modules = shape.repos * shape.modules
    workdir = args.workdir.resolve() / shape.name
    workdir.mkdir(parents=True, exist_ok=True)
    made = generate(workdir / "served", shape)
    if made is not None:
        print(f"repositories made in {made:.0f} s", flush=True)
    with git_daemon(workdir / "served", daemon_port(workdir)) as base:
        name = "empty.yaml" if args.empty_cache else "big.yaml"
        config = write_catalog(workdir / name, base, shape, shape.repos)
        cache = workdir / f"cache-{config.stem}"
        if args.empty_cache:
            shutil.rmtree(cache, ignore_errors=True)
        elif (cloned := warm(config)) is not None:
            print(f"cloned in {cloned:.0f} s", flush=True)
        (cache / "index.jsonl").unlink(missing_ok=True)
        if not args.keep_docs:
            shutil.rmtree(cache / "docs", ignore_errors=True)
        docs = cache / "docs"
        state = "empty, no clones" if args.empty_cache else "kept" if args.keep_docs else "empty"
        print(f"{modules} modules x {shape.versions} versions, docs cache {state}", flush=True)
        with serving(config, workdir / "server.log", tree) as server:
            sampler = Sampler(server.rss_mb)
            server.wait_logged(CLONES_READ)
            sampler.next("start-up fetch", server.spawned)
            server.wait_logged(STARTUP_FETCH)
            sampler.next("docs warming", server.spawned)
            if not args.keep_docs:
                while _docs_written(docs) < modules:
                    if server.process.poll() is not None:
                        raise SystemExit(f"the server exited; see {server.log}")
                    time.sleep(0.5)
            sampler.next("dependents, until quiet", server.spawned)
            server.wait_quiet()
            sampler.next("steady", server.spawned)
            time.sleep(args.steady)
            sampler.next("end", server.spawned)
            sampler.stop()
    print(f"{'phase':<28}{'ends at, s':>12}{'peak RSS, MB':>14}{'VmHWM, MB':>12}")
    for phase, (at, hwm) in sampler.ends.items():
        if phase != "end":
            peak = sampler.peaks.get(phase, 0.0)
            print(f"{phase:<28}{at:>12.1f}{peak:>14.0f}{hwm:>12.0f}")


if __name__ == "__main__":
    main()
