"""`/v1/status` and `/metrics`: the registry's state, for operators and for Prometheus.

`/v1/status` gives, per repository, the last sync, the last error, what last updated it, and the
published tags that moved or were deleted; readiness, naming the repositories; per hosted
provider, its versions and the releases refused, and why; the hosts read-through asked and how
they did; the installs counted and the counts lost. `/metrics` gives the same, and the network
mirror's requests. See docs/reference/metrics.md."""

from __future__ import annotations

import time
from dataclasses import asdict

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from gitreg.ops.metrics import ProviderCollector, ServingMemory, exposition
from gitreg.ops.pending_reports import pending_reports
from gitreg.ops.provider_reports import origin_reports, provider_reports
from gitreg.ops.readiness import readiness
from gitreg.ops.reports import repository_reports
from gitreg.ops.source_reports import source_reports
from gitreg.web import access
from gitreg.web.state import state_of, world_of


async def status(request: Request) -> JSONResponse:
    await access.admit(request, "ops", "/v1/status")
    state = state_of(request)
    modules, side = state.modules, world_of(request).side
    origin = side.read_through.origin if side.read_through else None
    sources = state.current.sources
    pending = [str(entry.spec) for entry in side.providers.entries() if entry.pending]
    return JSONResponse(
        {
            "repositories": [
                asdict(r) for r in repository_reports(world_of(request).snapshot, modules.status)
            ],
            # /readyz in full: with auth:, anyone gets its counts and reason codes alone.
            "readiness": readiness(
                modules, time.time(), state.started, providers_pending=pending
            ).body(),
            "sources": [
                asdict(r)
                for r in source_reports(sources.surveys(), sources.settlement, sources.totals)
            ],
            "providers": [asdict(r) for r in provider_reports(side.providers)],
            "mirror_origins": [asdict(h) for h in origin_reports(origin)],
            "archives_refused": [
                {"archive": name, "reason": reason}
                for name, reason in sorted(state.archives.refused().items())
            ],
            # Built here with bytes other than the ledger's digest: 503, never served.
            "archives_mismatched": [
                {"archive": name, "reason": reason}
                for name, reason in sorted(state.archives.mismatched().items())
            ],
            "auth": {
                "on": world_of(request).gate.on,
                "requests": [
                    {"principal": principal, "outcome": outcome, "count": n}
                    for (principal, outcome), n in sorted(state.auth_counts.items())
                ],
            },
            # Installs counted in this process; a store out of reach loses counts, not requests.
            "downloads": asdict(state.downloads.status()),
            # Versions publish_when holds back; one waiting past its warn_after carries a warning.
            "pending_versions": [
                asdict(r) for r in pending_reports(world_of(request).snapshot, modules.clock())
            ],
        }
    )


async def metrics(request: Request) -> Response:
    await access.admit(request, "ops", "/metrics")
    state = state_of(request)
    modules, side = state.modules, world_of(request).side
    origin = side.read_through.origin if side.read_through else None
    providers = ProviderCollector(side.providers, origin, state.mirror_counts)
    archives = state.held_archives
    memory = ServingMemory(archives.held_bytes, len(archives), archives.budget, len(state.kept))
    body = exposition(
        modules,
        state.webhook_counts,
        providers,
        state.auth_counts,
        state.current.sources,
        memory,
        state.downloads.status(),
    )
    return Response(body, media_type="text/plain; version=0.0.4; charset=utf-8")
