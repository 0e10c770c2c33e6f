"""The retiring report as it is answered: JSON for the API and `gitreg usage --retiring --json`,
and lines of text for the command. Only what the report names is named; the rest is a count."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from gitreg.dependents.answers import dependent_json, dependent_line
from gitreg.dependents.retiring import RetiredVersion, RetiringReport
from gitreg.state.download_counts import day_text, principal_json

Json = dict[str, Any]


def report_json(report: RetiringReport, namespace: str | None = None) -> Json:
    """`GET /v1/namespaces/NS/retiring`'s body (and `/v1/retiring`'s, `namespace` None)."""
    built = datetime.fromtimestamp(report.built, UTC) if report.built else None
    head: Json = {"namespace": namespace} if namespace is not None else {}
    return {
        **head,
        "days": report.days,
        "since": day_text(report.since),
        "counting": report.counting,
        "index": {
            "built_at": built.isoformat().replace("+00:00", "Z") if built else None,
            "complete": report.complete,
        },
        "still_used": report.still_used,
        "modules": [
            {
                "module": module.address,
                "versions": [_version_json(report, v) for v in module.versions],
            }
            for module in report.modules
        ],
    }


def _version_json(report: RetiringReport, version: RetiredVersion) -> Json:
    answer: Json = {
        "version": version.version,
        "kind": version.retired.kind,
        "reason": version.retired.reason,
        "downloads": version.downloads,
    }
    if version.downloaded_by is not None:
        answer["downloaded_by"] = [principal_json(p) for p in version.downloaded_by]
    return {
        **answer,
        "callers": [dependent_json(d) for d in version.callers],
        "hidden_callers": version.hidden_callers,
        "safe_to_remove": report.safe(version),
    }


def report_lines(report: RetiringReport, what: str) -> list[str]:
    """The report as `gitreg usage --retiring` prints it; `what` names the namespaces."""
    retired = sum(len(m.versions) for m in report.modules)
    lines = [
        f"{what}: {retired} retired versions, {report.still_used} still used"
        f" (downloads since {day_text(report.since)}, the last {report.days} days)"
    ]
    if not report.counting:
        lines.append("installs are not counted (downloads: {enabled: false}): callers only")
    if not report.complete:
        lines.append("not every module's calls are read yet: callers may be missing")
    for module in report.modules:
        for version in module.versions:
            lines.extend(_version_lines(report, module.address, version))
    return lines


def _version_lines(report: RetiringReport, module: str, version: RetiredVersion) -> list[str]:
    retired = version.retired
    lines = [f"{module} {version.version} {retired.kind.upper()}: {retired.reason}"]
    if report.safe(version):
        return [*lines, f"  safe to remove: no download in {report.days} days, no caller"]
    if version.downloads is not None:
        lines.append(f"  downloads: {version.downloads}")
    for row in version.downloaded_by or ():
        client = f"{row.client} {row.client_version}".strip()
        lines.append(f"    {row.principal} ({client}): {row.count}, last {day_text(row.last_day)}")
    lines.append(f"  callers: {version.called}")
    lines.extend(f"    {dependent_line(d)}" for d in version.callers)
    if version.hidden_callers:
        lines.append(f"    and {version.hidden_callers} in namespaces not shown")
    return lines
