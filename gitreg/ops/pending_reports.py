"""The versions `publish_when` holds back, for people: `/v1/status`, `gitreg list` and metrics.

A version pending for longer than its rule's `warn_after` carries a warning: a cooldown is
meant to end, and one that does not is worth a look."""

from __future__ import annotations

from dataclasses import dataclass

from gitreg.modules.snapshot import RegistrySnapshot
from gitreg.ops.reports import iso


@dataclass(frozen=True)
class PendingReport:
    module: str
    version: str
    tag: str
    since: str | None  # when its age counts from: the tagger date, or the ledger's first sight
    publishes_at: str | None
    age_seconds: int
    warning: str | None  # set when it has waited past `publish_when.warn_after`


def pending_reports(snapshot: RegistrySnapshot, now: float) -> list[PendingReport]:
    """Every version held back in `snapshot` at `now`, by module then due time."""
    reports = []
    for entry in snapshot.index.entries():
        rule = entry.spec.publish_when
        for held in entry.pending:
            age = max(0.0, now - held.since)
            warning = None
            if rule is not None and rule.warn_after and age > rule.warn_after:
                warning = f"pending {age / 3600:.1f} h, past warn_after"
            reports.append(
                PendingReport(
                    str(entry.spec.address),
                    held.release.version,
                    held.release.tag,
                    iso(held.since),
                    iso(held.due),
                    int(age),
                    warning,
                )
            )
    return sorted(reports, key=lambda r: (r.module, r.publishes_at or ""))
