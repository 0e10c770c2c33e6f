"""Registries sharing one ledger in PostgreSQL (as replicas do), over a real Git server: a moved
tag is pinned to the first commit by all, including one that first reads the repository after
the move; with the database away, what was confirmed is served and a new tag waits for it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from gitreg.catalog.load import load_catalog
from gitreg.modules.index_keeper import IndexKeeper
from gitreg.modules.sync import ModuleSync
from gitreg.modules.warm_start import warm_start
from gitreg.state.configured import open_state
from tests.support.gitrepo import GitRepo, git, module_files
from tests.support.postgres import postgres_server
from tests.support.servers import bare_clone, git_daemon


@dataclass
class Remote:
    work: GitRepo
    bare: Path
    url: str
    first: str

    def push(self, *refs: str) -> None:
        git(self.work.path, "push", "-q", "--force", str(self.bare), *refs)

    def move_out_of_history(self, tag: str) -> None:
        """`tag` moved to a commit that does not descend from the first, which the server no
        longer holds."""
        git(self.work.path, "checkout", "-q", "--orphan", "other")
        self.work.write({"main.tf": 'output "version" { value = "other" }\n'})
        self.work.commit("other")
        git(self.work.path, "tag", "-f", tag)
        self.push(f"refs/tags/{tag}")
        git(self.bare, "reflog", "expire", "--expire=now", "--all")
        git(self.bare, "gc", "-q", "--prune=now")


@pytest.fixture
def remote(tmp_path: Path) -> Iterator[Remote]:
    work = GitRepo(tmp_path / "work")
    first = work.release("v1.0.0", module_files("1.0.0"))
    bare = bare_clone(work.path, tmp_path / "server" / "repo.git")
    with git_daemon(tmp_path / "server") as base:
        yield Remote(work, bare, f"{base}/repo.git", first)


_OPEN: list[ModuleSync] = []


@pytest.fixture(autouse=True)
def _close() -> Iterator[None]:
    yield
    while _OPEN:
        _OPEN.pop().shared.close()


def _replica(
    tmp_path: Path, name: str, remote: Remote, dsn_env: str, policy: str = "", kept: bool = False
) -> ModuleSync:
    """`kept`: its reads noted for the persisted index and shared with the others, as a
    server's are."""
    folder = tmp_path / name
    folder.mkdir()
    (folder / "registry.yaml").write_text(
        f"cache_dir: cache\nstate:\n  postgres: {{dsn_env: {dsn_env}}}\n"
        f"modules:\n  - {{namespace: a, name: m, system: x, repo: '{remote.url}'{policy}}}\n"
    )
    catalog = load_catalog(folder / "registry.yaml")
    shared = open_state(catalog)
    reads = IndexKeeper(catalog.cache_dir, shared) if kept else None
    sync = ModuleSync(catalog, shared, reads=reads)
    _OPEN.append(sync)
    return sync


def _served(sync: ModuleSync) -> dict[str, str]:
    entry = sync.snapshot.index.get("a", "m", "x")
    assert entry is not None
    return {r.version: r.commit for r in entry.versions.releases}


def test_a_moved_tag_is_pinned_by_every_replica_even_one_started_after_the_move(
    tmp_path: Path, remote: Remote, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITREG_TEST_DSN", database_url)
    one = _replica(tmp_path, "one", remote, "GITREG_TEST_DSN")
    one.refresh()
    assert _served(one) == {"1.0.0": remote.first}
    remote.work.release("moved", module_files("moved"))
    git(remote.work.path, "tag", "-f", "v1.0.0")
    remote.push("refs/tags/v1.0.0")
    late = _replica(tmp_path, "late", remote, "GITREG_TEST_DSN")  # never saw the first commit
    late.refresh()
    one.refresh()
    assert _served(late) == _served(one) == {"1.0.0": remote.first}
    (change,) = late.snapshot.index.get("a", "m", "x").changes  # type: ignore[union-attr]
    assert change.action == "pinned"


def test_a_published_commit_the_clone_lacks_is_withheld_never_replaced(
    tmp_path: Path, remote: Remote, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITREG_TEST_DSN", database_url)
    one = _replica(tmp_path, "one", remote, "GITREG_TEST_DSN")
    one.refresh()
    remote.move_out_of_history("v1.0.0")
    late = _replica(tmp_path, "late", remote, "GITREG_TEST_DSN")
    late.refresh()
    assert _served(late) == {}
    (change,) = late.snapshot.index.get("a", "m", "x").changes  # type: ignore[union-attr]
    assert change.action == "withheld"


def test_what_another_replica_read_is_served_until_the_clone_here_is_read(
    tmp_path: Path, remote: Remote, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A replica with no clone yet serves the line another replica shared; its first fetch
    then reads its own clone, which lacks the commit that line pins: withheld here."""
    monkeypatch.setenv("GITREG_TEST_DSN", database_url)
    one = _replica(tmp_path, "one", remote, "GITREG_TEST_DSN", kept=True)
    one.refresh()
    remote.move_out_of_history("v1.0.0")
    one.refresh()  # pinned: its clone holds the first commit
    assert _served(one) == {"1.0.0": remote.first} and one.reads is not None
    one.reads.write(one.snapshot)  # its line shared, read from the tags as they are now
    late = _replica(tmp_path, "late", remote, "GITREG_TEST_DSN", kept=True)
    assert warm_start(late).shared == 1
    assert _served(late) == {"1.0.0": remote.first}  # as the others serve it
    late.refresh()
    assert _served(late) == {}
    (change,) = late.snapshot.index.get("a", "m", "x").changes  # type: ignore[union-attr]
    assert change.action == "withheld"


def test_with_the_database_away_what_was_confirmed_is_served_and_new_tags_wait(
    tmp_path: Path, remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    with postgres_server() as db:
        monkeypatch.setenv("GITREG_TEST_DSN", db.database())
        one = _replica(tmp_path, "one", remote, "GITREG_TEST_DSN")
        one.refresh()
        db.stop()
        remote.work.release("v1.1.0", module_files("1.1.0"))
        remote.push("refs/tags/v1.1.0")
        assert not one.sync_repo(one.snapshot.catalog.repositories[0], "poll")
        assert _served(one) == {"1.0.0": remote.first}  # nothing new, nothing lost
        assert one.shared.problem() is not None
        status = one.status[one.snapshot.catalog.repositories[0]]
        assert status.last_error is not None and "1 new tags wait" in status.last_error
        # The replica restarted now serves what its copy of the ledger confirmed.
        restarted = ModuleSync(one.snapshot.catalog)
        _OPEN.append(restarted)
        restarted.read_clones()
        assert _served(restarted) == {"1.0.0": remote.first}
        db.start()
        one.shared.db.retry_now()  # type: ignore[attr-defined]
        assert one.sync_repo(one.snapshot.catalog.repositories[0], "poll")
        assert set(_served(one)) == {"1.0.0", "1.1.0"}
        assert one.shared.problem() is None


def test_one_replica_polls_a_repository_the_others_skip_it(
    tmp_path: Path, remote: Remote, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITREG_TEST_DSN", database_url)
    one = _replica(tmp_path, "one", remote, "GITREG_TEST_DSN")
    two = _replica(tmp_path, "two", remote, "GITREG_TEST_DSN")
    for sync in (one, two):
        sync.refresh()
    (location,) = one.snapshot.catalog.repositories
    one.poll_repo(location)
    two.poll_repo(location)
    one.poll_repo(location)
    assert one.sync_counts[("poll", "unchanged")] == 2
    assert two.sync_counts[("poll", "skipped")] == 1
    assert two.sync_counts[("poll", "unchanged")] == 0
