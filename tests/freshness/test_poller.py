"""The poller's schedule: spread, jitter and backoff, with a fake clock and a real registry."""

from __future__ import annotations

import random
from pathlib import Path

from gitreg.freshness.poller import JITTER, Poller
from gitreg.modules.sync import Registry
from tests.conftest import WriteCatalog
from tests.support.clock import Clock
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import free_port


def test_first_round_is_spread_over_the_interval(
    write_catalog: WriteCatalog, tmp_path: Path
) -> None:
    lines = []
    for n in range(50):
        repo = GitRepo(tmp_path / f"r{n}")
        repo.commit("empty")
        lines.append(f"  - {{namespace: a, name: m{n}, system: x, repo: {repo.path}}}\n")
    registry = Registry(write_catalog("refresh_interval: 60s\nmodules:\n" + "".join(lines)))
    clock = Clock()
    poller = Poller(registry, clock, random.Random(7))
    poller.schedule()
    offsets = sorted(due - clock.now for due in poller.due.values())
    assert len(offsets) == 50 and offsets[0] >= 0 and offsets[-1] < 60
    assert offsets[-1] - offsets[0] > 30  # spread, not all at once


def test_backoff_doubles_up_to_the_limit_and_resets(
    write_catalog: WriteCatalog, tmp_path: Path
) -> None:
    unreachable = f"http://127.0.0.1:{free_port()}/repo.git"
    registry = Registry(
        write_catalog(
            f"refresh_interval: 10s\nmax_backoff: 60s\nfetch_timeout: 5s\nmodules:\n"
            f"  - {{namespace: a, name: m, system: x, repo: '{unreachable}'}}\n"
        )
    )
    clock = Clock()
    poller = Poller(registry, clock, random.Random(1))
    poller.schedule()
    location = next(iter(registry.snapshot.clones))
    delays = []
    for _ in range(5):
        poller.poll(location)
        delays.append(poller.due[location] - clock.now)
    for delay, expected in zip(delays, [20, 40, 60, 60, 60], strict=True):  # 10s doubled, up to 60s
        assert expected * (1 - JITTER) <= delay <= expected * (1 + JITTER), delays
    assert poller.failures[location] == 5
    assert registry.status[location].last_error


def test_a_poll_without_change_does_not_fetch(write_catalog: WriteCatalog, tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.release("v1.0.0", module_files("1.0.0"))
    registry = Registry(
        write_catalog(f"modules:\n  - {{namespace: a, name: m, system: x, repo: {repo.path}}}\n")
    )
    registry.refresh()
    location = next(iter(registry.snapshot.clones))
    fetch_head = registry.snapshot.clones[location].path / "FETCH_HEAD"
    packs = sorted((registry.snapshot.clones[location].path / "objects").rglob("*"))
    assert registry.poll_repo(location) is False  # listed, compared, nothing fetched
    assert sorted((registry.snapshot.clones[location].path / "objects").rglob("*")) == packs
    assert not fetch_head.exists()
    repo.release("v1.1.0", module_files("1.1.0"))
    assert registry.poll_repo(location) is True
    entry = registry.snapshot.index.get("a", "m", "x")
    assert entry and entry.versions.releases[0].version == "1.1.0"
