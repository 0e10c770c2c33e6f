"""A new clone seeded from the clone of the same repository at another URL (a Git server that
moved to another host name spelling, port or scheme): its objects are fetched from the old clone
on disk, under refs of gitreg's own, so that the first fetch from the new URL negotiates with
them and brings only what differs, not every object again. The seed refs are dropped after
that fetch; the tags served come from the new URL alone.

Each clone names its repository's identity (`RepoLocation.identity`: host and path, whatever the
scheme, port or user) in a file of its own, so a donor is found by reading those files."""

from __future__ import annotations

import logging
from pathlib import Path

from gitreg.git.git_command import GitFailed, run_git

log = logging.getLogger(__name__)

MARK = "gitreg-identity"  # in a clone's folder: the identity of the repository it clones
SEED_REFS = "refs/gitreg/seed/"


def mark(clone: Path, identity: str) -> None:
    """Name the clone's repository, once (a clone made before this was kept, too)."""
    path = clone / MARK
    if not path.is_file():
        try:
            path.write_text(identity + "\n")
        except OSError as exc:  # only a later move's seeding is lost
            log.debug("cannot write %s: %s", path, exc)


def donor(clones: Path, identity: str, new: Path) -> Path | None:
    """Another clone of the same repository in `clones`, or None."""
    for path in sorted(clones.glob(f"*.git/{MARK}")):
        if path.parent == new:
            continue
        try:
            if path.read_text().strip() == identity:
                return path.parent
        except OSError:
            continue
    return None


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
