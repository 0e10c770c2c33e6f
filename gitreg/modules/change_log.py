"""What a sync changed, said in the log: new versions, newly ignored tags and new tag changes,
each once. A start or a reload says what it read in one summary line (read_summary.py), and
each module's detail at DEBUG."""

from __future__ import annotations

import logging

from gitreg.modules.index import ModuleEntry
from gitreg.modules.status import Mechanism

log = logging.getLogger("gitreg.modules.sync")  # the sync's own lines: one logger to follow

_SUMMED_UP: frozenset[Mechanism] = frozenset({"startup", "reload"})


def served(entries: list[ModuleEntry]) -> dict[tuple[str, str, str], object]:
    """What `entries` serve, to compare two reads of a repository."""
    return {e.spec.address.key: (e.spec, e.versions, e.changes) for e in entries}


def log_changes(
    previous: list[ModuleEntry], current: list[ModuleEntry], mechanism: Mechanism
) -> None:
    """At DEBUG for a start or a reload; at INFO for the rest (a tag change: a WARNING)."""
    level = logging.DEBUG if mechanism in _SUMMED_UP else logging.INFO
    before = {e.spec.address.key: e for e in previous}
    for entry in current:
        old = before.get(entry.spec.address.key)
        releases = entry.versions.releases
        if old is None:  # the first read: one line per module, not one per version
            newest = f", newest {releases[0].version}" if releases else ""
            log.log(
                level,
                "%s: %d versions%s (%s)",
                entry.spec.address,
                len(releases),
                newest,
                mechanism,
            )
        else:
            for release in sorted(set(releases) - set(old.versions.releases), key=lambda r: r.tag):
                log.log(
                    level,
                    "%s: new version %s (tag %s, commit %s; %s)",
                    entry.spec.address,
                    release.version,
                    release.tag,
                    release.commit[:12],
                    mechanism,
                )
        old_ignored = set(old.versions.ignored) if old else set()
        for ignored in entry.versions.ignored:
            if ignored not in old_ignored:
                log.log(
                    level,
                    "%s: ignoring tag %s: %s",
                    entry.spec.address,
                    ignored.tag,
                    ignored.reason,
                )
        old_changes = set(old.changes) if old else set()
        for change in entry.changes:
            if change not in old_changes:
                log.warning("%s: %s", entry.spec.address, change)
