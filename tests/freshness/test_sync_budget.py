"""A sync's and a poll's own CPU (around the git they wait for) counts in the process's CPU budget:
while requests arrive, the thread that ran one rests before it takes the next."""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitreg.freshness.poller import Poller
from gitreg.freshness.sync_queue import SyncQueue
from gitreg.modules.sync import ModuleSync
from gitreg.process.cpu_budget import CpuBudget
from tests.conftest import WriteCatalog
from tests.support.clock import Clock
from tests.support.gitrepo import GitRepo, module_files
from tests.support.pacing import busy_budget, installed


@pytest.fixture
def sync(write_catalog: WriteCatalog, tmp_path: Path) -> ModuleSync:
    repo = GitRepo(tmp_path / "r")
    repo.release("v1.0.0", module_files("1.0.0"))
    catalog = f"refresh_interval: 60s\nmodules:\n  - {{namespace: a, name: m, system: x, repo: {repo.path}}}\n"
    return ModuleSync(write_catalog(catalog))


@pytest.fixture
def rested() -> list[str]:
    """The names of the threads that rested, in order."""
    return []


@pytest.fixture
def budget(rested: list[str]) -> Iterator[CpuBudget]:
    """A busy budget, installed, whose rests record the thread that took them."""
    busy = busy_budget(lambda _: rested.append(threading.current_thread().name))
    with installed(busy):
        yield busy


def test_a_sync_rests_on_its_own_thread_while_requests_arrive(
    sync: ModuleSync, budget: CpuBudget, rested: list[str]
) -> None:
    async def queued() -> bool:
        queue = SyncQueue(sync, budget=budget)
        try:
            return await queue.request(next(iter(sync.snapshot.clones)), "startup")
        finally:
            queue.close()

    assert asyncio.run(queued())
    assert any(name.startswith("gitreg-git") for name in rested), rested


def test_a_poll_rests_on_its_own_thread_while_requests_arrive(
    sync: ModuleSync, budget: CpuBudget, rested: list[str]
) -> None:
    sync.refresh()
    rested.clear()  # the poll's are the ones looked at
    clock = Clock()
    poller = Poller(sync, clock, random.Random(2), budget=budget)
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
