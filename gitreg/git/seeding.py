"""A new clone seeded from the clone of the same repository at another URL.

When a Git server moved to another host name spelling, port or scheme, the old clone's objects
are fetched from disk under refs of gitreg's own, so the first fetch from the new URL brings only
what differs; the seed refs are dropped after it, and the tags served come from the new URL. The
old clone is found by identity (`RepoLocation.identity`: host and path, whatever the scheme, port
or user) in `cache_dir/git/by-identity/`, a symbolic link an identity: adding a repository costs
one `readlink` and opens no file of another clone. Clones keep their folders' names (a digest of
the URL), so an upgrade fetches nothing again; those made before the index are entered once, from
their MARK files (`donor`). See docs/how-it-works/internals.md."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import threading
from pathlib import Path

from gitreg.atomic import write_atomically
from gitreg.git.git_command import GitFailed, run_git

log = logging.getLogger(__name__)

MARK = "gitreg-identity"  # in a clone's folder: the identity of the repository it clones
SEED_REFS = "refs/gitreg/seed/"
INDEX = "by-identity"  # in the clones' folder: a link an identity, to a clone of it
INDEXED = ".indexed"  # in the index: the clones made before it were entered


def donor(clones: Path, identity: str, new: Path) -> Path | None:
    """Another clone of the same repository in `clones`, or None: one look at its index entry
    (and, once per cache, the marker files of the clones made before the index)."""
    found = _entry(clones, identity, new)
    if found is None and not (clones / INDEX / INDEXED).exists():
        _index_old_clones(clones)
        found = _entry(clones, identity, new)
    return found


def enlist(clone: Path, identity: str, *, newest: bool) -> None:
    """Make `clone` findable by its identity: its marker file, and the index's entry, which
    names it when `newest` (a clone just made: the server's latest address, the best donor of
    the next move) or when the entry names no clone. Two URLs of one repository served at once
    so keep the entry as it is, rather than turn it over at each fetch."""
    mark = clone / MARK
    try:
        if not mark.is_file():
            write_atomically(mark, identity.encode() + b"\n", sync="none")  # read by others
        _enter(clone.parent, identity, clone, replace=newest)
    except OSError as exc:  # only a later move's seeding is lost
        log.debug("cannot enter the clone %s in the index: %s", clone.name, exc)


def start_from_donor(new: Path, identity: str, timeout: float, what: str) -> bool:
    """Seed the clone `new` of `what` from another clone of the same repository, if there is
    one; False when there is none or the seeding failed."""
    old = donor(new.parent, identity, new)
    if old is None or not seed(new, old, timeout):
        return False
    log.info(
        "the new clone of %s starts from %s, a clone of the same repository at another URL:"
        " only what differs is fetched",
        what,
        old.name,
    )
    return True


def seed(new: Path, old: Path, timeout: float) -> bool:
    """Fetch `old`'s tagged objects into `new` under SEED_REFS; False when it could not (the
    fetch from the new URL then brings everything, as for any new clone)."""
    refspec = f"+refs/tags/*:{SEED_REFS}*"
    args = ["-C", str(new), "fetch", "--quiet", "--no-write-fetch-head", str(old), refspec]
    try:
        run_git(args, {}, timeout)
    except GitFailed as exc:
        log.warning("cannot seed the clone %s from %s: %s", new.name, old.name, exc)
        return False
    return True


def index_key(identity: str) -> str:
    """The name of `identity`'s entry in the index."""
    # 128 bits: a collision would only seed a clone with another repository's objects.
    return hashlib.sha256(identity.encode()).hexdigest()[:32]


def _entry(clones: Path, identity: str, new: Path | None) -> Path | None:
    """The clone the index names for `identity`, when it is still there and not `new`."""
    try:
        target = os.readlink(clones / INDEX / index_key(identity))
    except OSError:  # no entry, or not a link
        return None
    clone = clones / Path(target).name  # a clone of this folder, whatever the link says
    if clone == new or not (clone / "objects").is_dir():
        return None  # dangling (a clone removed): tolerated, replaced by the next one enlisted
    return clone


def _enter(clones: Path, identity: str, clone: Path, *, replace: bool) -> None:
    """Link the index's entry for `identity` to `clone`: atomically, so that processes sharing
    the cache see the old link or the new one; only when absent or dangling unless `replace`."""
    index = clones / INDEX
    index.mkdir(exist_ok=True)
    entry, target = index / index_key(identity), f"../{clone.name}"
    if not replace:
        try:
            os.symlink(target, entry)  # fails when there is one: creation is atomic
            return
        except FileExistsError:
            if _entry(clones, identity, None) is not None:
                return
    # The writer's own name: two threads entering clones of one identity make a link each.
    temporary = index / f".{entry.name}.{os.getpid()}.{threading.get_ident()}.tmp"
    with contextlib.suppress(FileNotFoundError):
        temporary.unlink()  # a crash's leftover
    os.symlink(target, temporary)
    try:
        os.replace(temporary, entry)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def _index_old_clones(clones: Path) -> None:
    """Enter the clones made before the index, from their marker files, and record that it was
    done: the one time every clone's marker is read. Racing processes enter the same links."""
    entered = 0
    for mark in sorted(clones.glob(f"*.git/{MARK}")):
        try:
            identity = mark.read_text().strip()
            _enter(clones, identity, mark.parent, replace=False)
        except OSError as exc:
            log.debug("cannot enter the clone %s in the index: %s", mark.parent.name, exc)
            continue
        entered += 1
    try:
        write_atomically(clones / INDEX / INDEXED, b"%d\n" % entered)
    except OSError as exc:  # done again at the next lookup that finds nothing
        log.debug("cannot record the index of clones: %s", exc)
        return
    if entered:
        log.info("indexed %d clones by their repository's identity, once", entered)
