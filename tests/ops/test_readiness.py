"""Readiness with a staleness bound, read at chosen moments (the clock is the `now` given)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitreg.catalog.load import load_catalog
from gitreg.modules.sync import ModuleSync
from gitreg.ops.readiness import readiness
from tests.support.gitrepo import GitRepo, module_files


def module_sync(
    tmp_path: Path, readiness_section: str = "readiness: {max_staleness: 2m}\n"
) -> ModuleSync:
    if not (tmp_path / "repo").exists():
        GitRepo(tmp_path / "repo").release("v1.0.0", module_files("1.0.0"))
    (tmp_path / "registry.yaml").write_text(
        f"cache_dir: cache\n{readiness_section}"
        "modules:\n  - {namespace: a, name: b, system: c, repo: repo}\n"
    )
    return ModuleSync(load_catalog(tmp_path / "registry.yaml"))


def synced(
    tmp_path: Path, readiness_section: str = "readiness: {max_staleness: 2m}\n"
) -> tuple[ModuleSync, float]:
    found = module_sync(tmp_path, readiness_section)
    found.refresh()
    (status,) = (found.status[location] for location in found.snapshot.clones)
    assert status.last_success is not None
    return found, status.last_success


@pytest.mark.parametrize(("age", "ready"), [(0, True), (60, True), (120, True), (121, False)])
def test_ready_until_the_last_sync_is_older_than_the_bound(
    tmp_path: Path, age: float, ready: bool
) -> None:
    found, last = synced(tmp_path)
    answer = readiness(found, now=last + age, started=last - 1000)
    assert answer.ready is ready
    assert answer.body()["max_staleness"] == 120
    if not ready:
        (outdated,) = answer.outdated
        assert outdated["repository"] == str(tmp_path / "repo")
        assert outdated["age_seconds"] == 121 and outdated["last_success"].endswith("+00:00")
        assert outdated["reason"] == "last synced 121 s ago, longer than max_staleness (120 s)"


def test_without_a_bound_an_old_sync_stays_ready(tmp_path: Path) -> None:
    found, last = synced(tmp_path, readiness_section="")
    answer = readiness(found, now=last + 10**6, started=last)
    assert answer.ready and answer.body()["max_staleness"] is None


def test_a_failing_repository_is_stale_and_its_error_is_the_reason_it_is_outdated(
    tmp_path: Path,
) -> None:
    found, last = synced(tmp_path)
    location, clone = next(iter(found.snapshot.clones.items()))
    found.status.update(location, clone.name, lambda s: s.failed("cannot reach the Git server"))
    early = readiness(found, now=last + 60, started=last)
    assert early.ready and early.stale == [
        {"repository": str(location), "last_error": "cannot reach the Git server"}
    ]
    late = readiness(found, now=last + 600, started=last)
    assert not late.ready
    assert late.outdated[0]["reason"].endswith("; last error: cannot reach the Git server")


def test_a_repository_served_from_its_clone_but_never_synced_ages_from_the_start(
    tmp_path: Path,
) -> None:
    synced(tmp_path)  # a clone with tags, then its sync history lost
    for status in (tmp_path / "cache" / "state").glob("*.json"):
        status.unlink()
    found = module_sync(tmp_path)
    found.read_clones()
    assert readiness(found, now=1060.0, started=1000.0).ready
    late = readiness(found, now=1200.0, started=1000.0)
    assert not late.ready and not late.waiting
    (outdated,) = late.outdated
    assert outdated["last_success"] is None
    assert outdated["reason"].startswith("not synced since the start, 200 s ago")


def test_a_repository_never_fetched_and_without_a_clone_is_waiting(tmp_path: Path) -> None:
    found = module_sync(tmp_path)
    found.read_clones()
    answer = readiness(found, now=1.0, started=0.0)
    assert not answer.ready and answer.waiting and not answer.outdated


def test_the_public_answer_has_counts_and_codes_but_no_repository_or_error(
    tmp_path: Path,
) -> None:
    """What anyone gets with auth:, while a repository fails and is outdated."""
    found, last = synced(tmp_path)
    location, clone = next(iter(found.snapshot.clones.items()))
    found.status.update(location, clone.name, lambda s: s.failed("fatal: cannot reach it"))
    answer = readiness(found, now=last + 600, started=last)
    body = answer.public_body()
    assert body["ready"] is False and (body["stale"], body["outdated"]) == (1, 1)
    assert body["reasons"] == ["older_than_max_staleness", "git_server_failing"]
    assert str(location) not in str(body) and "fatal" not in str(body)
    assert "repo" not in str(body)
