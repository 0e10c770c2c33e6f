"""Download counts as stored: one row per (kind, address, version, principal, client, day)
with its count, and each version's total kept past the rows' retention. `DownloadStore` is
what the counting asks of a store; SQLite under cache_dir (`sqlite_downloads.py`) and
PostgreSQL under `state:` (`pg_downloads.py`) are the two."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

Kind = Literal["module", "provider"]
DAY = 86400


def today(now: float | None = None) -> int:
    """The UTC day of `now` (the time now when None), as days since 1970-01-01."""
    return int((time.time() if now is None else now) // DAY)


def day_text(day: int) -> str:
    """A day (days since 1970-01-01) as its date, `2026-12-06`."""
    return time.strftime("%Y-%m-%d", time.gmtime(day * DAY))


@dataclass(frozen=True, slots=True)
class Download:
    """What one install is counted by. `address`: `NS/NAME/SYSTEM` of a module, `NS/TYPE` of a
    hosted provider, `HOST/NS/TYPE` of another registry's (the network mirror's); `principal`:
    its name as the gate knows it, never a token; `client`: terraform, opentofu or other."""

    kind: Kind
    address: str
    version: str
    principal: str
    client: str
    client_version: str
    day: int


def version_totals(counts: Mapping[Download, int]) -> dict[tuple[Kind, str, str], int]:
    """A batch's counts summed by (kind, address, version): what each version's total gains."""
    totals: dict[tuple[Kind, str, str], int] = {}
    for d, n in counts.items():
        key = (d.kind, d.address, d.version)
        totals[key] = totals.get(key, 0) + n
    return totals


@dataclass(frozen=True, slots=True)
class Summary:
    """Downloads of the last 7, 30 and 365 days (today's included), and ever."""

    week: int = 0
    month: int = 0
    year: int = 0
    total: int = 0


@dataclass(frozen=True, slots=True)
class PrincipalCount:
    """Who downloaded a version with which client, how often, and the last day they did."""

    principal: str
    version: str
    client: str
    client_version: str
    count: int
    last_day: int


def principal_json(counted: PrincipalCount) -> dict[str, str | int]:
    """Who downloaded a version, with which client, how often, and the last day (UTC), as every
    answer that shows it does."""
    return {
        "principal": counted.principal,
        "version": counted.version,
        "client": counted.client,
        "client_version": counted.client_version,
        "downloads": counted.count,
        "last_day": day_text(counted.last_day),
    }


class DownloadStore(Protocol):
    """Where counts are kept. Every method blocks; a store out of reach (a full disk, a file
    that is locked, unwritable or corrupt, a database down) raises StateUnavailable."""

    def add(self, counts: Mapping[Download, int]) -> None:
        """Add each count to its row (made when new) and to its version's total, at once."""

    def forget_before(self, day: int, most: int) -> int:
        """Delete at most `most` rows of days before `day`; return how many were."""

    def summary(self, kind: Kind, address: str, day: int) -> Summary:
        """An address's downloads up to `day` (today)."""

    def totals(self, kind: Kind, addresses: Sequence[str]) -> dict[str, int]:
        """Each address's total downloads (those never downloaded left out)."""

    def by_version(self, kind: Kind, address: str) -> dict[str, int]:
        """An address's total downloads per version."""

    def principals(self, kind: Kind, address: str, since: int = 0) -> list[PrincipalCount]:
        """Who downloaded an address's versions within the retention (on day `since` or after),
        most downloads first."""

    def downloaded(self, kind: Kind, address: str, version: str, principal: str) -> bool:
        """Whether `principal` downloaded `version` of `address` within the retention."""

    def close(self) -> None: ...
