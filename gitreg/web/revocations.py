"""Revoked versions as handlers meet them: left out for who never installed them, kept for who did.

The download ledger decides (`usage/installed.py`). Anonymous readers, and tokens only a Git
server vouches for, share one name in it: `downloads.revoked_for_anonymous` decides what they
get. When the ledger cannot be read, a revoked version is kept: an outage must not break the
pins of those who installed it (said in the log). See docs/deprecations.md."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from starlette.requests import Request

from gitreg.auth.principal import ANONYMOUS, GIT, Principal
from gitreg.errors import Revoked, StateUnavailable
from gitreg.modules.index import ModuleEntry
from gitreg.modules.resolve import Release
from gitreg.state.download_counts import Kind
from gitreg.web.kept import ByInstalls, Made
from gitreg.web.state import state_of, world_of
from gitreg.web.usage import module_key

log = logging.getLogger(__name__)


async def withheld(
    request: Request,
    kind: Kind,
    address: str,
    revoked: frozenset[str],
    principal: Principal | None,
) -> frozenset[str]:
    """Of the `revoked` versions of `address`, those the reader never installed: left out of
    its `versions` answer and refused at download."""
    if not revoked:
        return revoked
    if principal is None or principal is ANONYMOUS or principal is GIT:
        kept = world_of(request).catalog.downloads.revoked_for_anonymous == "kept"
        return frozenset() if kept else revoked
    return frozenset(
        [v for v in revoked if not await installed(request, kind, address, v, principal.name)]
    )


async def installed(request: Request, kind: Kind, address: str, version: str, name: str) -> bool:
    """Whether `name` installed `version` of `address` within the retention (True when the
    ledger cannot be read now)."""
    ledger = state_of(request).installed
    known = ledger.known(kind, address, version, name)
    if known is not None:
        return known
    try:
        return await asyncio.to_thread(ledger.ask, kind, address, version, name)
    except StateUnavailable as exc:
        log.warning("revoked %s %s kept for %s: no ledger: %s", address, version, name, exc)
        return True


async def refuse_revoked(
    request: Request,
    kind: Kind,
    address: str,
    version: str,
    reason: str | None,
    principal: Principal | None,
) -> None:
    """Raise Revoked (410, with `reason`) when `version` is revoked (`reason` not None) and the
    reader never installed it."""
    if reason is None:
        return
    if await withheld(request, kind, address, frozenset((version,)), principal):
        raise Revoked(
            f"{address} {version} is revoked: {reason.rstrip('.')}. It installs only where it"
            " was installed before: choose another version"
        )


async def listed(
    request: Request, entry: ModuleEntry, principal: Principal | None
) -> tuple[Release, ...]:
    """`entry`'s releases as modules.v1 lists them to the reader: without the revoked versions
    it never installed."""
    if not entry.revoked:
        return entry.versions.releases
    key = module_key(entry.spec.address)
    hidden = await withheld(request, "module", key, entry.revoked, principal)
    return tuple(r for r in entry.versions.releases if r.version not in hidden)


def by_installs(
    request: Request,
    kind: Kind,
    address: str,
    revoked: frozenset[str],
    make: Callable[[frozenset[str]], Made],
    made: tuple[frozenset[str], Made],
) -> ByInstalls:
    """How a kept `versions` answer of `address` is made for each reader (`web/kept.py`):
    `make` gives the answer without the versions the reader never installed; `made`, the one
    the handler made, for the versions it left out."""
    kept = world_of(request).catalog.downloads.revoked_for_anonymous == "kept"
    readers = ByInstalls(kind, address, revoked, frozenset() if kept else revoked, make)
    readers.made[made[0]] = made[1]
    return readers
