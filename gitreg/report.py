"""Per-repository state for people: `gitreg list` prints it, `/v1/status` serves it as JSON."""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from gitreg.registry import Registry


@dataclass(frozen=True)
class TagChangeReport:
    module: str
    tag: str
    kind: str  # moved | deleted
    published: str
    current: str | None
    action: str  # pinned | followed | quarantined | kept | removed


@dataclass(frozen=True)
class RepositoryReport:
    url: str
    modules: list[str]
    last_success: str | None
    last_error: str | None
    last_update: str | None
    mechanism: str | None
    tag_changes: list[TagChangeReport]


def repository_reports(registry: Registry) -> list[RepositoryReport]:
    reports = []
    for location, specs in registry.specs.items():
        status = registry.status[location]
        changes = []
        for spec in specs:
            entry = registry.index.get(*spec.address.key)
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
                last_success=_iso(status.last_success),
                last_error=status.last_error,
                last_update=_iso(status.last_update),
                mechanism=status.mechanism,
                tag_changes=changes,
            )
        )
    return reports


def _iso(when: float | None) -> str | None:
    if when is None:
        return None
    return datetime.datetime.fromtimestamp(when, datetime.UTC).isoformat(timespec="seconds")
