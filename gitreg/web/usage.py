"""Download counts as handlers meet them: installs counted, and the counts read back.

An install is counted under who asked and the client its User-Agent names (`count_download`).
Read back: `downloads/summary` in the public registry's shape, each version's total, and who
downloaded, to whom may see it (`ops` tokens; with `downloads.show_principals`, the namespace's
identified readers too). Every read is of one module the gate admitted the reader to: counts
never cross namespaces."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Scope

from gitreg.address import ModuleAddress
from gitreg.auth.principal import ANONYMOUS, Principal
from gitreg.errors import NotReadYet, StateUnavailable
from gitreg.modules.index import ModuleEntry
from gitreg.state.download_counts import Kind, PrincipalCount, Summary, today
from gitreg.web.state import RegistryState, state_of, world_of

log = logging.getLogger(__name__)
T = TypeVar("T")


def module_key(address: ModuleAddress) -> str:
    """A module's address as counts are kept by: folded, as registries compare addresses."""
    return "/".join(address.key)


def user_agent(scope: Scope) -> str | None:
    for key, value in scope["headers"]:
        if key == b"user-agent":
            text: str = value.decode("latin-1")
            return text
    return None


def count_download(
    state: RegistryState,
    scope: Scope,
    download: tuple[Kind, str, str],
    principal: Principal | str | None,
) -> None:
    """One install of (kind, address, version), for a GET: by `principal` (its name, or
    anonymous), with the client of the request's User-Agent. Never blocks, never fails."""
    if scope["method"] != "GET":
        return
    name = principal.name if isinstance(principal, Principal) else principal
    kind, address, version = download
    state.downloads.count(kind, address, version, name or ANONYMOUS.name, user_agent(scope))


@dataclass(frozen=True)
class ModuleCounts:
    """What a module's page, API and MCP show of its downloads; `principals` None when the
    reader may not see who downloaded."""

    summary: Summary
    by_version: dict[str, int]
    principals: list[PrincipalCount] | None = None


NO_COUNTS = ModuleCounts(Summary(), {})


def may_see_principals(request: Request, principal: Principal | None) -> bool:
    """`ops` tokens; with `downloads.show_principals`, any reader the gate identified (an
    anonymous one is no one in particular: never)."""
    if principal is None or principal is ANONYMOUS:
        return False
    return principal.ops or world_of(request).catalog.downloads.show_principals


async def module_counts(
    request: Request, entry: ModuleEntry, principal: Principal | None
) -> ModuleCounts:
    """`entry`'s counts, for a reader the gate admitted to its namespace; none (zeros) when
    counting is off or the store cannot be read now (said in the log, not to the reader)."""
    state = state_of(request)
    if not world_of(request).catalog.downloads.enabled:
        return NO_COUNTS
    store, key = state.downloads.store, module_key(entry.spec.address)
    shown = may_see_principals(request, principal)
    try:
        summary = await _read(lambda: store.summary("module", key, today()))
        versions = await _read(lambda: store.by_version("module", key))
        who = await _read(lambda: store.principals("module", key)) if shown else None
    except StateUnavailable as exc:
        log.warning("download counts of %s not read: %s", entry.spec.address, exc)
        return NO_COUNTS
    return ModuleCounts(summary, versions, who)


async def module_totals(request: Request, entries: Sequence[ModuleEntry]) -> dict[str, int]:
    """Each of `entries`' total downloads by `module_key` (a list's page, every module of which
    the reader may read); none when counting is off or the store cannot be read now."""
    if not entries or not world_of(request).catalog.downloads.enabled:
        return {}
    store, keys = state_of(request).downloads.store, [module_key(e.spec.address) for e in entries]
    try:
        return await _read(lambda: store.totals("module", keys))
    except StateUnavailable as exc:
        log.warning("download counts not read: %s", exc)
        return {}


async def summary_answer(request: Request, entry: ModuleEntry) -> Response:
    """`downloads/summary` of a module the gate admitted the reader to, as registry.terraform.io
    answers it (week, month, year, total); 503 while the counts cannot be read."""
    key = module_key(entry.spec.address)
    counted = Summary()
    if world_of(request).catalog.downloads.enabled:
        store = state_of(request).downloads.store
        try:
            counted = await _read(lambda: store.summary("module", key, today()))
        except StateUnavailable as exc:
            log.warning("download counts of %s not read: %s", entry.spec.address, exc)
            raise NotReadYet("the download counts cannot be read now") from None
    attributes = {
        "week": counted.week,
        "month": counted.month,
        "year": counted.year,
        "total": counted.total,
    }
    data = {"type": "module-downloads-summary", "id": str(entry.spec.address)}
    return JSONResponse({"data": {**data, "attributes": attributes}})


async def _read(read: Callable[[], T]) -> T:
    return await asyncio.to_thread(read)
