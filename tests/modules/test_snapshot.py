"""The registry's state is one immutable snapshot, swapped whole: by a sync that changes what
is served, by a catalog reload; a poll that finds nothing new only moves the status beside it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from gitreg.modules.snapshot import RegistrySnapshot
from gitreg.modules.sync import ModuleSync
from gitreg.tags import TagTemplate
from tests.conftest import WriteCatalog
from tests.support.gitrepo import GitRepo, module_files


def _repo(path: Path, *tags: str) -> GitRepo:
    repo = GitRepo(path)
    for tag in tags:
        repo.release(tag, module_files(tag))
    return repo


def _module(name: str, repo: GitRepo, extra: str = "") -> str:
    return f"  - {{namespace: a, name: {name}, system: x, repo: {repo.path}{extra}}}\n"


def test_a_poll_that_finds_nothing_new_keeps_the_snapshot(
    tmp_path: Path, write_catalog: WriteCatalog
) -> None:
    repo = _repo(tmp_path / "r", "v1.0.0")
    sync = ModuleSync(write_catalog("modules:\n" + _module("m", repo)))
    sync.refresh()
    before = sync.snapshot
    location = next(iter(before.clones))
    assert sync.poll_repo(location) is False
    assert sync.snapshot is before  # nothing served changed: nothing was copied
    assert sync.sync_counts[("poll", "unchanged")] == 1
    assert sync.status[location].last_error is None
    assert sync.status[location].mechanism == "startup"  # what last changed the versions


def test_a_new_tag_swaps_in_a_new_snapshot_and_leaves_the_old_one_whole(
    tmp_path: Path, write_catalog: WriteCatalog
) -> None:
    repo = _repo(tmp_path / "r", "v1.0.0")
    sync = ModuleSync(write_catalog("modules:\n" + _module("m", repo)))
    sync.refresh()
    before = sync.snapshot
    location = next(iter(before.clones))
    repo.release("v1.1.0", module_files("1.1.0"))
    assert sync.poll_repo(location) is True
    after = sync.snapshot
    assert after is not before
    assert after.catalog is before.catalog and after.clones is before.clones
    old, new = before.index.get("a", "m", "x"), after.index.get("a", "m", "x")
    assert old and [r.version for r in old.versions.releases] == ["1.0.0"]
    assert new and [r.version for r in new.versions.releases] == ["1.1.0", "1.0.0"]
    assert [t.name for t in before.tags[location]] == ["v1.0.0"]
    assert [t.name for t in sync.tags_of(location)] == ["v1.0.0", "v1.1.0"]


def test_a_reload_swaps_the_catalog_and_the_index_together(
    tmp_path: Path, write_catalog: WriteCatalog
) -> None:
    kept, dropped, added = (_repo(tmp_path / n, "v1.0.0") for n in ("kept", "dropped", "added"))
    sync = ModuleSync(
        write_catalog("modules:\n" + _module("kept", kept) + _module("dropped", dropped))
    )
    sync.refresh()
    before = sync.snapshot
    catalog = write_catalog("modules:\n" + _module("kept", kept) + _module("added", added))
    sync.apply_catalog(catalog)
    after = sync.snapshot
    assert after.catalog is catalog
    assert sorted(k[1] for k, _ in after.index.items()) == ["added", "kept"]
    assert sorted(loc.url for loc in after.clones) == sorted([str(kept.path), str(added.path)])
    dropped_location = next(loc for loc in before.clones if loc.url == str(dropped.path))
    assert sync.status[dropped_location].last_success is None  # forgotten with it
    # the snapshot served before is untouched: a request still holding it sees the old world
    assert before.index.get("a", "dropped", "x") is not None
    assert before.index.get("a", "added", "x") is None


def test_a_module_stays_served_across_a_reload_until_its_repository_is_read_again(
    tmp_path: Path, write_catalog: WriteCatalog
) -> None:
    repo = _repo(tmp_path / "r", "v1.0.0", "release-2.0.0")
    sync = ModuleSync(write_catalog("modules:\n" + _module("m", repo)))
    sync.refresh()
    before = sync.snapshot
    catalog = write_catalog("modules:\n" + _module("m", repo, ", tags: 'release-{version}'"))
    staged = RegistrySnapshot.serving(catalog, before)
    entry = staged.index.get("a", "m", "x")
    assert entry and [r.version for r in entry.versions.releases] == ["1.0.0"]  # not a 404
    sync.apply_catalog(catalog)
    entry = sync.snapshot.index.get("a", "m", "x")
    assert entry and [r.version for r in entry.versions.releases] == ["2.0.0"]


def test_a_read_made_for_an_older_catalog_is_not_served(
    tmp_path: Path, write_catalog: WriteCatalog
) -> None:
    repo = _repo(tmp_path / "r", "v1.0.0")
    sync = ModuleSync(write_catalog("modules:\n" + _module("m", repo)))
    sync.refresh()
    snapshot = sync.snapshot
    location = next(iter(snapshot.clones))
    served = snapshot.index.get("a", "m", "x")
    assert served is not None
    other = dataclasses.replace(served.spec, tags=(TagTemplate.parse("x{version}"),))
    stale = dataclasses.replace(served, spec=other)  # as if read under another catalog
    swapped = snapshot.with_repository(location, [stale], snapshot.tags[location])
    assert swapped.index.get("a", "m", "x") is served


def test_a_kept_entry_takes_the_new_archive_scope_at_once(
    tmp_path: Path, write_catalog: WriteCatalog
) -> None:
    """An auth: section that narrows a module's archive applies to the entry a reload keeps,
    before its repository is read again: its download never points at the whole repository."""
    repo = GitRepo(tmp_path / "mono")
    repo.write(module_files("b", "modules/b"))
    repo.release("v1.0.0", module_files("a", "modules/a"))
    modules = (
        f"modules:\n  - {{namespace: open, name: a, system: x, repo: {repo.path}, path: modules/a}}\n"
        f"  - {{namespace: secret, name: b, system: x, repo: {repo.path}, path: modules/b}}\n"
    )
    sync = ModuleSync(write_catalog(modules))
    sync.refresh()
    entry = sync.snapshot.index.get("open", "a", "x")
    assert entry is not None
    release = entry.versions.releases[0]
    assert entry.location(release).endswith(f"/{release.commit}.tar.gz//modules/a")
    narrowing = write_catalog(modules + "auth: {public: [open]}\n")
    snapshot = RegistrySnapshot.serving(narrowing, sync.snapshot)
    kept = snapshot.index.get("open", "a", "x")
    assert kept is not None and kept.versions == entry.versions
    assert kept.spec == narrowing.modules[0] and kept.spec.archive == "folder"
    assert "//" not in kept.location(release)


def test_a_repositorys_entries_are_those_of_its_modules(
    tmp_path: Path, write_catalog: WriteCatalog
) -> None:
    """`entries_of` looks each of the repository's modules up (no scan of the index): the
    same entries a scan finds, for each repository of a catalog that interleaves them."""
    one, two = _repo(tmp_path / "one", "v1.0.0"), _repo(tmp_path / "two", "v2.0.0")
    modules = "".join(_module(f"m{n}", repo) for n, repo in enumerate([one, two, one, two, one]))
    sync = ModuleSync(write_catalog("modules:\n" + modules))
    sync.refresh()
    snapshot = sync.snapshot
    for location in snapshot.clones:
        scanned = [e for e in snapshot.index.entries() if e.spec.repo == location]
        assert sorted(e.spec.address.key for e in snapshot.entries_of(location)) == sorted(
            e.spec.address.key for e in scanned
        )
        assert all(any(e is s for s in scanned) for e in snapshot.entries_of(location))
    assert sorted(len(snapshot.entries_of(loc)) for loc in snapshot.clones) == [2, 3]
