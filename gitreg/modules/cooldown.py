"""`publish_when`'s cooldown: which of a module's versions wait, and until when.

A version younger than `min_age` is pending: left out of the versions every route serves and
kept beside them with the time it is due. Its age counts from its tag's creation: the tagger
date of an annotated tag, else when the ledger first saw the tag (so replicas and restarts
agree). Once the ledger holds a tag as published it is never held back again: a longer
`min_age` later does not take back what was served."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import NamedTuple

from gitreg.catalog.approvals import approval_of
from gitreg.catalog.specs import ModuleSpec
from gitreg.modules.resolve import ModuleVersions, Release
from gitreg.state.ledger import Published


class PendingRelease(NamedTuple):
    """A version held back: the release, when its age counts from, and when it is published."""

    release: Release
    since: float
    due: float


def held(spec: ModuleSpec) -> bool:
    """Whether `spec`'s new versions wait for anything."""
    return spec.publish_when is not None and spec.publish_when.min_age > 0


def held_back(
    spec: ModuleSpec,
    versions: ModuleVersions,
    ledger: Mapping[str, Published],
    tagged: Mapping[str, float],
    now: float,
) -> tuple[ModuleVersions, tuple[PendingRelease, ...]]:
    """`versions` without those still too young at `now`, and those, oldest due first.
    `tagged` is each annotated tag's tagger time, by tag name."""
    rule = spec.publish_when
    if rule is None or rule.min_age <= 0:
        return versions, ()
    served: list[Release] = []
    pending: list[PendingRelease] = []
    for release in versions.releases:
        recorded = ledger.get(release.tag)
        if recorded is not None and not recorded.pending:
            served.append(release)
            continue
        if approval_of(spec.approvals, release.version) is not None:
            served.append(release)  # approved in approvals.yaml: published before its time
            continue
        seen = recorded.first_seen if recorded is not None else now
        since = tagged.get(release.tag, seen)
        due = since + rule.min_age
        if due <= now:
            served.append(release)
        else:
            pending.append(PendingRelease(release, since, due))
    if not pending:
        return versions, ()
    pending.sort(key=lambda p: p.due)
    return replace(versions, releases=tuple(served)), tuple(pending)
