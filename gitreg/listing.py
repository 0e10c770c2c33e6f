"""The text of `gitreg list`: modules with their versions, then the state of each repository."""

from __future__ import annotations

from collections.abc import Callable

from gitreg.registry import Registry
from gitreg.report import repository_reports


def print_listing(registry: Registry, out: Callable[[str], None] = print) -> None:
    catalog = registry.catalog
    for spec in catalog.modules:
        entry = registry.index.get(*spec.address.key)
        out(f"{catalog.hostname}/{spec.address}")
        details = [f"repo {spec.repo}", f"download {spec.download}"]
        if spec.path:
            details.insert(1, f"path {spec.path}")
        details.append(f"moved tags: {spec.moved_tags}, deleted tags: {spec.deleted_tags}")
        out(f"  {', '.join(details)}")
        if entry is None:
            continue
        for release in entry.versions.releases:
            out(f"  {release.version:<24} tag {release.tag:<28} commit {release.commit[:12]}")
        for ignored in entry.versions.ignored:
            out(f"  ignored tag {ignored.tag}: {ignored.reason}")
        for change in entry.changes:
            out(f"  ! {change}")
        if entry.versions.unmatched:
            templates = ", ".join(str(t) for t in spec.tags)
            out(f"  ({entry.versions.unmatched} other tags fit none of: {templates})")
    out("")
    out("repositories")
    for report in repository_reports(registry):
        out(f"  {report.url}")
        out(f"    last successful sync: {report.last_success or 'never'}")
        if report.last_update:
            out(f"    last update: {report.last_update}, by {report.mechanism}")
        if report.last_error:
            out(f"    last error: {report.last_error}")
        for moved in report.tag_changes:
            out(f"    {moved.module}: {moved.kind} tag {moved.tag}, {moved.action}")
