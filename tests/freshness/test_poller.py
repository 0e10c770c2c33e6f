"""The poller's schedule: spread, jitter and backoff, with a fake clock and a real registry."""

from __future__ import annotations

import asyncio
import random
import re
from collections import Counter
from pathlib import Path

from gitreg.freshness.poller import JITTER, Poller
from gitreg.modules.sync import ModuleSync
from tests.conftest import WriteCatalog
from tests.support.clock import Clock
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import daemon_requests, free_port, git_daemon, wait_until


def _modules(tmp_path: Path, count: int) -> list[str]:
    """registry.yaml's lines for `count` modules, each in a repository of its own."""
    lines = []
    for n in range(count):
        repo = GitRepo(tmp_path / f"r{n}")
        repo.commit("empty")
        lines.append(f"  - {{namespace: a, name: m{n}, system: x, repo: {repo.path}}}\n")
    return lines


def test_first_round_is_spread_over_the_interval(
    write_catalog: WriteCatalog, tmp_path: Path
) -> None:
    lines = _modules(tmp_path, 50)
    sync = ModuleSync(write_catalog("refresh_interval: 60s\nmodules:\n" + "".join(lines)))
    clock = Clock()
    poller = Poller(sync, clock, random.Random(7))
    poller.schedule()
    offsets = sorted(due - clock.now for due in poller.due.values())
    assert len(offsets) == 50 and offsets[0] >= 0 and offsets[-1] < 60
    assert offsets[-1] - offsets[0] > 30  # spread, not all at once


def test_backoff_doubles_up_to_the_limit_and_resets(
    write_catalog: WriteCatalog, tmp_path: Path
) -> None:
    unreachable = f"http://127.0.0.1:{free_port()}/repo.git"
    sync = ModuleSync(
        write_catalog(
            f"refresh_interval: 10s\nmax_backoff: 60s\nfetch_timeout: 5s\nmodules:\n"
            f"  - {{namespace: a, name: m, system: x, repo: '{unreachable}'}}\n"
        )
    )
    clock = Clock()
    poller = Poller(sync, clock, random.Random(1))
    poller.schedule()
    location = next(iter(sync.snapshot.clones))
    delays = []
    for _ in range(5):
        poller.poll(location)
        delays.append(poller.due[location] - clock.now)
    for delay, expected in zip(delays, [20, 40, 60, 60, 60], strict=True):  # 10s doubled, up to 60s
        assert expected * (1 - JITTER) <= delay <= expected * (1 + JITTER), delays
    assert poller.failures[location] == 5
    assert sync.status[location].last_error


def test_a_poll_without_change_does_not_fetch(write_catalog: WriteCatalog, tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.release("v1.0.0", module_files("1.0.0"))
    sync = ModuleSync(
        write_catalog(f"modules:\n  - {{namespace: a, name: m, system: x, repo: {repo.path}}}\n")
    )
    sync.refresh()
    location = next(iter(sync.snapshot.clones))
    fetch_head = sync.snapshot.clones[location].path / "FETCH_HEAD"
    packs = sorted((sync.snapshot.clones[location].path / "objects").rglob("*"))
    assert sync.poll_repo(location) is False  # listed, compared, nothing fetched
    assert sorted((sync.snapshot.clones[location].path / "objects").rglob("*")) == packs
    assert not fetch_head.exists()
    repo.release("v1.1.0", module_files("1.1.0"))
    assert sync.poll_repo(location) is True
    entry = sync.snapshot.index.get("a", "m", "x")
    assert entry and entry.versions.releases[0].version == "1.1.0"


def test_a_polling_round_asks_each_repository_once(
    write_catalog: WriteCatalog, tmp_path: Path
) -> None:
    served, log = tmp_path / "served", tmp_path / "daemon.log"
    for n in range(6):
        repo = GitRepo(served / f"r{n}")
        repo.release("v1.0.0", module_files("1.0.0"))
    with git_daemon(served, log) as base:
        lines = [
            f"  - {{namespace: a, name: m{n}, system: x, repo: '{base}/r{n}'}}\n" for n in range(6)
        ]
        sync = ModuleSync(write_catalog("refresh_interval: 60s\nmodules:\n" + "".join(lines)))
        sync.refresh()
        asked = daemon_requests(log)
        clock = Clock()
        poller = Poller(sync, clock, random.Random(3))
        poller.schedule()  # the first round spread over the next 60 s

        async def rounds() -> list[int]:
            task = asyncio.create_task(poller.run())
            per_round = []
            for _ in range(2):
                clock.now += 66.0  # every repository due (60 s + 10% at most), once
                done = poller.rounds + 6
                # The clock stands still meanwhile: a repository polled is due a round later.
                for _ in range(600):
                    if poller.rounds >= done:
                        break
                    await asyncio.sleep(0.05)
                await asyncio.sleep(0.2)  # a loop of run's more: nothing more is due
                per_round.append(poller.rounds)
            task.cancel()
            return per_round

        assert asyncio.run(rounds()) == [6, 12]
        assert Counter(loc for _, _, loc in poller._queue) == Counter(set(poller.due))  # each once
        wait_until(lambda: daemon_requests(log) >= asked + 12)
        polled = re.findall(r"Request upload-pack for '/?(r\d)'", log.read_text())
        assert Counter(polled[-12:]) == {f"r{n}": 2 for n in range(6)}
        assert daemon_requests(log) == asked + 12


def test_a_new_catalog_s_repositories_are_scheduled_and_removed_ones_dropped(
    write_catalog: WriteCatalog, tmp_path: Path
) -> None:
    repos = _modules(tmp_path, 3)
    sync = ModuleSync(write_catalog("refresh_interval: 60s\nmodules:\n" + "".join(repos[:2])))
    clock = Clock()
    poller = Poller(sync, clock, random.Random(5))
    poller.schedule()
    first = dict(poller.due)
    clock.now += 10.0
    poller.schedule()  # the same repositories: nothing moves
    assert poller.due == first
    sync.apply_catalog(write_catalog("refresh_interval: 60s\nmodules:\n" + "".join(repos[1:])))
    poller.schedule()
    kept = next(loc for loc in first if loc in poller.due)
    assert len(poller.due) == 2 and poller.due[kept] == first[kept]
    added = next(loc for loc in poller.due if loc not in first)
    assert clock.now <= poller.due[added] < clock.now + 60  # spread over the next interval
