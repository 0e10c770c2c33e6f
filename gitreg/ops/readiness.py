"""Readiness (`/readyz`): the catalog loaded, every repository's versions known, none too stale.

A repository's versions are known once fetched or read from its clone; with
`readiness.max_staleness` set, none may have been last synced (fetched, or its remote's tags
listed) longer ago than that. Anyone may ask: with auth: the answer holds counts and reason codes
alone (`public_body`), never a repository's URL or Git's words; the details are in /v1/status,
behind the ops permission. See docs/reference/http-api.md."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from gitreg.ops.reports import ModuleStatuses, iso
from gitreg.state.shared import SharedState


@dataclass(frozen=True)
class Readiness:
    waiting: list[dict[str, str]]  # versions unknown yet: never fetched, and no clone
    stale: list[dict[str, str]]  # served from their clone while their Git server fails
    outdated: list[dict[str, Any]]  # last synced longer ago than max_staleness
    max_staleness: float  # seconds; 0: not checked
    # The shared state (PostgreSQL) cannot be reached: still ready, as it serves what the
    # database confirmed and publishes nothing new; a 503 would take every replica out of the
    # load balancer at once for one database outage.
    degraded: str | None = None

    @property
    def ready(self) -> bool:
        return not self.waiting and not self.outdated

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "ready": self.ready,
            "waiting": self.waiting,
            "stale": self.stale,
            "outdated": self.outdated,
            "max_staleness": self.max_staleness or None,
            "degraded": self.degraded is not None,
        }
        if self.degraded is not None:
            body["state"] = f"{self.degraded}: serving what it confirmed, publishing no new tag"
        return body

    def public_body(self) -> dict[str, Any]:
        """What anyone may read when the registry is private: how many repositories are in
        each state and why it is unready, as codes; no URL, name or error text."""
        reasons = [
            code
            for code, found in (
                ("versions_unknown", self.waiting),
                ("older_than_max_staleness", self.outdated),
                ("git_server_failing", self.stale),
                ("shared_state_unavailable", self.degraded),
            )
            if found
        ]
        return {
            "ready": self.ready,
            "waiting": len(self.waiting),
            "stale": len(self.stale),
            "outdated": len(self.outdated),
            "reasons": reasons,
            "max_staleness": self.max_staleness or None,
            "degraded": self.degraded is not None,
            "details": "/v1/status (a token with ops: true)",
        }


class ReadinessModules(ModuleStatuses, Protocol):
    """What readiness reads of the module sync: what reports read, and the shared state, which
    may be degraded."""

    @property
    def shared(self) -> SharedState: ...


def readiness(
    modules: ReadinessModules,
    now: float,
    started: float,
    providers_read: bool = True,
    providers_pending: Sequence[str] = (),
) -> Readiness:
    """The registry's readiness at `now` (seconds since the epoch); a repository never synced is
    as old as the server (`started`), so one served from its clone while its Git server has
    been down since the start turns outdated too, once the bound has passed. `providers_read`:
    the release folders were scanned once (a server scans them as it starts);
    `providers_pending`: providers whose forge was not read yet, with none of its releases in
    cache_dir (a new replica's)."""
    snapshot = modules.snapshot
    bound = snapshot.catalog.freshness.max_staleness
    waiting: list[dict[str, str]] = []
    stale, outdated = [], []
    if not providers_read:
        reason = "being read (the server just started)"
        waiting.append({"providers": "the release folders", "reason": reason})
    for provider in providers_pending:
        reason = "its releases are being read from its forge (none in cache_dir yet)"
        waiting.append({"provider": provider, "reason": reason})
    for location in snapshot.clones:
        status = modules.status[location]
        unknown = modules.unknown_versions(snapshot, location)
        if unknown is not None:
            waiting.append({"repository": str(location), "reason": unknown})
            continue
        if status.last_error is not None:
            stale.append({"repository": str(location), "last_error": status.last_error})
        if not bound:
            continue
        synced = status.last_success
        age = now - (synced if synced is not None else started)
        if age > bound:
            since = "last synced" if synced is not None else "not synced since the start,"
            reason = f"{since} {age:.0f} s ago, longer than max_staleness ({bound:g} s)"
            if status.last_error:
                reason += f"; last error: {status.last_error}"
            outdated.append(
                {
                    "repository": str(location),
                    "last_success": iso(synced),
                    "age_seconds": round(age),
                    "reason": reason,
                }
            )
    return Readiness(waiting, stale, outdated, bound, modules.shared.problem())
