"""A reload reads only what it changes: a repository whose modules are the same keeps its entries
untouched (no Git read at all), one whose modules changed is read again from its clone, and a new
one is read from its clone, or listed unread (503) until its fetch."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitreg.git.clone import BareClone, TagRef
from gitreg.modules.sync import ModuleSync
from tests.conftest import WriteCatalog
from tests.support.gitrepo import GitRepo, module_files


def _module(name: str, repo: Path, extra: str = "") -> str:
    return f"  - {{namespace: a, name: {name}, system: x, repo: {repo}{extra}}}\n"


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """How many times each repository's clone had its tags read (every read of a clone does)."""
    counted: Counter[str] = Counter()
    tags = BareClone.tags

    def counting(clone: BareClone) -> list[TagRef]:
        counted[Path(clone.location.url).name] += 1
        return tags(clone)

    monkeypatch.setattr(BareClone, "tags", counting)
    yield counted


def test_a_reload_reads_the_repositories_it_changes_and_no_other(
    tmp_path: Path, write_catalog: WriteCatalog, reads: Counter[str]
) -> None:
    for name in ("kept1", "kept2", "edited", "added"):
        GitRepo(tmp_path / name).release("v1.0.0", module_files(name))
    kept = _module("k1", tmp_path / "kept1") + _module("k2", tmp_path / "kept2")
    sync = ModuleSync(write_catalog("modules:\n" + kept + _module("e", tmp_path / "edited")))
    sync.refresh()
    untouched = sync.snapshot.index.get("a", "k1", "x")
    reads.clear()

    catalog = write_catalog(
        "modules:\n"
        + kept
        + _module("e", tmp_path / "edited", ", tags: 'release-{version}'")
        + _module("n", tmp_path / "added")
    )
    next_catalog = sync.prepare(catalog)
    # Read before the swap: the edited repository (its clone only) and nothing else; the new
    # one has no clone yet, so it is fetched after the swap.
    assert reads == Counter({"edited": 1})
    assert [loc.url for loc in next_catalog.fetch] == [str(tmp_path / "added")]
    draft = next_catalog.draft
    assert draft.index.get("a", "k1", "x") is untouched  # carried over as it was
    edited = draft.index.get("a", "e", "x")
    assert edited and not edited.versions.releases  # no release-* tag: read under the new spec
    added = next(loc for loc in draft.clones if loc.url.endswith("added"))
    assert added in draft.unread  # listed, 503 until read: never a 404
    assert draft.index.get("a", "n", "x") is not None

    summary = sync.apply_catalog(catalog)
    assert reads == Counter({"edited": 2, "added": 1})  # prepared once more, then the fetch
    assert summary.repositories == 2
    new = sync.snapshot.index.get("a", "n", "x")
    assert new and [r.version for r in new.versions.releases] == ["1.0.0"]
    assert added not in sync.snapshot.unread
    assert sync.snapshot.index.get("a", "k2", "x") is not None


def test_a_sync_swapped_while_a_reload_was_prepared_is_kept(
    tmp_path: Path, write_catalog: WriteCatalog
) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.release("v1.0.0", module_files("1"))
    GitRepo(tmp_path / "other").release("v1.0.0", module_files("o"))
    sync = ModuleSync(write_catalog("modules:\n" + _module("m", tmp_path / "r")))
    sync.refresh()
    catalog = write_catalog(
        "modules:\n" + _module("m", tmp_path / "r") + _module("o", tmp_path / "other")
    )
    next_catalog = sync.prepare(catalog)
    repo.release("v1.1.0", module_files("2"))
    location = next(iter(sync.snapshot.clones))
    assert sync.sync_repo(location, "poll")  # swapped while the reload was prepared
    sync.cell.update(next_catalog.on)
    entry = sync.snapshot.index.get("a", "m", "x")
    assert entry and [r.version for r in entry.versions.releases] == ["1.1.0", "1.0.0"]
    assert sync.snapshot.catalog is catalog
