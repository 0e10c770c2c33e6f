"""The dependents index: for each module served, the `module` blocks that call it, each with its
constraint, the version it resolves to today and whether that one is deprecated. Built whole
from the call sites found (modules' latest versions, consumers' default branches) and replaced
whole; a reader sees the callers of namespaces it may read named, the others only counted."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal, TypeVar

from gitreg.dependents import resolution
from gitreg.dependents.sources import Key, RegistrySources, Target, shown
from gitreg.docs.model import ModuleCall
from gitreg.modules.index import ModuleEntry, VersionIndex
from gitreg.modules.resolve import Release
from gitreg.pacing import breathe

CallerKind = Literal["module", "consumer"]
Via = Literal["constraint", "ref", "modules.json", ".terraform.lock.hcl"]
T = TypeVar("T")


@dataclass(frozen=True)
class Caller:
    """Who makes a call: a module at its latest version and the folder of the block, or a
    consumer repository at its default branch's commit and the file of the block. `namespace`
    decides who may see any of it."""

    kind: CallerKind
    namespace: str
    name: str  # a module's address (ns/name/system), or the consumer repository as shown
    version: str  # the module's version; the consumer's commit
    path: str  # the module's folder ("" its root), or the consumer's file


@dataclass(frozen=True)
class CallSite:
    """One `module` block found, with the version `modules.json` recorded for it ("": none)."""

    caller: Caller
    call: ModuleCall
    recorded: str = ""


@dataclass(frozen=True)
class Dependent:
    """A call of one module: as written (the source with any credential hidden), what it
    resolves to today ("" with `unresolved` saying why) and why that version is deprecated."""

    caller: Caller
    block: str
    source: str
    constraint: str  # `version = "…"`, or a Git source's ref
    via: Via
    resolved: str = ""
    unresolved: str = ""
    deprecated: str = ""


@dataclass(frozen=True)
class Problem:
    """A consumer's file that could not be read: named to its namespace's readers only."""

    namespace: str
    repository: str
    path: str
    message: str


@dataclass(frozen=True)
class Seen:
    """A module's dependents as one reader sees them: those it may read named, the rest only
    counted (and how many of those are on a deprecated version)."""

    named: tuple[Dependent, ...] = ()
    hidden: int = 0
    hidden_deprecated: int = 0


NO_ONE = Seen()  # no caller at all


Readable = Callable[[str], bool]


class DependentsIndex:
    """Callee key → its dependents: a module's `Key`, or a provider's (namespace, type). Never
    changed after it is built."""

    def __init__(
        self,
        by_callee: Mapping[tuple[str, ...], tuple[Dependent, ...]] | None = None,
        problems: tuple[Problem, ...] = (),
        *,
        pending: int = 0,
        built: float = 0.0,
    ) -> None:
        self._by_callee = MappingProxyType(dict(by_callee or {}))
        self.problems = problems
        self.pending = pending  # modules whose latest version's calls were not read yet
        self.built = built  # Unix seconds; 0: never built

    def of(self, key: tuple[str, ...]) -> tuple[Dependent, ...]:
        return self._by_callee.get(key, ())

    def seen_by(self, key: tuple[str, ...], readable: Readable) -> Seen:
        named, hidden, hidden_deprecated = [], 0, 0
        for dependent in self.of(key):
            if readable(dependent.caller.namespace):
                named.append(dependent)
            else:
                hidden += 1
                hidden_deprecated += bool(dependent.deprecated)
        return Seen(tuple(named), hidden, hidden_deprecated)

    def problems_seen_by(self, readable: Readable) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if readable(p.namespace))

    def __len__(self) -> int:
        return sum(len(d) for d in self._by_callee.values())


def module_sites(
    index: VersionIndex,
    calls_of: Callable[[ModuleEntry, Release], Iterable[tuple[str, ModuleCall]] | None],
) -> tuple[list[CallSite], int]:
    """Each module's latest version's calls (those the docs warming put in memory), and how
    many modules' are not there yet. The latest alone: an older version's calls are history,
    which its callers' own versions pin; and the warming reads the latest of every module."""
    found, pending = latest_reads(index, calls_of)
    return [CallSite(caller, call) for caller, call in found], pending


def latest_reads(
    index: VersionIndex, read: Callable[[ModuleEntry, Release], Iterable[tuple[str, T]] | None]
) -> tuple[list[tuple[Caller, T]], int]:
    """What `read` finds in each module's latest version, by folder, each with the module as
    its caller; and how many modules `read` has nothing for yet (None)."""
    found: list[tuple[Caller, T]] = []
    pending = 0
    for entry in index.entries():
        if not entry.versions.releases:
            continue
        latest = entry.versions.releases[0]
        items = read(entry, latest)
        if items is None:
            pending += 1
            continue
        address = entry.spec.address
        for folder, item in items:
            caller = Caller("module", address.namespace, str(address), latest.version, folder)
            found.append((caller, item))
        breathe()
    return found, pending


def build(
    index: VersionIndex,
    sources: RegistrySources,
    sites: Iterable[CallSite],
    problems: tuple[Problem, ...] = (),
    pending: int = 0,
    constraints: resolution.Constraints | None = None,
) -> DependentsIndex:
    """The index of `sites`' calls of `index`'s modules (paced work: a rest offered at each)."""
    found: dict[Key, list[Dependent]] = {}
    constraints = constraints or resolution.Constraints()
    for site in sites:
        target = sources.target(site.call.source)
        breathe()
        if target is None:
            continue
        for key in target.keys:
            entry = index.get(*key)
            if entry is None or _calls_itself(site.caller, entry):
                continue
            dependent = _dependent(site, entry, target, constraints)
            found.setdefault(key, []).append(dependent)
    ordered: dict[tuple[str, ...], tuple[Dependent, ...]] = {
        key: tuple(
            sorted(deps, key=lambda d: (d.caller.kind, d.caller.name, d.caller.path, d.block))
        )
        for key, deps in found.items()
    }
    return DependentsIndex(ordered, problems, pending=pending, built=time.time())


def _order(dependent: Dependent) -> tuple[str, str, str, str]:
    caller = dependent.caller
    return (caller.kind, caller.name, caller.path, dependent.block)


def _calls_itself(caller: Caller, entry: ModuleEntry) -> bool:
    return caller.kind == "module" and caller.name.lower() == str(entry.spec.address).lower()


def _dependent(
    site: CallSite, entry: ModuleEntry, target: Target, constraints: resolution.Constraints
) -> Dependent:
    call, by_git, ref = site.call, target.by_git, target.ref
    via: Via
    if site.recorded:
        release, why = resolution.by_version(entry, site.recorded)
        via, constraint = "modules.json", ref if by_git else call.version
    elif by_git:
        release, why = resolution.by_ref(entry, ref)
        via, constraint = "ref", ref
    else:
        release, why = constraints.by_constraint(entry, call.version)
        via, constraint = "constraint", call.version
    deprecated = (entry.deprecation(release) or "") if release is not None else ""
    return Dependent(
        caller=site.caller,
        block=call.name,
        source=shown(call.source),
        constraint=constraint,
        via=via,
        resolved=release.version if release is not None else "",
        unresolved=why,
        deprecated=deprecated,
    )
