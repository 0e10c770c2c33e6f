"""Per source, for people: its last survey (its "discovery", as people read it), what it found,
what it skipped and why, what is removed, held or in conflict. `gitreg list` prints it,
`/v1/status` serves it as JSON."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gitreg.catalog.specs import SourceSpec
from gitreg.git.location import redact
from gitreg.ops.reports import iso
from gitreg.sources.claims import Settlement
from gitreg.sources.stats import OUTCOMES, SourceTotals
from gitreg.sources.survey import Survey


@dataclass(frozen=True)
class SkippedReport:
    repository: str
    why: str


@dataclass(frozen=True)
class SourceReport:
    source: str  # its key path, kind, server and scope: never its token
    state: str  # ok | failing (serving its last discovery) | refused | held | never discovered
    last_discovery: str | None
    error: str | None
    held: str | None
    repositories: list[str]
    modules: list[str]  # served from it
    providers: list[str]  # served from it: each repository's releases on the forge
    removed: list[str]  # repositories gone or archived: their published versions still serve
    hidden: list[str]  # of those, left out of lists and search (on_removed: hide)
    skipped: list[SkippedReport]
    set_aside: list[str]  # its modules registry.yaml's own entries name: theirs serve
    conflicts: list[str]  # addresses it claims with another repository: neither serves
    problems: list[str]  # repositories whose .gitreg.yaml is refused
    notes: list[str]
    # This process's surveys of it, by outcome (ok, unavailable, refused, held), and what
    # their listings counted: the forge's API answers, rate-limit waits and errors.
    discoveries: dict[str, int]  # a key of /v1/status: "discovery" is the surveys' public name
    api_calls: int
    rate_limit_waits: int
    errors: int


def _none(spec: SourceSpec) -> SourceTotals:
    return SourceTotals()


def source_reports(
    surveys: Sequence[tuple[SourceSpec, Survey | None]],
    settlement: Settlement,
    totals: Callable[[SourceSpec], SourceTotals] = _none,
) -> list[SourceReport]:
    return [_report(spec, found, settlement, totals(spec)) for spec, found in surveys]


def _report(
    spec: SourceSpec, found: Survey | None, settled: Settlement, totals: SourceTotals
) -> SourceReport:
    found = found or Survey(spec.key_path, 0.0)
    served = [m for m in settled.served if m.source == spec.key_path]
    providers = [p for p in settled.providers if p.source == spec.key_path]
    mine = f"{spec.key_path} "
    conflicts = [str(c) for c in settled.conflicts if any(x.startswith(mine) for x in c.claims)]
    return SourceReport(
        source=str(spec),
        state=_state(found),
        last_discovery=iso(found.at) if found.at else None,
        error=found.error or None,
        held=found.held or None,
        repositories=list(found.repositories),
        modules=[str(m.spec.address) for m in served],
        providers=[f"{p.spec} ({p.repository})" for p in providers],
        removed=list(found.removed),
        hidden=list(found.hidden),
        skipped=[SkippedReport(s.repository, redact(s.why)) for s in found.skipped],
        set_aside=[
            f"{m.spec.address} ({m.repository}): registry.yaml's modules: lists it"
            for m in settled.shadowed
            if m.source == spec.key_path
        ]
        + [
            f"provider {p.spec} ({p.repository}): registry.yaml's providers: lists it"
            for p in settled.shadowed_providers
            if p.source == spec.key_path
        ],
        conflicts=conflicts,
        problems=list(found.problems),
        notes=list(found.notes),
        discoveries={outcome: totals.surveys[outcome] for outcome in OUTCOMES},
        api_calls=totals.api_calls,
        rate_limit_waits=totals.rate_limit_waits,
        errors=totals.errors,
    )


def _state(found: Survey) -> str:
    if found.refused:
        return "refused"
    if found.error:
        return "failing (serving its last discovery)" if found.at else "failing"
    if found.held:
        return "held"
    return "ok" if found.at else "never discovered"


def source_lines(reports: Sequence[SourceReport]) -> list[str]:
    """The sources' part of `gitreg list`."""
    lines = ["sources"] if reports else []
    for r in reports:
        lines.append(f"  {r.source}")
        lines.append(f"    state: {r.state}")
        lines.append(f"    last discovery: {r.last_discovery or 'never'}")
        for label, text in (("error", r.error), ("held", r.held)):
            if text:
                lines.append(f"    {label}: {text}")
        lines.append(
            f"    found {len(r.repositories)} repositories, serving {len(r.modules)} modules"
        )
        lines += [f"      {address}" for address in r.modules]
        if r.providers:
            lines.append(f"    serving {len(r.providers)} providers, from their releases")
            lines += [f"      {provider}" for provider in r.providers]
        for repository in r.removed:
            hidden = ", hidden from lists" if repository in r.hidden else ""
            lines.append(f"    removed {repository}: its published versions still serve{hidden}")
        lines += [f"    skipped {s.repository}: {s.why}" for s in r.skipped]
        lines += [f"    set aside {text}" for text in r.set_aside]
        lines += [f"    conflict: {text}" for text in r.conflicts]
        lines += [f"    problem: {text}" for text in r.problems]
        lines += [f"    note: {text}" for text in r.notes]
        if ran := sum(r.discoveries.values()):  # this run surveyed it (`list --fetch`)
            outcomes = ", ".join(f"{n} {o}" for o, n in r.discoveries.items() if n)
            lines.append(
                f"    this run: {ran} discoveries ({outcomes}), {r.api_calls} API calls,"
                f" {r.rate_limit_waits} rate-limit waits, {r.errors} errors"
            )
    return lines
