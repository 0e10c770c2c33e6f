"""A sync's and a poll's own CPU (around the git they wait for) counts in the background's share:
while requests arrive, the thread that ran one rests before it takes the next."""

from __future__ import annotations

import asyncio
import random
import threading
from pathlib import Path

import pytest

from gitreg.background_share import SHARED
from gitreg.freshness.poller import Poller
from gitreg.freshness.sync_queue import SyncQueue
from gitreg.modules.sync import ModuleSync
from tests.conftest import WriteCatalog
from tests.support.clock import Clock
from tests.support.gitrepo import GitRepo, module_files


@pytest.fixture
def sync(write_catalog: WriteCatalog, tmp_path: Path) -> ModuleSync:
    repo = GitRepo(tmp_path / "r")
    repo.release("v1.0.0", module_files("1.0.0"))
    catalog = f"refresh_interval: 60s\nmodules:\n  - {{namespace: a, name: m, system: x, repo: {repo.path}}}\n"
    return ModuleSync(write_catalog(catalog))


def _rests_by_thread(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    threads: list[str] = []
    monkeypatch.setattr(SHARED, "_sleep", lambda _: threads.append(threading.current_thread().name))
    for kept in ("_last_request", "_free_at"):  # as they were, after the test
        monkeypatch.setattr(SHARED, kept, getattr(SHARED, kept))
    SHARED.pulse()  # a request just now: the server is busy
    return threads


def test_a_sync_rests_on_its_own_thread_while_requests_arrive(
    sync: ModuleSync, monkeypatch: pytest.MonkeyPatch
) -> None:
    rested = _rests_by_thread(monkeypatch)

    async def queued() -> bool:
        queue = SyncQueue(sync)
        try:
            return await queue.request(next(iter(sync.snapshot.clones)), "startup")
        finally:
            queue.close()

    assert asyncio.run(queued())
    assert any(name.startswith("gitreg-git") for name in rested), rested


def test_a_poll_rests_on_its_own_thread_while_requests_arrive(
    sync: ModuleSync, monkeypatch: pytest.MonkeyPatch
) -> None:
    sync.refresh()
    rested = _rests_by_thread(monkeypatch)
    clock = Clock()
    poller = Poller(sync, clock, random.Random(2))
    poller.schedule()
    clock.now += 66.0  # due

    async def one_round() -> None:
        task = asyncio.create_task(poller.run())
        for _ in range(600):
            if poller.rounds:
                break
            await asyncio.sleep(0.05)
        task.cancel()

    asyncio.run(one_round())
    assert poller.rounds == 1
    assert any(name.startswith("gitreg-poll") for name in rested), rested
