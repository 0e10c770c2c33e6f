"""Fetches of one clone take turns across processes: a fetch asked for before another one
began is answered by it (no second request to the Git server); one asked for while another
ran fetches after it; a poll's fetch is skipped when the clone holds what the poll listed.

Two BareClone objects of one clone stand for two workers: each takes the lock through a file
of its own, as another process would (flock locks belong to the open file)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

import pytest

from gitreg.git.clone import BareClone
from gitreg.git.fetch_turns import FetchTurns
from gitreg.git.location import RepoLocation
from tests.support.gitrepo import GitRepo, git, module_files
from tests.support.servers import bare_clone, daemon_requests, git_daemon, wait_until


@dataclass
class Remote:
    work: GitRepo
    bare: Path
    location: RepoLocation
    log: Path
    cache: Path

    def clone(self) -> BareClone:
        return BareClone(self.location, self.cache, None, 60.0)

    def push(self, tag: str) -> None:
        self.work.release(tag, module_files(tag))
        git(self.work.path, "push", "-q", str(self.bare), f"refs/tags/{tag}")


@pytest.fixture
def remote(tmp_path: Path) -> Iterator[Remote]:
    work = GitRepo(tmp_path / "work")
    work.release("v1.0.0", module_files("1.0.0"))
    bare = bare_clone(work.path, tmp_path / "server" / "org" / "repo.git")
    log = tmp_path / "daemon.log"
    with git_daemon(tmp_path / "server", log) as base:
        location = RepoLocation.parse(f"{base}/org/repo.git", tmp_path)
        yield Remote(work, bare, location, log, tmp_path / "cache")


def _waiting_on(lock: Path) -> int:
    """How many file lock requests wait for `lock` (the kernel lists them in /proc/locks)."""
    inode = f":{lock.stat().st_ino} "
    lines = Path("/proc/locks").read_text().splitlines()
    return sum("->" in line and inode in line for line in lines)


def _fetch_in_thread(clone: BareClone) -> Future[bool]:
    result: Future[bool] = Future()

    def run() -> None:
        try:
            result.set_result(clone.fetch())
        except BaseException as exc:
            result.set_exception(exc)

    threading.Thread(target=run, daemon=True).start()
    return result


def test_a_fetch_asked_for_before_another_began_is_answered_by_it(remote: Remote) -> None:
    first, second = remote.clone(), remote.clone()
    assert first.fetch()
    remote.push("v1.1.0")
    before = daemon_requests(remote.log)
    turns = FetchTurns(first.path)
    with turns.turn():  # held a moment, so that both ask before either fetch begins
        asked = [_fetch_in_thread(first), _fetch_in_thread(second)]
        wait_until(lambda: _waiting_on(turns.lock_path) == 2, 10, "both fetches to wait")
    # One fetched; the other, its turn come, found the clone fetched since it asked.
    assert sorted(f.result(timeout=60) for f in asked) == [False, True]
    assert daemon_requests(remote.log) == before + 1
    assert "refs/tags/v1.1.0" in second.local_tags()


def test_a_fetch_asked_for_while_another_ran_fetches_after_it(remote: Remote) -> None:
    first, second = remote.clone(), remote.clone()
    assert first.fetch()
    before = daemon_requests(remote.log)
    turns = FetchTurns(first.path)
    with turns.turn() as turn:  # another process's fetch, begun before the second asks
        turn.begin()
        asked = _fetch_in_thread(second)
        wait_until(lambda: _waiting_on(turns.lock_path) == 1, 10, "the second fetch to wait")
        remote.push("v1.1.0")  # what that fetch may have started too early to see
        turn.completed()
    assert asked.result(timeout=60) is True
    assert daemon_requests(remote.log) == before + 1
    assert "refs/tags/v1.1.0" in second.local_tags()


def test_a_polls_fetch_is_skipped_when_the_clone_holds_what_it_listed(remote: Remote) -> None:
    first, second = remote.clone(), remote.clone()
    remote.push("v1.1.0")
    listed = {ref: sha for ref, sha in second.remote_tags().items() if not ref.endswith("^{}")}
    assert first.fetch()  # another worker's fetch, between the poll's listing and its turn
    before = daemon_requests(remote.log)
    assert second.fetch(expect=listed) is False
    assert daemon_requests(remote.log) == before


def test_lost_counts_mean_a_fetch(remote: Remote) -> None:
    clone = remote.clone()
    assert clone.fetch()
    FetchTurns(clone.path).counts_path.unlink()
    before = daemon_requests(remote.log)
    assert clone.fetch()
    assert daemon_requests(remote.log) == before + 1
