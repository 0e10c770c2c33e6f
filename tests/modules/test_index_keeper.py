"""The persisted index pairs each repository's entries with the refs and ledger they were read
from, and only while the snapshot serves them: a read noted but not swapped in yet is not
written, so a line never vouches for entries its refs did not give."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from gitreg.catalog.load import load_catalog
from gitreg.git.clone import BareClone, TagRef
from gitreg.modules import index_keeper
from gitreg.modules.index_keeper import IndexKeeper
from gitreg.modules.persisted import ReadFrom, decode
from gitreg.modules.resolve import Release
from gitreg.modules.sync import ModuleSync
from tests.support.gitrepo import GitRepo, module_files
from tests.support.pacing import Recording, installed


def _synced(tmp_path: Path) -> tuple[ModuleSync, IndexKeeper]:
    repo = GitRepo(tmp_path / "r")
    repo.release("v1.0.0", module_files("1.0.0"))
    repo.release("v1.1.0", module_files("1.1.0"), annotated=True)
    repo.release("not-a-version", module_files("x"))
    config = tmp_path / "registry.yaml"
    config.write_text(
        f"cache_dir: cache\nmodules:\n  - {{namespace: a, name: m, system: x, repo: {repo.path}}}\n"
    )
    catalog = load_catalog(config)
    keeper = IndexKeeper(catalog.cache_dir)
    sync = ModuleSync(catalog, reads=keeper)
    sync.refresh()
    return sync, keeper


def test_a_line_gives_back_what_was_served(tmp_path: Path) -> None:
    sync, keeper = _synced(tmp_path)
    assert keeper.dirty
    assert keeper.write(sync.snapshot) == 1
    assert not keeper.dirty
    snapshot = sync.snapshot
    (location,) = snapshot.clones
    line = decode(next(keeper.lines()))
    clone = snapshot.clones[location]
    assert line.read_from.refs == clone.refs_digest()
    assert line.serves(snapshot.specs[location])
    entries, tags = line.entries(snapshot.specs[location], clone.path)
    assert list(entries) == snapshot.entries_of(location)
    assert tags == snapshot.tags[location]
    assert [r.version for r in entries[0].versions.releases] == ["1.1.0", "1.0.0"]


def test_a_read_not_swapped_in_yet_is_not_written(tmp_path: Path) -> None:
    sync, keeper = _synced(tmp_path)
    snapshot = sync.snapshot
    (location,) = snapshot.clones
    (served,) = snapshot.entries_of(location)
    newer = replace(
        served.versions, releases=(Release("2.0.0", "v2.0.0", "c" * 40), *served.versions.releases)
    )
    entry = type(served)(served.spec, served.clone_path, newer, served.changes)
    keeper.noted(location, ReadFrom("other refs", "a ledger"), snapshot.tags[location], [entry])
    assert keeper.write(snapshot) == 0  # the snapshot still serves the older read
    assert keeper.dirty  # tried again at the next write
    assert list(keeper.lines()) == []


def test_a_line_still_true_is_taken_from_the_file_not_encoded_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sync, keeper = _synced(tmp_path)
    keeper.write(sync.snapshot)
    before = keeper.path.read_bytes()

    def no_encoding(*args: object) -> str:
        raise AssertionError("encoded again")

    monkeypatch.setattr(index_keeper, "encode", no_encoding)
    keeper.dirty = True  # as after another repository's read
    assert keeper.write(sync.snapshot) == 1
    assert keeper.path.read_bytes() == before


def test_a_write_while_a_start_reads_keeps_the_lines_it_has_not_read(tmp_path: Path) -> None:
    sync, keeper = _synced(tmp_path)
    keeper.write(sync.snapshot)
    before = keeper.path.read_bytes()
    catalog = sync.snapshot.catalog
    starting = IndexKeeper(catalog.cache_dir)
    unread = ModuleSync(catalog, reads=starting).snapshot  # every repository listed, none read
    starting.dirty = True  # another repository's read, say; or the server stops now
    assert starting.write(unread) == 1
    assert starting.path.read_bytes() == before


def test_a_clone_read_from_the_same_refs_and_ledger_is_not_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sync, _ = _synced(tmp_path)
    (location,) = sync.snapshot.clones
    reads: list[object] = []
    tags = BareClone.tags

    def counted(clone: BareClone) -> list[TagRef]:
        reads.append(clone)
        return tags(clone)

    monkeypatch.setattr(BareClone, "tags", counted)
    assert sync.sync_repo(location, "poll")  # fetched: nothing new
    assert reads == []
    GitRepo.existing(tmp_path / "r").release("v1.2.0", module_files("1.2.0"))
    assert sync.sync_repo(location, "poll")
    assert len(reads) == 1  # its refs moved: read
    versions = sync.snapshot.entries_of(location)[0].versions.releases
    assert [r.version for r in versions] == ["1.2.0", "1.1.0", "1.0.0"]


def test_a_write_breathes_at_each_entry_and_repository(tmp_path: Path) -> None:
    """The server writes the index as paced work (`pacing.paced`): the write offers a rest
    at each entry, each repository and each line of the old file, where pacing can take it."""
    sync, keeper = _synced(tmp_path)
    keeper.write(sync.snapshot)  # an old file, whose lines the next write reads
    sync.refresh()
    pacer = Recording()
    keeper.dirty = True
    with installed(pacer):
        keeper.write(sync.snapshot)
    entries, repositories, lines = len(sync.snapshot.index), 1, 1
    assert pacer.breaths == entries + repositories + lines
