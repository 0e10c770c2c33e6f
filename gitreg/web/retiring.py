"""`GET /v1/namespaces/:namespace/retiring` and `GET /v1/retiring`: the retiring report, of one
namespace for its readers, or of every namespace the reader may read. The namespace's route is
admitted by the gate before anything is looked up, so a reader outside it learns nothing (the
same refusal whether it exists or not); the list of every namespace is filtered, never refused.
Who downloaded is shown as the download counts show it (`web/usage.py`)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from functools import partial

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from gitreg.address import name_problem
from gitreg.auth.principal import Principal
from gitreg.dependents.retiring import RetiringReport, report_days, retiring_report
from gitreg.dependents.retiring_answers import report_json
from gitreg.errors import ClientError, NotFound, NotReadYet, StateUnavailable
from gitreg.modules.index import ModuleEntry
from gitreg.state.download_counts import PrincipalCount, today
from gitreg.web import access
from gitreg.web.state import state_of, world_of
from gitreg.web.usage import may_see_principals, module_key

log = logging.getLogger(__name__)


async def namespace_report(request: Request) -> Response:
    """One namespace's retired versions, for a reader of it (docs/usage.md)."""
    namespace = request.path_params["namespace"]
    if len(namespace) > 64:
        raise ClientError(f"namespace is {len(namespace)} characters long; at most 64 are allowed")
    if problem := name_problem(namespace, "namespace"):
        raise ClientError(problem)
    days = _days(request)
    await access.admit(request, "read", f"namespace {namespace}", namespace)
    # Who reads, asked again: a public namespace admits anyone without asking which token they
    # sent, and that token decides which callers are named and whether principals are shown.
    reader = await access.reader_of(request)
    world, folded = world_of(request), namespace.lower()
    entries = [e for e in world.snapshot.index.entries() if e.spec.address.key[0] == folded]
    providers = world.side.providers.entries()
    if not entries and not any(p.spec.namespace.lower() == folded for p in providers):
        raise NotFound(f"no namespace {namespace} on this registry")
    report = await _report(request, entries, reader, days)
    return JSONResponse(report_json(report, namespace))


async def readable_report(request: Request) -> Response:
    """The retired versions of every namespace the reader may read (none: an empty report)."""
    days = _days(request)
    reader = await access.reader_of(request)
    readable = access.may_read(request, reader)
    entries = [
        e for e in world_of(request).snapshot.index.entries() if readable(e.spec.address.namespace)
    ]
    return JSONResponse(report_json(await _report(request, entries, reader, days)))


async def page_report(
    request: Request, namespace: str, reader: Principal | None
) -> RetiringReport | None:
    """The report a namespace's page shows its reader (over DAYS days): None when nothing is
    retired, the reader may not read the namespace, or the counts cannot be read now."""
    if not access.may_read(request, reader)(namespace):
        return None
    world, folded = world_of(request), namespace.lower()
    entries = [e for e in world.snapshot.index.entries() if e.spec.address.key[0] == folded]
    days = report_days(None, world.catalog.downloads.retention)
    try:
        report = await _report(request, entries, reader, days)
    except NotReadYet:
        return None
    return report if report.modules else None


def _days(request: Request) -> int:
    for name in request.query_params:
        if name != "days":
            raise ClientError(f"unknown parameter {name[:40]!r}: the report takes only days")
    retention = world_of(request).catalog.downloads.retention
    return report_days(request.query_params.get("days"), retention)


async def _report(
    request: Request, entries: Sequence[ModuleEntry], reader: Principal | None, days: int
) -> RetiringReport:
    """The report of `entries`, each of which `reader` may read; 503 while the download counts
    cannot be read."""
    world = world_of(request)
    store = state_of(request).downloads.store
    since = today() - days + 1

    def recent(entry: ModuleEntry) -> Sequence[PrincipalCount]:
        return store.principals("module", module_key(entry.spec.address), since)

    build = partial(
        retiring_report,
        entries,
        state_of(request).dependents.current,
        recent if world.catalog.downloads.enabled else None,
        access.may_read(request, reader),
        show_principals=may_see_principals(request, reader),
        days=days,
        since=since,
    )
    try:
        return await asyncio.to_thread(build)
    except StateUnavailable as exc:
        log.warning("the retiring report's download counts not read: %s", exc)
        raise NotReadYet("the download counts cannot be read now") from None
