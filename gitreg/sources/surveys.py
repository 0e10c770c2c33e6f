"""Each source's last survey, and the catalog it makes: registry.yaml's modules and providers
and, beside them, the found ones `settle` serves. Kept in memory and in `cache_dir/sources.json`,
so that a restart with a forge down serves what was found."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, replace

from gitreg.catalog.model import Catalog
from gitreg.catalog.specs import SourceSpec
from gitreg.sources import persisted
from gitreg.sources.claims import Settlement, settle
from gitreg.sources.declared import DeclarationFiles
from gitreg.sources.found import Lister
from gitreg.sources.listers import opened_lister
from gitreg.sources.stats import Counted, Outcome, SourceTotals
from gitreg.sources.survey import Survey, survey

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Composed:
    """A catalog to serve: registry.yaml's (`declared`), and with the found modules and
    providers settled beside its own (`served`)."""

    declared: Catalog
    served: Catalog
    settlement: Settlement


class SourceSurveys:
    def __init__(self, catalog: Catalog, clock: Callable[[], float] = time.time) -> None:
        self.declared = catalog  # registry.yaml's catalog, as last served
        self.settlement = Settlement()
        self._clock = clock
        self._lock = threading.Lock()
        self._found = persisted.load(catalog.cache_dir, catalog.sources)
        self._totals: dict[str, SourceTotals] = {}  # identity → this process's surveys

    def composed(self, catalog: Catalog) -> Composed:
        """`catalog` (registry.yaml's) with the modules its sources' last surveys found, settled;
        nothing kept until it is adopted (`adopt`), once it serves."""
        with self._lock:
            found = [
                self._found[key]
                for key in map(persisted.identity, catalog.sources)
                if key in self._found
            ]
        settlement = settle(catalog.modules, found, catalog.providers)
        served = catalog
        if settlement.served:
            served = replace(served, modules=catalog.modules + settlement.specs)
        if settlement.providers:
            served = replace(served, providers=catalog.providers + settlement.provider_specs)
        return Composed(catalog, served, settlement)

    def adopt(self, composed: Composed) -> None:
        """`composed` serves now: its registry.yaml is the catalog later surveys add to,
        and its settlement the one status and list report."""
        with self._lock:
            self.declared, self.settlement = composed.declared, composed.settlement

    def served(self, catalog: Catalog) -> Catalog:
        """`composed(catalog)`, adopted at once (a start, `gitreg list`, `gitreg check`)."""
        composed = self.composed(catalog)
        self.adopt(composed)
        return composed.served

    def last(self, spec: SourceSpec) -> Survey | None:
        with self._lock:
            return self._found.get(persisted.identity(spec))

    def survey(self, spec: SourceSpec, lister: Lister | None = None, write: bool = True) -> bool:
        """One survey of `spec` (blocking: run it in a thread), kept, and written to
        cache_dir unless `write` is False (`gitreg check`); True when the modules or providers
        it serves changed."""
        catalog = self.declared
        key = persisted.identity(spec)
        last = self.last(spec)
        read = DeclarationFiles(catalog)
        with (
            opened_lister(spec, catalog.credentials)
            if lister is None
            else nullcontext(lister) as listing
        ):
            found = survey(
                spec,
                listing,
                read,
                last,
                self._clock(),
                catalog.auth,
                catalog.freshness.poll_concurrency,
                cache_dir=catalog.cache_dir,
            )
        stats = listing.stats if isinstance(listing, Counted) else None
        with self._lock:
            self._found[key] = found
            totals = self._totals.get(key, SourceTotals())
            self._totals[key] = totals.after(_outcome(found), stats)
            every = dict(self._found)
        if found.error and found.error != (last.error if last else ""):
            serving = "serving its last discovery" if found.at else "nothing discovered yet"
            log.warning("%s: %s; %s", spec, found.error, serving)
        if found.held and found.held != (last.held if last else ""):
            log.warning("%s: %s", spec, found.held)
        try:
            if write:
                persisted.save(catalog.cache_dir, every)
        except OSError as exc:  # a full disk: served from memory, surveyed again at a restart
            log.warning("cannot write %s: %s", catalog.cache_dir / persisted.FILE, exc)
        before = (last.modules, last.providers) if last else ((), ())
        return (found.modules, found.providers) != before

    def follow(self) -> bool:
        """Take what another worker surveyed since (`cache_dir/sources.json`, which the
        workers of `serve --workers` share): a source's survey there, applied later than
        this process's, replaces it. True when what the sources serve changed."""
        catalog = self.declared
        stored = persisted.load(catalog.cache_dir, catalog.sources)
        changed = False
        with self._lock:
            for key, theirs in stored.items():
                mine = self._found.get(key)
                if mine is not None and theirs.at <= mine.at:
                    continue
                self._found[key] = theirs
                before = (mine.modules, mine.providers) if mine else ((), ())
                changed |= (theirs.modules, theirs.providers) != before
        return changed

    def totals(self, spec: SourceSpec) -> SourceTotals:
        """What this process's surveys of `spec` counted (zeros before the first)."""
        with self._lock:
            return self._totals.get(persisted.identity(spec), SourceTotals())

    def surveys(self) -> list[tuple[SourceSpec, Survey | None]]:
        """Each source of the catalog served, with its last survey (None: not yet)."""
        return [(spec, self.last(spec)) for spec in self.declared.sources]


def _outcome(found: Survey) -> Outcome:
    if found.refused:
        return "refused"
    if found.error:
        return "unavailable"
    return "held" if found.held else "ok"  # a drop of more than half, not applied
