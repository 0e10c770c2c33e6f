"""A poll's comparison of the remote's tags with the clone's: read as dulwich reads them, answered
from the last match only while neither side changed, and a stalled remote given up on."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from dulwich.refs import Ref
from dulwich.repo import Repo

from gitreg.errors import SourceError
from gitreg.git.clone import BareClone
from gitreg.git.git_command import CREDENTIALS_WANTED, GitFailed, git_said, run_git
from gitreg.git.location import RepoLocation
from gitreg.git.tag_refs import LocalTags, RemoteTags
from tests.support.gitrepo import GitRepo, git


def _fetched(tmp_path: Path) -> tuple[GitRepo, BareClone, str]:
    work = GitRepo(tmp_path / "work")
    work.write({"main.tf": "# one\n"})
    commit = work.commit()
    work.tag("v1.0.0")
    work.tag("v1.1.0", annotated=True)
    clone = BareClone(RepoLocation.parse(str(work.path), tmp_path), tmp_path / "cache", None, 60)
    clone.fetch()
    return work, clone, commit


def _dulwich_tags(path: Path) -> dict[str, str]:
    with Repo(str(path)) as repo:
        refs = repo.refs.as_dict(Ref(b"refs/tags"))
        return {f"refs/tags/{name.decode()}": sha.decode() for name, sha in refs.items()}


def test_the_clone_s_tags_read_as_dulwich_reads_them(tmp_path: Path) -> None:
    _, clone, commit = _fetched(tmp_path)
    assert not any(p.is_file() for p in (clone.path / "refs").rglob("*"))  # all packed
    git(clone.path, "update-ref", "refs/tags/loose/v2.0.0", commit)  # one loose, in a folder
    git(clone.path, "update-ref", "refs/tags/v1.0.0", f"{commit}^{{tree}}")  # loose over packed
    tags = clone.local_tags()
    assert tags == _dulwich_tags(clone.path)
    assert set(tags) == {"refs/tags/v1.0.0", "refs/tags/v1.1.0", "refs/tags/loose/v2.0.0"}
    assert tags["refs/tags/v1.0.0"] != commit


def test_an_ls_remote_matches_until_either_side_changes(tmp_path: Path) -> None:
    work, clone, commit = _fetched(tmp_path)
    remote = clone.ls_remote()
    assert "refs/tags/v1.1.0^{}" in clone.remote_tags()  # as ls-remote prints it
    assert "refs/tags/v1.1.0^{}" not in remote.tags()  # as the clone holds it
    assert clone.holds(remote) and clone.holds(remote)

    work.tag("v1.2.0")  # the remote changed
    newer = clone.ls_remote()
    assert not clone.holds(newer)
    assert clone.holds(remote)

    git(clone.path, "update-ref", "refs/tags/v9.0.0", commit)  # the clone changed, loose
    assert not clone.holds(remote)
    git(clone.path, "pack-refs", "--all")  # and packed
    assert not clone.holds(remote)
    git(clone.path, "update-ref", "-d", "refs/tags/v9.0.0")
    assert clone.holds(remote)

    clone.fetch()
    assert clone.holds(newer) and not clone.holds(remote)


def test_an_unchanged_poll_reads_no_ref(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, clone, commit = _fetched(tmp_path)
    reads = []
    packed = LocalTags._packed

    def counted(self: LocalTags) -> dict[str, str]:
        reads.append(self.path)
        return packed(self)

    monkeypatch.setattr(LocalTags, "_packed", counted)
    remote = clone.ls_remote()
    for _ in range(5):
        assert clone.holds(remote)
    assert reads == []  # the first compared packed-refs as bytes; the others matched its digest
    (clone.path / "refs" / "tags" / "v1.0.0").write_text(f"{commit}\n")  # loose too, the same
    assert clone.holds(remote)
    assert reads == [clone.path]  # a loose tag ref: parsed


def test_packed_refs_compared_as_bytes_agree_with_the_parsed_comparison(tmp_path: Path) -> None:
    work, clone, commit = _fetched(tmp_path)
    local = LocalTags(clone.path)

    def both(remote: RemoteTags) -> tuple[bool, bool]:
        return local._packed_lists(local._key(), remote), local._tags() == remote.tags()

    assert both(clone.ls_remote()) == (True, True)  # a lightweight and an annotated tag
    work.tag("v1.2.0", annotated=True)
    assert both(clone.ls_remote()) == (False, False)  # one more on the remote
    clone.fetch()
    assert both(clone.ls_remote()) == (True, True)
    work.write({"main.tf": "# two\n"})
    work.commit()
    git(work.path, "tag", "-f", "v1.0.0")  # moved
    assert both(clone.ls_remote()) == (False, False)
    clone.fetch()
    git(work.path, "tag", "-d", "v1.1.0")  # deleted
    assert both(clone.ls_remote()) == (False, False)
    clone.fetch()
    assert both(clone.ls_remote()) == (True, True)
    assert "refs/tags/v1.1.0" not in clone.local_tags()
    remote = clone.ls_remote()
    git(clone.path, "update-ref", "refs/tags/v1.0.0", commit)  # loose, and older: parse decides
    assert both(remote) == (False, False)


def test_a_stalled_remote_is_given_up_on(tmp_path: Path) -> None:
    with socket.socket() as silent:  # accepts connections (the kernel does), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"git://127.0.0.1:{silent.getsockname()[1]}/r.git"
        with pytest.raises(GitFailed, match=r"did not complete in 0\.5 s"):
            run_git(["ls-remote", "--tags", url], {"GIT_TERMINAL_PROMPT": "0"}, 0.5)


def test_an_unreachable_remote_says_why(tmp_path: Path) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}/r.git"  # bound, not listening
        clone = BareClone(RepoLocation.parse(url, tmp_path), tmp_path / "cache", None, 10)
        with pytest.raises(SourceError, match=r"cannot reach http://127\.0\.0\.1:\d+/r\.git: .*"):
            clone.ls_remote()


def test_the_refs_digest_changes_with_any_tag_and_only_then(tmp_path: Path) -> None:
    work, clone, commit = _fetched(tmp_path)
    first = clone.refs_digest()
    assert first is not None and first == LocalTags(clone.path).digest()  # another reader
    work.tag("v2.0.0")
    assert clone.refs_digest() == first  # the remote's tag, not fetched yet
    git(clone.path, "update-ref", "refs/tags/loose/v3.0.0", commit)
    added = clone.refs_digest()
    assert added != first
    git(clone.path, "update-ref", "-d", "refs/tags/loose/v3.0.0")
    assert clone.refs_digest() == first
    tree = git(clone.path, "rev-parse", f"{commit}^{{tree}}").strip()
    git(clone.path, "update-ref", "refs/tags/v1.0.0", tree)
    assert clone.refs_digest() not in (first, added)  # a tag moved


def test_no_clone_has_no_refs_digest(tmp_path: Path) -> None:
    clone = BareClone(RepoLocation.parse(str(tmp_path), tmp_path), tmp_path / "cache", None, 60)
    assert clone.refs_digest() is None


@pytest.mark.parametrize(
    ("stderr", "said"),
    [
        # A 401 git may not prompt for: no credentials, or a token the server refuses.
        (
            "fatal: could not read Username for 'https://git.example.com': terminal prompts"
            " disabled\n",
            CREDENTIALS_WANTED,
        ),
        (
            "remote: HTTP Basic: Access denied\n"
            "fatal: Authentication failed for 'https://git.example.com/a.git/'\n",
            CREDENTIALS_WANTED,
        ),
        (
            "fatal: unable to access 'https://git.example.com/a.git/': The requested URL"
            " returned error: 403\n",
            "fatal: unable to access 'https://git.example.com/a.git/': The requested URL"
            " returned error: 403",
        ),
        ("one\n\ntwo\nthree\nfour\n", "two / three / four"),
        (
            "fatal: repository 'https://user:p4ss@git.example.com/a.git/' not found",
            "fatal: repository 'https://***@git.example.com/a.git/' not found",
        ),
        ("", "git exited with 128"),
    ],
)
def test_what_a_failed_git_said(stderr: str, said: str) -> None:
    assert git_said(stderr, 128) == said
