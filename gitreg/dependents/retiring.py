"""The retiring report: the retired versions of some namespaces' modules, and who still uses them.

Each retired version (deprecated; and revoked, once revocation is in) comes with its downloads
of the last N days, who downloaded it, and the callers whose constraint resolves to it today. A
version nobody downloaded in those days and no caller resolves to is safe to remove. Callers in
namespaces the reader may not read are counted, never named; who downloaded is left out for a
reader who may not see it."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from gitreg.dependents.index import Dependent, DependentsIndex, Readable
from gitreg.errors import ClientError
from gitreg.modules.index import ModuleEntry
from gitreg.modules.resolve import Release
from gitreg.pacing import breathe
from gitreg.state.download_counts import DAY, PrincipalCount

RetiredKind = Literal["deprecated", "revoked"]
DAYS = 30  # the days the report counts downloads over, unless told
_DAYS = re.compile(r"[0-9]{1,7}")


@dataclass(frozen=True)
class Retirement:
    """Why a version is retired: its kind and the reason registry.yaml or `.gitreg.yaml` gives."""

    kind: RetiredKind
    reason: str


# Each way a module version is retired, asked in order: the first that answers is the one shown.
MODULE_RETIREMENTS: tuple[tuple[RetiredKind, Callable[[ModuleEntry, Release], str | None]], ...] = (
    ("revoked", ModuleEntry.revocation),
    ("deprecated", ModuleEntry.deprecation),
)


def retirement(entry: ModuleEntry, release: Release) -> Retirement | None:
    """Why `release` of `entry` is retired, or None while it is not."""
    for kind, reason_of in MODULE_RETIREMENTS:
        if reason := reason_of(entry, release):
            return Retirement(kind, reason)
    return None


@dataclass(frozen=True)
class RetiredVersion:
    """One retired version as the report shows it to one reader. `downloads` is None when
    installs are not counted; `downloaded_by` None when the reader may not see who."""

    version: str
    retired: Retirement
    downloads: int | None
    downloaded_by: tuple[PrincipalCount, ...] | None
    callers: tuple[Dependent, ...]  # named: in namespaces the reader may read
    hidden_callers: int  # in namespaces it may not

    @property
    def called(self) -> int:
        return len(self.callers) + self.hidden_callers

    @property
    def used(self) -> bool:
        """Still downloaded within the days, or still called."""
        return bool(self.downloads) or self.called > 0


@dataclass(frozen=True)
class RetiringModule:
    address: str  # NS/NAME/SYSTEM, as registry.yaml writes it
    namespace: str
    versions: tuple[RetiredVersion, ...]  # newest first


@dataclass(frozen=True)
class RetiringReport:
    """The retired versions of the modules of the namespaces asked about. `complete`: every
    caller is known (the dependents index read every module); until it is, and while installs
    are not counted, no version is said to be safe to remove."""

    days: int
    since: int  # the first day counted, as days since 1970-01-01
    counting: bool
    complete: bool
    built: float  # when the dependents index was built (Unix seconds; 0: never)
    modules: tuple[RetiringModule, ...]

    def safe(self, version: RetiredVersion) -> bool:
        return self.counting and self.complete and not version.used

    @property
    def still_used(self) -> int:
        return sum(v.used for m in self.modules for v in m.versions)


def report_days(given: str | None, retention: float) -> int:
    """`?days=` or `--days`: a whole number from 1 to the days the counts are kept (DAYS, or the
    retention if shorter, when not given); ClientError says what is wrong."""
    most = max(1, int(retention // DAY))
    if given is None:
        return min(DAYS, most)
    if not _DAYS.fullmatch(given) or not 1 <= int(given) <= most:
        kept = f"from 1 to {most} (downloads.retention)"
        raise ClientError(f"days must be a whole number {kept}, not {given[:40]!r}")
    return int(given)


# A module's downloads since the report's first day: who, which version, which client, how
# often (a call of the download store).
RecentDownloads = Callable[[ModuleEntry], Sequence[PrincipalCount]]


def retiring_report(
    entries: Iterable[ModuleEntry],
    dependents: DependentsIndex,
    recent: RecentDownloads | None,
    readable: Readable,
    *,
    show_principals: bool,
    days: int,
    since: int,
) -> RetiringReport:
    """The report of `entries` (those of the namespaces asked about, every one readable); with
    `recent` None, installs are not counted. Blocks while the store is read (StateUnavailable
    when it cannot be)."""
    modules = []
    for entry in entries:
        retired = [(r, why) for r in entry.versions.releases if (why := retirement(entry, r))]
        if not retired:
            continue
        rows = recent(entry) if recent is not None else ()
        calls = dependents.of(entry.spec.address.key)
        versions = tuple(
            _version(release.version, why, rows, calls, readable, show_principals, recent)
            for release, why in retired
        )
        address = entry.spec.address
        modules.append(RetiringModule(str(address), address.namespace, versions))
        breathe()
    modules.sort(key=lambda m: m.address.lower())
    return RetiringReport(
        days=days,
        since=since,
        counting=recent is not None,
        complete=dependents.built > 0 and dependents.pending == 0,
        built=dependents.built,
        modules=tuple(modules),
    )


def _version(
    version: str,
    why: Retirement,
    rows: Sequence[PrincipalCount],
    calls: Sequence[Dependent],
    readable: Readable,
    show_principals: bool,
    recent: RecentDownloads | None,
) -> RetiredVersion:
    mine = tuple(r for r in rows if r.version == version)
    resolving = [d for d in calls if d.resolved == version]
    named = tuple(d for d in resolving if readable(d.caller.namespace))
    return RetiredVersion(
        version=version,
        retired=why,
        downloads=sum(r.count for r in mine) if recent is not None else None,
        downloaded_by=mine if show_principals and recent is not None else None,
        callers=named,
        hidden_callers=len(resolving) - len(named),
    )
