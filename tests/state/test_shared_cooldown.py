"""Replicas sharing the ledger in PostgreSQL agree on a version's cooldown: its age counts from
when the first of them saw the tag, and once one publishes it, every one serves it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gitreg.catalog.load import load_catalog
from gitreg.modules.sync import ModuleSync
from gitreg.state.configured import open_state
from tests.support.clock import Clock
from tests.support.gitrepo import GitRepo, module_files

T = 1_800_000_000.0
HOUR = 3600.0


@pytest.fixture
def replicas(
    tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[ModuleSync, ModuleSync]]:
    monkeypatch.setenv("GITREG_TEST_DSN", database_url)
    repo = GitRepo(tmp_path / "vpc")
    repo.release("v1.0.0", module_files("1.0.0"))  # lightweight: its age is the ledger's
    made = []
    for name in ("one", "two"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "registry.yaml").write_text(
            "cache_dir: cache\nstate:\n  postgres: {dsn_env: GITREG_TEST_DSN}\n"
            f"modules:\n  - {{namespace: a, name: m, system: x, repo: '{repo.path}',\n"
            "     publish_when: {min_age: 2h}}\n"
        )
        catalog = load_catalog(folder / "registry.yaml")
        made.append(ModuleSync(catalog, open_state(catalog)))
    yield made[0], made[1]
    for sync in made:
        sync.shared.close()


def _state(sync: ModuleSync) -> tuple[list[str], list[float]]:
    entry = sync.snapshot.index.get("a", "m", "x")
    assert entry is not None
    return [r.version for r in entry.versions.releases], [p.due for p in entry.pending]


def test_replicas_count_from_the_first_sight_and_follow_a_publication(
    replicas: tuple[ModuleSync, ModuleSync],
) -> None:
    one, two = replicas
    one.clock, two.clock = Clock(T), Clock(T + HOUR)
    one.refresh()
    two.refresh()  # an hour later: the tag's age is still the first sight's
    assert _state(one) == _state(two) == ([], [T + 2 * HOUR])
    one.clock = Clock(T + 2 * HOUR)
    one.refresh()
    assert _state(one) == (["1.0.0"], [])
    two.refresh()  # its own clock says an hour to go; the shared ledger says published
    assert _state(two) == (["1.0.0"], [])
