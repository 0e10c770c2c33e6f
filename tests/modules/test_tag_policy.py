"""Published versions do not change under users: moved and deleted tags, against a real Git
server (git daemon) on 127.0.0.1, through the registry's own mirrors and ledger."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from gitreg.catalog.load import load_catalog
from gitreg.commands.cli import main
from gitreg.modules.acceptance import accept
from gitreg.modules.archive_cache import ArchiveCache, ArchiveKey
from gitreg.modules.sync import ModuleSync
from gitreg.ops.metrics import exposition
from tests.conftest import WriteCatalog
from tests.support.gitrepo import GitRepo, git, module_files
from tests.support.servers import RegistryServer, bare_clone, git_daemon, wait_until


@dataclass
class Remote:
    work: GitRepo
    bare: Path
    url: str
    first: str  # the commit v1.0.0 was published at

    def move_tag(self, tag: str) -> str:
        commit = self.work.release(f"moved-{tag}", module_files("moved"))
        git(self.work.path, "tag", "-f", tag)
        git(self.work.path, "push", "-q", "--force", str(self.bare), f"refs/tags/{tag}")
        return commit

    def delete_tag(self, tag: str) -> None:
        git(self.work.path, "push", "-q", str(self.bare), f":refs/tags/{tag}")


@pytest.fixture
def remote(tmp_path: Path) -> Iterator[Remote]:
    work = GitRepo(tmp_path / "work")
    first = work.release("v1.0.0", module_files("1.0.0"))
    work.release("v1.1.0", module_files("1.1.0"))
    bare = bare_clone(work.path, tmp_path / "server" / "repo.git")
    with git_daemon(tmp_path / "server") as base:
        yield Remote(work, bare, f"{base}/repo.git", first)


def _synced(write_catalog: WriteCatalog, remote: Remote, policy: str) -> ModuleSync:
    sync = ModuleSync(
        write_catalog(
            f"modules:\n  - {{namespace: a, name: m, system: x, repo: '{remote.url}', {policy}}}\n"
        )
    )
    sync.refresh()
    return sync


def _served(sync: ModuleSync) -> dict[str, str]:
    entry = sync.snapshot.index.get("a", "m", "x")
    assert entry is not None
    return {r.version: r.commit for r in entry.versions.releases}


def _actions(sync: ModuleSync) -> list[tuple[str, str, str]]:
    entry = sync.snapshot.index.get("a", "m", "x")
    assert entry is not None
    return [(c.tag, c.kind, c.action) for c in entry.changes]


def _archive(sync: ModuleSync, commit: str) -> bytes:
    entry = sync.snapshot.index.get("a", "m", "x")
    assert entry is not None
    return asyncio.run(
        ArchiveCache(sync.snapshot.catalog.cache_dir).get(entry.clone_path, ArchiveKey(commit))
    ).read_bytes()


def test_pin_keeps_the_published_commit(
    write_catalog: WriteCatalog, remote: Remote, caplog: pytest.LogCaptureFixture
) -> None:
    sync = _synced(write_catalog, remote, "moved_tags: pin")
    before = _archive(sync, remote.first)
    remote.move_tag("v1.0.0")
    sync.refresh(mechanism="poll")
    assert _served(sync)["1.0.0"] == remote.first
    assert _actions(sync) == [("v1.0.0", "moved", "pinned")]
    assert "tag v1.0.0 moved from" in caplog.text and "pinned" in caplog.text
    metrics = exposition(sync, Counter()).decode()
    assert 'gitreg_tag_changes{action="pinned",kind="moved",module="a/m/x"} 1.0' in metrics
    # The published commit stays in the mirror, and its archive is the same bytes.
    (sync.snapshot.catalog.cache_dir / "archives").rename(
        sync.snapshot.catalog.cache_dir / "old-archives"
    )
    assert _archive(sync, remote.first) == before


def test_follow_serves_the_new_commit(write_catalog: WriteCatalog, remote: Remote) -> None:
    sync = _synced(write_catalog, remote, "moved_tags: follow")
    moved = remote.move_tag("v1.0.0")
    sync.refresh(mechanism="poll")
    assert _served(sync)["1.0.0"] == moved
    assert _actions(sync) == [("v1.0.0", "moved", "followed")]


def test_quarantine_until_accepted(write_catalog: WriteCatalog, remote: Remote) -> None:
    sync = _synced(write_catalog, remote, "moved_tags: quarantine")
    moved = remote.move_tag("v1.0.0")
    sync.refresh(mechanism="poll")
    assert "1.0.0" not in _served(sync) and "1.1.0" in _served(sync)
    assert _actions(sync) == [("v1.0.0", "moved", "quarantined")]
    message = accept(sync, "a", "m", "x", "1.0.0")
    assert "now publishes" in message
    assert _served(sync)["1.0.0"] == moved and _actions(sync) == []
    # A restart reads the operator's decision from the ledger.
    assert _served(_synced(write_catalog, remote, "moved_tags: quarantine"))["1.0.0"] == moved


def test_deleted_tag_is_kept(write_catalog: WriteCatalog, remote: Remote) -> None:
    sync = _synced(write_catalog, remote, "deleted_tags: keep")
    remote.delete_tag("v1.0.0")
    sync.refresh(mechanism="poll")
    assert _served(sync)["1.0.0"] == remote.first
    assert _actions(sync) == [("v1.0.0", "deleted", "kept")]
    assert (
        git(
            sync.snapshot.clones[next(iter(sync.snapshot.clones))].path,
            "cat-file",
            "-t",
            remote.first,
        )
        == "commit"
    )
    assert _archive(sync, remote.first)


def test_deleted_tag_is_removed(write_catalog: WriteCatalog, remote: Remote) -> None:
    sync = _synced(write_catalog, remote, "deleted_tags: remove")
    remote.delete_tag("v1.0.0")
    sync.refresh(mechanism="poll")
    assert list(_served(sync)) == ["1.1.0"]
    assert _actions(sync) == [("v1.0.0", "deleted", "removed")]


def test_another_modules_moved_tag_is_no_change_of_this_one(
    tmp_path: Path, write_catalog: WriteCatalog
) -> None:
    # The default templates include {version}: in a monorepo, vpc/v1.0.0 fits its text, but
    # releases no version of the root module, so its policy is not the root module's business.
    repo = GitRepo(tmp_path / "mono")
    repo.release("v1.0.0", module_files("root"))
    repo.release("vpc/v1.0.0", module_files("vpc", folder="vpc"))
    sync = ModuleSync(
        write_catalog(
            f"modules:\n  - {{namespace: a, name: root, system: x, repo: {repo.path}}}\n"
            f"  - {{namespace: a, name: vpc, system: x, repo: {repo.path}, path: vpc,"
            " tags: 'vpc/v{version}'}\n"
        )
    )
    sync.refresh()
    repo.release("moved", module_files("moved", folder="vpc"))
    repo.tag("vpc/v1.0.0", force=True)
    sync.refresh(mechanism="poll")
    root, vpc = (sync.snapshot.index.get("a", name, "x") for name in ("root", "vpc"))
    assert vpc and [(c.tag, c.action) for c in vpc.changes] == [("vpc/v1.0.0", "pinned")]
    assert root and root.changes == ()


def test_pin_survives_a_restart(write_catalog: WriteCatalog, remote: Remote) -> None:
    _synced(write_catalog, remote, "moved_tags: pin")
    remote.move_tag("v1.0.0")
    restarted = _synced(write_catalog, remote, "moved_tags: pin")  # the ledger is in cache_dir
    assert _served(restarted)["1.0.0"] == remote.first


def test_gitreg_accept_reaches_a_running_server(tmp_path: Path, remote: Remote) -> None:
    path = tmp_path / "registry.yaml"
    path.write_text(
        f"cache_dir: cache\nrefresh_interval: 300ms\nmodules:\n"
        f"  - {{namespace: a, name: m, system: x, repo: '{remote.url}', moved_tags: quarantine}}\n"
    )
    with RegistryServer(load_catalog(path), refresh=True) as server:
        moved = remote.move_tag("v1.0.0")

        def served() -> dict[str, str]:
            entry = server.sync.snapshot.index.get("a", "m", "x")
            return {r.version: r.commit for r in entry.versions.releases} if entry else {}

        wait_until(lambda: "1.0.0" not in served())  # quarantined by a poll
        done = subprocess.run(
            [sys.executable, "-m", "gitreg", "accept", "--config", str(path), "a/m/x", "1.0.0"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert "tag v1.0.0 now publishes" in done.stdout
        wait_until(
            lambda: served().get("1.0.0") == moved
        )  # the server's next poll reads the ledger


def test_gitreg_accept_refuses_what_did_not_move(
    tmp_path: Path, remote: Remote, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "registry.yaml"
    path.write_text(
        f"cache_dir: cache\nmodules:\n  - {{namespace: a, name: m, system: x, repo: '{remote.url}'}}\n"
    )
    for args, code, message in (
        (["a/m/x", "1.0.0"], 1, "no moved tag to accept"),
        (["a/m", "1.0.0"], 2, "NAMESPACE/NAME/SYSTEM"),
        (["a/zz/x", "1.0.0"], 1, "a/zz/x: no such module"),
        (["a/m/x", "one"], 2, "a/m/x one: 'one' is not a Semantic Version"),
    ):
        # The command's answers, in this process (a real process accepting is proved above).
        status = main(["accept", "--config", str(path), *args])
        stderr = capsys.readouterr().err
        assert status == code and message in stderr, stderr
        assert all(line.startswith("gitreg: ") for line in stderr.splitlines())
