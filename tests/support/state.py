"""The serving state as `gitreg serve` builds it (`open_world`, then `RegistryState.build`), with
its clones read before the first request, as a test wants: fetched first, or read from what
they hold (as `serve` does, in the background)."""

from __future__ import annotations

from collections.abc import Callable

from gitreg.catalog.model import Catalog
from gitreg.freshness.fresh_reads import FreshReads
from gitreg.freshness.live import open_world
from gitreg.oci.referrers import Attached
from gitreg.pacing import UNPACED, Budget
from gitreg.web.state import RegistryState


def serving_state(
    catalog: Catalog,
    fetch: bool | None = True,
    on_swap: Callable[[], None] | None = None,
    fresh_wait: float | None = None,
    budget: Budget = UNPACED,
    attached: Attached | None = None,
    clock: Callable[[], float] | None = None,
) -> RegistryState:
    """`fetch`: None reads nothing (the app's lifespan reads it, as `serve` does: create_app's
    `start`). `fresh_wait`: how long a fresh read waits for its repository (FreshReads' own
    default without it). `budget`: the process's CPU budget, as `serve` hands it. `attached`:
    what module versions carry as OCI referrers, instead of the registry's own producers.
    `clock`: the module sync's, by which versions `publish_when` holds back come due."""
    current, sync = open_world(catalog, on_swap=on_swap, budget=budget)
    if clock is not None:
        sync.clock = clock
    if fetch is None:
        return RegistryState.build(current, sync, budget=budget, attached=attached)
    if fetch:
        sync.refresh()
    else:
        sync.read_clones()
    current.world.side.providers.refresh(poll_forges=fetch)  # forges read first too, with `fetch`
    fresh_reads = FreshReads(sync, wait=fresh_wait) if fresh_wait is not None else None
    return RegistryState.build(current, sync, fresh_reads, budget=budget, attached=attached)
