"""Bare clones of the catalog's repositories: the only code that talks to Git.

The `git` command does everything that crosses the network (fetch, ls-remote), so every
transport and credential git supports works. Those commands run thousands of times an hour at
scale, so they are run by `run_git` (one poll loop a call, no thread, no `Repo` built);
GitPython creates and configures a new clone, once per repository; dulwich reads the
objects (tags, trees, blobs) in-process, without a subprocess per question.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import shlex
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import NamedTuple

import git
from dulwich.errors import NotTreeError
from dulwich.object_store import peel_sha
from dulwich.objects import Commit, ObjectID, Tree
from dulwich.refs import Ref
from dulwich.repo import Repo

from gitreg.errors import FetchStopped, SourceError
from gitreg.git import seeding
from gitreg.git.credential import Credential
from gitreg.git.fetch_turns import FetchTurns
from gitreg.git.git_command import GitFailed, git_said, run_git
from gitreg.git.location import RepoLocation, clone_name
from gitreg.git.shutdown import stopping
from gitreg.git.tag_refs import LocalTags, RemoteTags, ls_remote

log = logging.getLogger(__name__)

TAG_REFSPEC = "+refs/tags/*:refs/tags/*"
PUBLISHED_REFS = "refs/gitreg/published/"
DEFAULT_BRANCH_REF = "refs/gitreg/default-branch"


class TagRef(NamedTuple):
    """A tag, peeled: `commit` is None when the tag does not point at a commit. (A tuple: a large
    catalog holds one per tag, and a tuple is less than half the size of a dataclass.)"""

    name: str
    commit: str | None


class BareClone:
    """One bare clone in the cache, shared by every module that lives in the repository."""

    def __init__(
        self, location: RepoLocation, cache_dir: Path, credential: Credential | None, timeout: float
    ) -> None:
        self.location = location
        self.credential = credential
        self.timeout = timeout
        self.name = clone_name(location.url)
        self.path = cache_dir / "git" / f"{self.name}.git"
        self._lock = threading.Lock()
        self._turns = FetchTurns(self.path)  # the lock other processes' fetches take, too
        # What never changes for a given object id, kept so a rescan (a reload, a poll that saw a
        # change) does not read every tag and tree again: the tags as last peeled, with a digest
        # of the refs they came from, and per folder the commits known to hold it.
        self._peeled: tuple[bytes, tuple[TagRef, ...]] | None = None
        self._folders: dict[str, set[str]] = {}
        self._local = LocalTags(self.path)
        self._made = False  # whether this process made the clone (GitPython's init)
        self._enlisted: bool | None = None  # `_made` when last entered in the donors' index

    def __repr__(self) -> str:
        return f"BareClone({self.location})"

    def exists(self) -> bool:
        return (self.path / "objects").is_dir()

    def fetch(self, expect: Mapping[str, str] | None = None) -> bool:
        """Bring every tag of the remote into the clone; raise SourceError on any failure.
        False when there was no need, by this process's turn: another process's fetch, begun
        since, brought the remote's tags, or the clone holds `expect` (tag ref → object id,
        as `remote_tags` lists them)."""
        ticket = self._turns.ticket()
        with self._lock, self._turns.turn() as turn:
            if turn.answered(ticket) or (expect is not None and self._holds(expect)):
                return False
            turn.begin()
            try:
                self._init()
                fetch = ["fetch", "--force", "--prune", "--no-write-fetch-head", "--quiet"]
                self._git(*fetch, self.location.url, TAG_REFSPEC)
            except (GitFailed, git.GitError, OSError) as exc:
                why = f"fetch from {self.location} failed: {_why(exc)}"
                raise self._failed("fetch", why) from exc
            if (self.path / seeding.SEED_REFS).is_dir():
                self._drop_seed()
            if self._enlisted != self._made:  # once, and again once this process made it
                seeding.enlist(self.path, self.location.identity, newest=self._made)
                self._enlisted = self._made
            self._pack_refs()
            turn.completed()
            return True

    def fetch_changed(self) -> bool:
        """`fetch`, when the remote's tags (`git ls-remote`) differ from the clone's. A fetch that
        brings nothing costs about three times the CPU of the ls-remote: git then checks the
        connectivity of every tag and runs its maintenance, two processes more."""
        if not self.exists():
            return self.fetch()
        try:
            remote = ls_remote(self.location.url, self._environment(), self.timeout)
        except GitFailed as exc:
            raise self._failed("fetch", f"fetch from {self.location} failed: {exc}") from exc
        return not self.holds(remote) and self.fetch(remote.tags())

    def fetch_branch(self, branch: str | None) -> str | None:
        """Bring the remote's branch (its default: where `.gitreg.yaml` is read; None: the one
        its HEAD names) into the clone, as DEFAULT_BRANCH_REF, which the tags' fetch never
        prunes. Returns that ref, or None when the remote has no HEAD (an empty repository);
        raises SourceError on any other failure."""
        source = f"refs/heads/{branch}" if branch else "HEAD"
        # The fetch lock, not a turn: a turn counts fetches of the tags, which this is not.
        with self._lock, self._turns.turn():
            try:
                self._init()
                fetch = ["fetch", "--force", "--no-tags", "--no-write-fetch-head", "--quiet"]
                self._git(*fetch, self.location.url, f"+{source}:{DEFAULT_BRANCH_REF}")
            except (GitFailed, git.GitError, OSError) as exc:
                why = _why(exc)
                if branch is None and "couldn't find remote ref HEAD" in why:
                    return None
                what = branch or "HEAD"
                raise SourceError(f"fetch of {what} from {self.location} failed: {why}") from exc
        return DEFAULT_BRANCH_REF

    def _holds(self, tags: Mapping[str, str]) -> bool:
        try:
            return self.exists() and self.local_tags() == tags
        except SourceError:
            return False

    def holds(self, remote: RemoteTags) -> bool:
        """Whether the clone's tags are exactly the remote's: a poll's question, answered
        without opening the clone when neither side changed since the last match."""
        if not self.exists():
            return False
        try:
            return self._local.matches(remote)
        except (OSError, ValueError):
            return self.local_tags() == remote.tags()

    def _git(self, *args: str) -> bytes:
        """`git ARGS` in the clone, with the credential's environment; GitFailed on failure."""
        where = str(self.path)  # and no search upwards: a damaged clone is not another's
        return run_git(
            ["-C", where, f"--git-dir={where}", *args], self._environment(), self.timeout
        )

    def _pack_refs(self) -> None:
        """Move the loose refs a fetch (or `keep`) wrote into packed-refs: a repository with
        hundreds of tags is otherwise read one small file per tag at every scan and poll (most
        of a start-up's time with 1,000 such repositories)."""
        if not any(files for _, _, files in os.walk(self.path / "refs")):
            return
        try:
            self._git("pack-refs", "--all")
        except GitFailed as exc:  # only slower to read: not worth failing a sync
            log.warning("cannot pack the refs of the clone of %s: %s", self.location, exc)

    def remote_tags(self) -> dict[str, str]:
        """The remote's tags and what they point at, without fetching (`git ls-remote`)."""
        return self.ls_remote().tags(peeled=True)

    def ls_remote(self) -> RemoteTags:
        """`git ls-remote --tags`, as printed; SourceError when the remote cannot be reached."""
        try:
            return ls_remote(self.location.url, self._environment(), self.timeout)
        except GitFailed as exc:
            raise self._failed("listing the tags", f"cannot reach {self.location}: {exc}") from exc

    def _failed(self, doing: str, why: str) -> SourceError:
        """What to raise when `doing` failed: FetchStopped when the server, stopping, ended its
        git (nothing to record against the repository), else SourceError saying `why`."""
        if stopping():
            return FetchStopped(f"{doing} of {self.location} stopped: the server is shutting down")
        return SourceError(why)

    def tags(self) -> list[TagRef]:
        """Every tag in the clone, peeled to what it finally points at."""
        with self._dulwich() as repo:
            refs = sorted(repo.refs.as_dict(Ref(b"refs/tags")).items())
            digest = hashlib.sha256(b"".join(b"%s %s\n" % ref for ref in refs)).digest()
            if self._peeled is not None and self._peeled[0] == digest:
                return list(self._peeled[1])
            peeled: dict[bytes, str | None] = {}
            commits: dict[str, str] = {}  # one string per commit, shared by all its tags
            complete = True
            result = []
            for name, sha in refs:
                if sha not in peeled:
                    try:
                        target = peel_sha(repo.object_store, sha)[1]
                        commit = target.id.decode() if isinstance(target, Commit) else None
                        peeled[sha] = commit and commits.setdefault(commit, commit)
                    except KeyError:
                        peeled[sha] = None
                        complete = False  # a missing object may arrive with the next fetch
                # Tag names repeat from one repository to the next (`v1.2.0`): one string each.
                result.append(TagRef(sys.intern(name.decode("utf-8", "replace")), peeled[sha]))
            self._peeled = (digest, tuple(result)) if complete else None
            return result

    def local_tags(self) -> dict[str, str]:
        """The clone's tag refs as ls-remote names them (refs/tags/NAME → object id)."""
        if not self.exists():
            raise SourceError(f"no clone of {self.location} yet")
        try:
            return self._local.read()
        except (OSError, ValueError):  # a symbolic tag ref, say: dulwich knows them all
            with self._dulwich() as repo:
                tags = repo.refs.as_dict(Ref(b"refs/tags"))
                return {
                    f"refs/tags/{name.decode('utf-8', 'replace')}": sha.decode()
                    for name, sha in tags.items()
                }

    def refs_digest(self) -> str | None:
        """A digest of the clone's tag refs (`LocalTags.digest`); None when there is no clone
        or its refs cannot be read that way (a symbolic tag ref)."""
        if not self.exists():
            return None
        try:
            return self._local.digest()
        except (OSError, ValueError):
            return None

    def keep(self, published: Mapping[str, str]) -> None:
        """Hold each published commit with a ref of gitreg's own (refs/gitreg/published/TAG),
        so that it stays in the clone after its tag is moved or deleted upstream."""
        with self._lock, self._dulwich() as repo:
            for tag, commit in published.items():
                repo.refs[Ref(f"{PUBLISHED_REFS}{tag}".encode())] = ObjectID(commit.encode())

    def _dulwich(self) -> AbstractContextManager[Repo]:
        if not self.exists():
            raise SourceError(f"no clone of {self.location} yet")
        return open_repo(self.path)

    @contextmanager
    def open(self) -> Iterator[CloneView]:
        """The clone as it is now, to ask about commits and folders (dulwich stays in here)."""
        with self._dulwich() as repo:
            yield CloneView(repo, self._folders)

    def _init(self) -> None:
        """The clone, made (bare, never collected) when it is not there yet."""
        if self.exists():
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        repo = git.Repo.init(self.path, bare=True)
        with repo.config_writer() as config:
            # Objects must never disappear under a published version, so no automatic gc.
            config.set_value("gc", "auto", "0")
            config.set_value("core", "logAllRefUpdates", "false")
        self._made = True
        seeding.start_from_donor(
            self.path, self.location.identity, self.timeout, str(self.location)
        )

    def _drop_seed(self) -> None:
        """The refs a seeding added, once the fetch from the real URL is done."""
        with open_repo(self.path) as repo:
            for ref in list(repo.refs.keys(base=Ref(seeding.SEED_REFS.encode()))):
                repo.refs.remove_if_equals(Ref(seeding.SEED_REFS.encode() + ref), None)

    def _environment(self) -> dict[str, str]:
        env = {
            "GIT_TERMINAL_PROMPT": "0",
            "GCM_INTERACTIVE": "never",
            "GIT_ASKPASS": "",
            "SSH_ASKPASS": "",
            # git's messages in English whatever the host's locale, as run_git's: a few are read
            # (an empty repository's missing HEAD, a 401), and all are shown in the status.
            "LANGUAGE": "C",
            "LC_ALL": "C",
        }
        ssh = ["ssh", "-o", "BatchMode=yes"]
        credential = self.credential
        if credential and credential.ssh_key:
            ssh += ["-i", str(credential.ssh_key), "-o", "IdentitiesOnly=yes"]
        if credential and credential.known_hosts:
            ssh += [
                "-o",
                f"UserKnownHostsFile={credential.known_hosts}",
                "-o",
                "StrictHostKeyChecking=yes",
            ]
        env["GIT_SSH_COMMAND"] = shlex.join(ssh)
        # Through the environment, not argv: other users can read argv in `ps`. Scoped to the
        # credential's URL, so a redirect elsewhere never carries the token.
        config: list[tuple[str, str]] = []
        token = credential.token() if credential else None
        if credential and token:
            basic = base64.b64encode(f"{credential.username}:{token}".encode()).decode()
            config.append((f"http.{credential.url}.extraHeader", f"Authorization: Basic {basic}"))
        if credential and credential.ca_file:
            # The variable, not http.sslCAInfo: an inherited GIT_SSL_CAINFO would override config.
            env["GIT_SSL_CAINFO"] = str(credential.ca_file)
        env["GIT_CONFIG_COUNT"] = str(len(config))
        for n, (key, value) in enumerate(config):
            env[f"GIT_CONFIG_KEY_{n}"] = key
            env[f"GIT_CONFIG_VALUE_{n}"] = value
        return env


class CloneView:
    """A clone read at one moment: whether it holds a commit, and a folder at a commit. The
    folders found are remembered in the clone (`folders`) across views: a commit's trees never
    change."""

    def __init__(self, repo: Repo, folders: dict[str, set[str]]) -> None:
        self._repo = repo
        self._folders = folders

    def has_commit(self, commit: str) -> bool:
        try:
            return isinstance(self._repo[commit.encode()], Commit)
        except (KeyError, ValueError):
            return False

    def has_folder(self, commit: str, *, folder: str) -> bool:
        held = self._folders.setdefault(folder, set())
        if commit in held:
            return True
        # Only a folder found is remembered: not finding one may be a missing object, which a
        # fetch can bring.
        if folder_tree(self._repo, commit, folder) is None:
            return False
        held.add(commit)
        return True


def move_old_clones(cache_dir: Path) -> None:
    """Clones were kept in `cache_dir/mirrors/` before 0.2: move them once, so that an upgrade
    neither fetches everything again nor loses commits held for published versions."""
    old, new = cache_dir / "mirrors", cache_dir / "git"
    if old.is_dir() and not new.exists():
        old.rename(new)
        log.info("moved the Git clones from %s to %s", old, new)


def folder_tree(repo: Repo, commit_id: str, folder: str) -> Tree | None:
    """The tree of `folder` ("" for the root) in a commit; None when there is no such folder."""
    try:
        commit = repo[commit_id.encode()]
        if not isinstance(commit, Commit):
            return None
        tree = repo[commit.tree]
        if folder and isinstance(tree, Tree):
            _, sha = tree.lookup_path(repo.object_store.__getitem__, folder.encode())
            tree = repo[sha]
    except (KeyError, ValueError, NotTreeError):
        return None
    return tree if isinstance(tree, Tree) else None


@contextmanager
def open_repo(path: Path) -> Iterator[Repo]:
    """A dulwich view of a clone, opened per use so that it sees the newest refs and packs."""
    repo = Repo(str(path))
    try:
        yield repo
    finally:
        repo.close()
        # A Repo is a reference cycle (its refs container logs through one of its methods)
        # holding every tag ref it read: left to the collector, which is off during the
        # start-up's reads and paced work, then frozen with what they kept. Parted, its
        # parts are freed as it is dropped.
        vars(repo).clear()


def _why(exc: Exception) -> str:
    """Why a git command failed, for a person (GitFailed's message is that already)."""
    if isinstance(exc, git.GitCommandError):  # making a clone: GitPython's
        text = str(exc.stderr or exc).strip().removeprefix("stderr:").strip().strip("'").strip()
        return git_said(text, exc.status)
    return str(exc)
