"""The dependents index served, rebuilt whole off the event loop when its inputs change.

Its inputs: the snapshot swapped, the docs warming read more modules, the consumers were read
again, or the hosted providers' versions changed. Requests read `current` (modules) and
`providers` (hosted providers), each one whole index; a rebuild is paced work (`pacing.paced`), at
most one at a time and one every `REBUILD_EVERY` seconds, while warming fills the docs."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Protocol

from gitreg.dependents.consumers import ConsumerReads, ConsumersRead
from gitreg.dependents.index import DependentsIndex, build, module_sites
from gitreg.dependents.provider_index import HostedProviders, build_providers, hosted_versions
from gitreg.dependents.provider_uses import module_uses
from gitreg.dependents.resolution import Constraints
from gitreg.dependents.sources import RegistrySources
from gitreg.docs.service import DocsService
from gitreg.modules.snapshot import RegistrySnapshot
from gitreg.pacing import paced

log = logging.getLogger(__name__)

CHECK_EVERY = 1.0  # seconds between looks at what the index is built from
REBUILD_EVERY = 5.0  # seconds at least between two rebuilds (each reads every module's calls)


@dataclass(frozen=True)
class _Inputs:
    """What an index was built from: the snapshot and the consumers' reading (each replaced
    whole, so compared by identity), and how many docs had been read into memory."""

    snapshot: RegistrySnapshot
    read: ConsumersRead
    loads: int
    forgotten: int
    hosted: tuple[tuple[object, ...], ...] = ()  # provider_index.hosted_versions

    def same(self, other: _Inputs | None) -> bool:
        return (
            other is not None
            and self.snapshot is other.snapshot
            and self.read is other.read
            and (self.loads, self.forgotten) == (other.loads, other.forgotten)
            and self.hosted == other.hosted
        )


class Snapshots(Protocol):
    @property
    def snapshot(self) -> RegistrySnapshot: ...


class Dependents:
    """The current dependents indexes, of modules and of hosted providers (`hosted`: those
    served now), and the consumers' reads they are built with."""

    def __init__(
        self,
        docs: DocsService,
        consumers: ConsumerReads,
        hosted: Callable[[], HostedProviders] | None = None,
    ) -> None:
        self.docs = docs
        self.consumers = consumers
        self.hosted = hosted
        self.current = DependentsIndex()
        self.providers = DependentsIndex()
        self.rebuilds = 0
        self._constraints = Constraints()  # what every rebuild parses alike, parsed once
        self._built_from: _Inputs | None = None

    def rebuild(self, snapshot: RegistrySnapshot) -> DependentsIndex:
        """A new index of what `snapshot`, the docs and the consumers hold now; swapped in."""
        sources = RegistrySources.of(snapshot.catalog)
        sites, pending = module_sites(snapshot.index, self.docs.module_calls)
        read = self.consumers.current
        sites = [*sites, *read.sites]
        index = build(snapshot.index, sources, sites, read.problems, pending, self._constraints)
        if self.hosted is not None:
            uses, pending = module_uses(snapshot.index, self.docs.provider_requirements)
            self.providers = build_providers(
                self.hosted(),
                sources.hosts,
                [*uses, *read.uses],
                read.problems,
                pending,
                self._constraints,
            )
        self.current = index
        self.rebuilds += 1
        return index

    def _inputs(self, snapshot: RegistrySnapshot) -> _Inputs:
        hosted = hosted_versions(self.hosted()) if self.hosted is not None else ()
        read = self.consumers.current
        return _Inputs(snapshot, read, self.docs.loads, self.docs.forgotten, hosted)

    async def keep(
        self,
        modules: Snapshots,
        *,
        every: float = CHECK_EVERY,
        rest: float = REBUILD_EVERY,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        """Rebuild the index whenever its inputs changed, at most every `rest` seconds; runs
        until cancelled."""
        while True:
            snapshot = modules.snapshot
            inputs = self._inputs(snapshot)
            if not inputs.same(self._built_from):
                started = time.monotonic()
                try:
                    index = await paced(partial(self.rebuild, snapshot))
                    self._built_from = inputs
                    log.debug(
                        "dependents: %d calls indexed in %.2f s (%d modules not read yet)",
                        len(index),
                        time.monotonic() - started,
                        index.pending,
                    )
                except Exception:  # a bug here must not end the keeping for good
                    log.exception("building the dependents index failed; trying again")
                await sleep(rest)
            await sleep(every)
