"""A polling round over every repository of a catalog, unchanged, against the same
`git ls-remote` calls by `xargs -P` with the same parallelism: wall and CPU (this process
and its git children), the median of ROUNDS rounds in alternation after a first one.

As in a server between its polls: the heap frozen once the clones are read (`gitreg serve`
does so at the end of its start-up; unfrozen, every collection walked the 10,000 modules read
and cost more CPU than the polls), and every clone polled once already (a clone's first poll
compares its refs whole; later ones, while unchanged, compare one digest)."""

from __future__ import annotations

import gc
import statistics
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from bench.harness import wall_and_cpu

ROUNDS = 3


@dataclass(frozen=True)
class Round:
    read: float  # seconds to read every clone in-process first (a start-up's read)
    concurrency: int
    ours: tuple[float, float]  # wall, CPU
    xargs: tuple[float, float]
    polls_failed: int
    fetched: int  # repositories the round fetched: 0 when nothing changed, as here
    ls_remote_failed: int  # calls xargs saw fail (git daemon resets a connection under load)


def polling_round(config: Path) -> Round:
    """gitreg's round is `Poller.poll` on every repository, `poll_concurrency` at a time, as
    `Poller.run` does when they are due together, after `read_clones` (as a start-up). A
    failed `git ls-remote` in the baseline is counted, not fatal: the round's figures stand,
    and the count says how far to trust them. gitreg is imported here so that `--tree`
    chooses which one."""
    from gitreg.catalog.load import load_catalog
    from gitreg.freshness.poller import Poller
    from gitreg.modules.sync import ModuleSync

    sync = ModuleSync(load_catalog(config))
    start = time.perf_counter()
    sync.read_clones()
    read = time.perf_counter() - start
    gc.freeze()
    poller = Poller(sync)
    locations = list(sync.snapshot.clones)
    concurrency = sync.snapshot.catalog.freshness.poll_concurrency

    def ours() -> None:
        with ThreadPoolExecutor(concurrency) as pool:
            list(pool.map(poller.poll, locations))

    failed_calls = 0

    def xargs() -> None:
        nonlocal failed_calls
        command = ["xargs", "-P", str(concurrency), "-n", "1", "git", "ls-remote", "--tags", "-q"]
        done = subprocess.run(
            command,
            input="\n".join(loc.url for loc in locations),
            text=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            check=False,
        )
        # xargs exits 123 when some call failed; each failed call says `fatal:` once.
        failed_calls = done.stderr.count("fatal:")
        if done.returncode not in (0, 123):
            raise RuntimeError(f"xargs exited {done.returncode}: {done.stderr[-2000:]}")

    ours()  # the first poll of each clone
    rounds = [(wall_and_cpu(xargs), wall_and_cpu(ours)) for _ in range(ROUNDS)]
    gc.unfreeze()
    baseline = _median([x for x, _ in rounds])
    timed = _median([o for _, o in rounds])
    return Round(
        read,
        concurrency,
        timed,
        baseline,
        sum(poller.failures.values()),
        sync.sync_counts[("poll", "ok")],
        failed_calls,
    )


def _median(figures: list[tuple[float, float]]) -> tuple[float, float]:
    """The median wall and the median CPU."""
    return statistics.median(w for w, _ in figures), statistics.median(c for _, c in figures)
