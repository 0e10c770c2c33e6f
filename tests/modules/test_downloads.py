"""`git::` locations (`gitreg/modules/downloads.py`): the commit as `ref`, the folder before the
query, and none of go-getter's parameters that a commit cannot go with; after a tag moved at a
real Git server, the commit each `moved_tags` policy serves."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitreg.modules.downloads import git_location
from gitreg.modules.sync import ModuleSync
from tests.conftest import WriteCatalog
from tests.support.gitrepo import GitRepo, git, module_files
from tests.support.servers import bare_clone, git_daemon

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize(
    ("url", "folder", "expected"),
    [
        ("https://h/r.git", "", f"git::https://h/r.git?ref={COMMIT}"),
        ("https://h/r.git", "modules/vpc", f"git::https://h/r.git//modules/vpc?ref={COMMIT}"),
        ("ssh://git@h/r.git", "a", f"git::ssh://git@h/r.git//a?ref={COMMIT}"),
        ("git@h:org/r.git", "", f"git::git@h:org/r.git?ref={COMMIT}"),
        # go-getter finds `//folder` only before the query, so it goes there
        ("ssh://h/r.git?sshkey=S", "m", f"git::ssh://h/r.git//m?sshkey=S&ref={COMMIT}"),
        # `depth` would make it clone `--branch <commit>`, which fails; a second `ref` is ours
        ("https://h/r.git?depth=1", "", f"git::https://h/r.git?ref={COMMIT}"),
        ("https://h/r.git?depth=1&x=y&ref=v1", "m", f"git::https://h/r.git//m?x=y&ref={COMMIT}"),
        ("https://h/r.git?", "", f"git::https://h/r.git?ref={COMMIT}"),
    ],
)
def test_a_git_location_names_the_commit(url: str, folder: str, expected: str) -> None:
    assert git_location(url, folder, COMMIT) == expected


def test_each_moved_tag_policy_answers_the_commit_it_serves(
    tmp_path: Path, write_catalog: WriteCatalog
) -> None:
    """A tag moved at the Git server: `pin` answers the published commit, `follow` the new one,
    `quarantine` no version at all; and the module in a folder keeps its `//folder`."""
    work = GitRepo(tmp_path / "work")
    first = work.release("v1.0.0", {**module_files("1.0.0"), **module_files("vpc", "vpc")})
    bare = bare_clone(work.path, tmp_path / "server" / "repo.git")
    with git_daemon(tmp_path / "server") as base:
        url = f"{base}/repo.git"
        entries = "".join(
            f"  - {{namespace: a, name: {policy}, system: x, repo: '{url}', download: git,"
            f" moved_tags: {policy}}}\n"
            for policy in ("pin", "follow", "quarantine")
        )
        folder = (
            f"  - {{namespace: a, name: vpc, system: x, repo: '{url}', path: vpc, download: git}}\n"
        )
        sync = ModuleSync(write_catalog(f"modules:\n{entries}{folder}"))
        sync.refresh()
        moved = work.release("moved", {**module_files("moved"), **module_files("moved", "vpc")})
        git(work.path, "tag", "-f", "v1.0.0")
        git(work.path, "push", "-q", "--force", str(bare), "refs/tags/v1.0.0")
        sync.refresh(mechanism="poll")

    def location(name: str) -> str | None:
        entry = sync.snapshot.index.get("a", name, "x")
        assert entry is not None
        release = entry.by_version.get("1.0.0")
        return None if release is None else entry.download_json(release)[1].decode()

    assert location("pin") == f"git::{url}?ref={first}"
    assert location("follow") == f"git::{url}?ref={moved}"
    assert location("quarantine") is None  # not served until `gitreg accept`
    assert location("vpc") == f"git::{url}//vpc?ref={first}"  # pin, the default
