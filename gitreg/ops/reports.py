"""Per-repository state for people: `gitreg list` prints it, `/v1/status` serves it as JSON."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Protocol

from gitreg.git.location import RepoLocation
from gitreg.modules.signed_tags import refused
from gitreg.modules.snapshot import RegistrySnapshot
from gitreg.modules.status import StatusBoard


class ModuleStatuses(Protocol):
    """What reports read of the module sync: the snapshot served, each repository's status,
    and why a repository's versions are not known yet."""

    @property
    def snapshot(self) -> RegistrySnapshot: ...

    @property
    def status(self) -> StatusBoard: ...

    def unknown_versions(
        self, snapshot: RegistrySnapshot, location: RepoLocation
    ) -> str | None: ...


@dataclass(frozen=True)
class TagChangeReport:
    module: str
    tag: str
    kind: str  # moved | deleted
    published: str
    current: str | None
    action: str  # pinned | followed | quarantined | kept | removed | withheld


@dataclass(frozen=True)
class RefusedTagReport:
    """A tag left out under `require_signed_tags`, and why (its signature, or none)."""

    module: str
    tag: str
    reason: str


@dataclass(frozen=True)
class RepositoryReport:
    url: str
    modules: list[str]
    state: str  # ok | failing (serving what it read before) | never fetched
    last_success: str | None
    last_error: str | None
    last_update: str | None
    mechanism: str | None
    tag_changes: list[TagChangeReport]
    refused_tags: list[RefusedTagReport]


def repository_reports(snapshot: RegistrySnapshot, statuses: StatusBoard) -> list[RepositoryReport]:
    reports = []
    for location, specs in snapshot.specs.items():
        if not specs:
            continue  # a repository only providers use
        status = statuses[location]
        changes, refusals = [], []
        for spec in specs:
            entry = snapshot.index.get(*spec.address.key)
            for tag in refused(entry.versions) if entry else ():
                refusals.append(RefusedTagReport(str(spec.address), tag.tag, tag.reason))
            for change in entry.changes if entry else ():
                changes.append(
                    TagChangeReport(
                        str(spec.address),
                        change.tag,
                        change.kind,
                        change.published,
                        change.current,
                        change.action,
                    )
                )
        reports.append(
            RepositoryReport(
                url=str(location),
                modules=[str(spec.address) for spec in specs],
                state=status.state,
                last_success=iso(status.last_success),
                last_error=status.last_error,
                last_update=iso(status.last_update),
                mechanism=status.mechanism,
                tag_changes=changes,
                refused_tags=refusals,
            )
        )
    return reports


def iso(when: float | None) -> str | None:
    if when is None:
        return None
    return datetime.datetime.fromtimestamp(when, datetime.UTC).isoformat(timespec="seconds")
