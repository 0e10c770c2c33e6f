"""Tags → versions, against real repositories read through the registry's own mirrors."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from gitreg.modules.sync import ModuleSync
from tests.conftest import WriteCatalog
from tests.support.gitrepo import GitRepo, git, module_files
from tests.support.servers import free_port


def _synced(write_catalog: WriteCatalog, modules: str) -> ModuleSync:
    sync = ModuleSync(write_catalog(f"modules:\n{modules}"))
    sync.refresh()
    return sync


def test_single_module_versions(tmp_path: Path, write_catalog: WriteCatalog) -> None:
    repo = GitRepo(tmp_path / "single")
    c1 = repo.release("v1.0.0", module_files("1.0.0"))
    c2 = repo.release("v1.1.0", module_files("1.1.0"), annotated=True)
    repo.tag("1.1.0")  # the same version without the v: one version, and v1.1.0 wins
    repo.tag("v1.2")  # looks like a version, is not one
    repo.tag("v9.9.9", target="HEAD^{tree}")  # a tag of a tree, not a commit
    repo.tag("nightly")
    repo.release("v2.0.0-rc.1", module_files("2.0.0-rc.1"))
    repo.release("v1.3.0+build.5", module_files("1.3.0+build.5"), annotated=True)
    sync = _synced(
        write_catalog, f"  - {{namespace: infra, name: single, system: aws, repo: {repo.path}}}\n"
    )

    entry = sync.snapshot.index.get("infra", "single", "aws")
    assert entry is not None
    assert [r.version for r in entry.versions.releases] == [
        "2.0.0-rc.1",
        "1.3.0+build.5",
        "1.1.0",
        "1.0.0",
    ]
    by_version = entry.by_version
    assert (by_version["1.0.0"].tag, by_version["1.0.0"].commit) == ("v1.0.0", c1)
    assert (by_version["1.1.0"].tag, by_version["1.1.0"].commit) == (
        "v1.1.0",
        c2,
    )  # annotated, peeled
    reasons = {i.tag: i.reason for i in entry.versions.ignored}
    assert "same version 1.1.0 as tag v1.1.0" in reasons["1.1.0"]
    assert "not a Semantic Version" in reasons["v1.2"]
    assert "not a commit" in reasons["v9.9.9"]
    assert "nightly" not in reasons and entry.versions.unmatched == 1


def test_duplicate_version_winner_is_deterministic(
    tmp_path: Path, write_catalog: WriteCatalog
) -> None:
    repo = GitRepo(tmp_path / "dup")
    first = repo.release("1.0.0", module_files("plain"))
    second = repo.release("v1.0.0", module_files("with-v"))
    modules = f"  - {{namespace: a, name: dup, system: x, repo: {repo.path}}}\n"
    for _ in range(2):
        entry = _synced(write_catalog, modules).snapshot.index.get("a", "dup", "x")
        assert entry is not None
        assert [(r.version, r.tag, r.commit) for r in entry.versions.releases] == [
            ("1.0.0", "v1.0.0", second)
        ]
    # With the templates the other way round, the other tag wins.
    swapped = modules.replace("}", ", tags: ['{version}', 'v{version}']}")
    entry = _synced(write_catalog, swapped).snapshot.index.get("a", "dup", "x")
    assert entry is not None and entry.versions.releases[0].commit == first


def test_monorepo_modules_share_one_mirror(tmp_path: Path, write_catalog: WriteCatalog) -> None:
    repo = GitRepo(tmp_path / "mono")
    repo.release("vpc/v1.0.0", {"README.md": "no module folder yet\n"})
    vpc = repo.release("vpc/v1.1.0", module_files("vpc-1.1.0", "modules/vpc"))
    dns = repo.release("dns/v0.1.0", module_files("dns-0.1.0", "modules/dns"))
    sync = _synced(
        write_catalog,
        f"""\
  - {{namespace: infra, name: vpc, system: aws, repo: {repo.path}, path: modules/vpc, tags: "vpc/v{{version}}"}}
  - {{namespace: infra, name: dns, system: aws, repo: "file://{repo.path}", path: modules/dns, tags: "dns/v{{version}}"}}
""",
    )
    assert len(sync.snapshot.clones) == 1
    vpc_entry = sync.snapshot.index.get(
        "INFRA", "Vpc", "aws"
    )  # addresses compare case-insensitively
    dns_entry = sync.snapshot.index.get("infra", "dns", "aws")
    assert vpc_entry and dns_entry
    assert [(r.version, r.commit) for r in vpc_entry.versions.releases] == [("1.1.0", vpc)]
    assert [(r.version, r.commit) for r in dns_entry.versions.releases] == [("0.1.0", dns)]
    assert [i.tag for i in vpc_entry.versions.ignored] == ["vpc/v1.0.0"]
    assert "has no folder modules/vpc" in vpc_entry.versions.ignored[0].reason


def test_refresh_swaps_in_new_tags_and_deleted_ones(
    tmp_path: Path, write_catalog: WriteCatalog
) -> None:
    repo = GitRepo(tmp_path / "live")
    repo.release("v1.0.0", module_files("1.0.0"))
    sync = _synced(
        write_catalog,
        f"  - {{namespace: a, name: live, system: x, repo: {repo.path}, deleted_tags: remove}}\n",
    )
    before = sync.snapshot.index
    repo.release("v1.1.0", module_files("1.1.0"))
    git(repo.path, "tag", "-d", "v1.0.0")
    sync.refresh()
    entry = sync.snapshot.index.get("a", "live", "x")
    assert entry and [r.version for r in entry.versions.releases] == ["1.1.0"]
    old = before.get("a", "live", "x")
    assert old and [r.version for r in old.versions.releases] == [
        "1.0.0"
    ]  # the old index is untouched


def test_vanished_repository_keeps_its_versions(
    tmp_path: Path, write_catalog: WriteCatalog
) -> None:
    repo = GitRepo(tmp_path / "flaky")
    repo.release("v1.0.0", module_files("1.0.0"))
    sync = _synced(
        write_catalog, f"  - {{namespace: a, name: flaky, system: x, repo: {repo.path}}}\n"
    )
    moved = repo.path.rename(tmp_path / "gone")
    sync.refresh()
    entry = sync.snapshot.index.get("a", "flaky", "x")
    assert entry and [r.version for r in entry.versions.releases] == ["1.0.0"]
    assert sync.status[entry.spec.repo].last_error is not None
    moved.rename(repo.path)
    sync.refresh()
    assert sync.status[entry.spec.repo].last_error is None


def test_never_fetched_repository_is_known_with_no_versions(write_catalog: WriteCatalog) -> None:
    nobody = f"http://127.0.0.1:{free_port()}/repo.git"  # nothing listens there
    sync = _synced(
        write_catalog, f"  - {{namespace: a, name: none, system: x, repo: '{nobody}'}}\n"
    )
    entry = sync.snapshot.index.get("a", "none", "x")
    assert entry is not None and entry.versions.releases == ()
    assert "fetch from" in (sync.status[entry.spec.repo].last_error or "")


def test_corrupt_mirror_affects_only_its_repository(
    tmp_path: Path, write_catalog: WriteCatalog
) -> None:
    good, bad = GitRepo(tmp_path / "good"), GitRepo(tmp_path / "bad")
    good.release("v1.0.0", module_files("1.0.0"))
    bad.release("v1.0.0", module_files("1.0.0"))
    sync = _synced(
        write_catalog,
        f"  - {{namespace: a, name: good, system: x, repo: {good.path}}}\n"
        f"  - {{namespace: a, name: bad, system: x, repo: {bad.path}}}\n",
    )
    mirror = next(m for m in sync.snapshot.clones.values() if m.location.url == str(bad.path))
    for pack in (mirror.path / "objects" / "pack").glob("*.pack"):
        pack.write_bytes(b"garbage")
    for loose in (mirror.path / "objects").glob("??/*"):
        loose.write_bytes(b"garbage")
    good.release("v1.1.0", module_files("1.1.0"))
    sync.refresh()
    good_entry, bad_entry = (
        sync.snapshot.index.get("a", "good", "x"),
        sync.snapshot.index.get("a", "bad", "x"),
    )
    assert good_entry and [r.version for r in good_entry.versions.releases] == ["1.1.0", "1.0.0"]
    assert bad_entry and [r.version for r in bad_entry.versions.releases] == [
        "1.0.0"
    ]  # kept, not lost


def test_changes_are_logged_once(
    tmp_path: Path, write_catalog: WriteCatalog, caplog: pytest.LogCaptureFixture
) -> None:
    # A start says each module's detail at DEBUG (its summary line is the caller's).
    caplog.set_level(logging.DEBUG, logger="gitreg.modules.sync")
    repo = GitRepo(tmp_path / "logged")
    repo.release("v1.0.0", module_files("1.0.0"))
    repo.tag("1.0.0")
    sync = _synced(
        write_catalog, f"  - {{namespace: a, name: logged, system: x, repo: {repo.path}}}\n"
    )
    assert "a/logged/x: 1 versions, newest 1.0.0" in caplog.text
    assert (
        "a/logged/x: ignoring tag 1.0.0: same version 1.0.0 as tag v1.0.0, which wins"
        in caplog.text
    )
    assert {r.levelno for r in caplog.records} == {logging.DEBUG}
    caplog.clear()
    repo.release("v1.1.0", module_files("1.1.0"))
    sync.refresh(mechanism="poll")
    assert caplog.messages == [
        f"a/logged/x: new version 1.1.0 (tag v1.1.0, commit {git(repo.path, 'rev-parse', 'HEAD')[:12]}; poll)"
    ]
    assert [r.levelno for r in caplog.records] == [logging.INFO]  # a change while serving


def test_versions_and_tag_names_are_one_string_each_across_repositories(
    tmp_path: Path, write_catalog: WriteCatalog
) -> None:
    """Every module of a release train has 1.2.0, every repository a `v1.2.0`: read from the
    clones, as from the persisted index, they are one string each, not one a module."""
    lines = []
    for name in ("one", "two"):
        repo = GitRepo(tmp_path / name)
        repo.release("v1.2.0", module_files("1.2.0"))
        lines.append(f"  - {{namespace: a, name: {name}, system: aws, repo: {repo.path}}}\n")
    index = _synced(write_catalog, "".join(lines)).snapshot.index
    one, two = (index.get("a", name, "aws") for name in ("one", "two"))
    assert one is not None and two is not None
    first, second = one.versions.releases[0], two.versions.releases[0]
    assert first.version == "1.2.0" and first.version is second.version
    assert first.tag == "v1.2.0" and first.tag is second.tag
