"""The text of `gitreg list`: modules with their versions, hosted providers with theirs, the
network mirror's sources, then the state of each repository."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gitreg.catalog.mirror_settings import PUBLIC_ORIGINS, MirrorSettings
from gitreg.catalog.model import Catalog
from gitreg.catalog.secrets import SecretRef
from gitreg.modules.resolve import unmatched_text
from gitreg.modules.snapshot import RegistrySnapshot
from gitreg.modules.status import StatusBoard
from gitreg.ops.reports import ModuleStatuses, iso, repository_reports
from gitreg.ops.source_reports import SourceReport, source_lines
from gitreg.providers.hosted import Providers

Out = Callable[[str], None]

_USERINFO = re.compile(r"\b([a-z][a-z0-9+.-]*://)[^/@\s]+@", re.IGNORECASE)


@dataclass(frozen=True)
class ReadFailures:
    """The module repositories `gitreg list` could not read (none of their versions is known), and
    those whose last fetch failed (listed as their clones hold them), each with why."""

    unread: tuple[tuple[str, str], ...]
    unfetched: tuple[tuple[str, str], ...]
    total: int

    @property
    def nothing_read(self) -> bool:
        return self.total > 0 and len(self.unread) == self.total

    def lines(self) -> list[str]:
        lines = []
        if self.unread:
            lines.append(f"could not read {len(self.unread)} of {self.total} repositories:")
            lines += [f"  {url}: {why}" for url, why in self.unread]
        if self.unfetched:
            lines.append(
                f"could not fetch {len(self.unfetched)} of {self.total} repositories"
                " (listed as their clones hold them):"
            )
            lines += [f"  {url}: {why}" for url, why in self.unfetched]
        return lines


def read_failures(modules: ModuleStatuses) -> ReadFailures:
    snapshot, failed, stale = modules.snapshot, [], []
    locations = [location for location, specs in snapshot.specs.items() if specs]
    for location in locations:
        url = without_userinfo(str(location))
        why = modules.unknown_versions(snapshot, location)
        last_error = modules.status[location].last_error
        if why is not None:
            failed.append((url, _plain(why, url)))
        elif last_error:
            stale.append((url, _plain(last_error, url)))
    return ReadFailures(tuple(failed), tuple(stale), len(locations))


def _plain(why: str, url: str) -> str:
    """Why, without the URL its line already starts with."""
    return without_userinfo(why).replace(f"fetch from {url} failed: ", "fetch failed: ")


def without_userinfo(text: str) -> str:
    """URLs in `text` without their user part: a token may be given as the user name
    (`https://TOKEN@host/...`), and `gitreg list`'s text is pasted into tickets."""
    return _USERINFO.sub(r"\1", text)


def print_list(
    modules: ModuleStatuses,
    providers: Providers,
    out: Out = print,
    sources: Sequence[SourceReport] = (),
) -> None:
    snapshot = modules.snapshot
    catalog = snapshot.catalog
    sections = [
        _modules(snapshot),
        _providers(catalog, providers),
        _network_mirror(catalog),
        source_lines(sources),
        _repositories(snapshot, modules.status),
        read_failures(modules).lines(),
    ]
    for i, lines in enumerate(s for s in sections if s):
        if i:
            out("")
        for line in lines:
            out(line)


def _modules(snapshot: RegistrySnapshot) -> list[str]:
    catalog, lines = snapshot.catalog, []
    for spec in catalog.modules:
        entry = snapshot.index.get(*spec.address.key)
        lines.append(f"{catalog.server.hostname}/{spec.address}")
        details = [f"repo {without_userinfo(str(spec.repo))}", f"download {spec.download}"]
        if spec.path:
            details.insert(1, f"path {spec.path}")
        details.append(f"moved tags: {spec.moved_tags}, deleted tags: {spec.deleted_tags}")
        lines.append(f"  {', '.join(details)}")
        if spec.signed_tags:
            lines.append(f"  tags must be signed: {spec.signed_tags}")
        if spec.removed:
            hidden = ", and it is left out of lists and search" if spec.hidden else ""
            lines.append(f"  removed from its source: its published versions still serve{hidden}")
        if entry is None:
            continue
        for release in entry.versions.releases:
            signed = f", signed by {release.signer}" if release.signer else ""
            lines.append(
                f"  {release.version:<24} tag {release.tag:<28} commit {release.commit[:12]}"
                + signed
            )
        for approval in spec.approvals:
            lines.append(f"  {approval.version:<24} {approval}")
        for held in entry.pending:
            release, due = held.release, iso(held.due)
            lines.append(f"  {release.version:<24} tag {release.tag:<28} pending until {due}")
        for ignored in entry.versions.ignored:
            lines.append(f"  ignored tag {ignored.tag}: {ignored.reason}")
        for change in entry.changes:
            lines.append(f"  ! {change}")
        if entry.versions.unmatched:
            unmatched = unmatched_text(spec, snapshot.tags.get(spec.repo, ()))
            templates = ", ".join(str(t) for t in spec.tags)
            fallback = f"{entry.versions.unmatched} other tags fit none of {templates}"
            lines.append(f"  ({unmatched or fallback})")
    return lines


def _providers(catalog: Catalog, providers: Providers) -> list[str]:
    lines = []
    for spec in catalog.providers:
        entry = providers.get(spec.namespace, spec.type)
        lines.append(f"  {catalog.server.hostname}/{spec}")
        details = [f"artifacts {spec.artifacts}"]
        if spec.releases is not None:
            forge = spec.releases
            details = [f"releases of {forge.project} on {forge.kind} {forge.url}"]
        if spec.repo:
            tags = ", ".join(str(t) for t in spec.tags)
            details.append(f"repo {without_userinfo(str(spec.repo))}, tags {tags}")
        lines.append(f"    {', '.join(details)}")
        if spec.removed:
            hidden = ", and it is left out of lists" if spec.hidden else ""
            lines.append(f"    removed from its source: what was fetched still serves{hidden}")
        if entry is None:
            continue
        for release in entry.releases:
            platforms = ", ".join(f"{p.os}_{p.arch}" for p in release.packages)
            lines.append(f"    {release.version:<24} {platforms}")
        for problem in entry.problems:
            lines.append(f"    refused {problem}")
        if warning := entry.warning():
            lines.append(f"    warning: {warning}")
    return ["providers", *lines] if lines else []


def _network_mirror(catalog: Catalog) -> list[str]:
    """Shown when the catalog configures it, or when it is all the registry serves (read-through
    is on by default, so every registry answers as a mirror: saying so each time is noise)."""
    mirror = catalog.mirror
    if mirror == MirrorSettings() and (catalog.modules or catalog.providers):
        return []
    lines = ["network mirror"]
    if catalog.providers:
        lines.append(f"  hosted providers, under {catalog.server.hostname}")
    lines += [f"  folder {folder}" for folder in mirror.folders]
    if not mirror.read_through:
        lines.append("  read-through: off")
        return lines
    hosts = dict.fromkeys([h for h, _ in mirror.origins] + [h for h, _ in mirror.tokens])
    public = ", ".join(PUBLIC_ORIGINS)
    lines.append(f"  read-through: on, to {public}{' and:' if hosts else ''}")
    for host in hosts:
        token = mirror.token(host)
        line = f"    {host}: {mirror.origin_url(host)}"
        lines.append(f"{line}, token {_where(token)}" if token else line)
    if mirror.ca_file:
        lines.append(f"    origins' CA: {mirror.ca_file}")
    return lines


def _where(secret: SecretRef) -> str:
    """Where a secret is kept, never the secret."""
    return f"from ${secret.env}" if secret.env else f"from {secret.file}"


def _repositories(snapshot: RegistrySnapshot, statuses: StatusBoard) -> list[str]:
    reports = repository_reports(snapshot, statuses)
    lines = ["repositories"] if reports else []
    for report in reports:
        lines.append(f"  {without_userinfo(report.url)}")
        lines.append(f"    state: {report.state}")
        lines.append(f"    last successful sync: {report.last_success or 'never'}")
        if report.last_update:
            lines.append(f"    last update: {report.last_update}, by {report.mechanism}")
        if report.last_error:
            lines.append(f"    last error: {without_userinfo(report.last_error)}")
        for moved in report.tag_changes:
            lines.append(f"    {moved.module}: {moved.kind} tag {moved.tag}, {moved.action}")
    return lines
