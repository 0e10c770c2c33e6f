"""A reload's own work (registry.yaml read and checked, specs shared with the catalog served) is
paced background work: while requests arrive it rests as it goes, with the cyclic collector off,
and it serves the very catalog an unpaced read gives."""

from __future__ import annotations

import asyncio
import gc
from functools import partial
from pathlib import Path

from gitreg.catalog.load import load_catalog
from gitreg.freshness.catalog_file import read_again
from gitreg.pacing import paced
from gitreg.process.cpu_budget import CpuBudget
from tests.support.pacing import busy_budget, installed


def _catalog(path: Path, modules: int) -> Path:
    lines = ["cache_dir: cache", "modules:"]
    lines += [
        f"  - {{namespace: big, name: m{n}, system: generic, repo: 'git://127.0.0.1/r{n // 10}.git',"
        f" path: mod{n % 10}, tags: 'mod{n % 10}/v{{version}}'}}"
        for n in range(modules)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_reload_while_requests_arrive_rests_and_serves_the_same_catalog(
    tmp_path: Path,
) -> None:
    config = _catalog(tmp_path / "registry.yaml", 3000)
    served = load_catalog(config)
    _catalog(config, 3001)  # one module more
    rests: list[float] = []
    with installed(busy_budget(rests.append)):  # recorded, not slept
        reloaded = asyncio.run(paced(partial(read_again, served)))  # as LiveCatalog.reload reads
    assert rests, "3,000 modules read and checked without one rest"
    assert reloaded.modules == load_catalog(config).modules
    # The specs it kept are the ones served (one copy of each, not two).
    assert all(a is b for a, b in zip(reloaded.modules, served.modules, strict=False))


def test_paced_work_runs_off_the_loop_with_the_collector_off() -> None:
    assert gc.isenabled()
    with installed(CpuBudget()):
        assert asyncio.run(paced(gc.isenabled)) is False
    assert gc.isenabled()
