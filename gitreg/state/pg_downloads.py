"""Download counts in PostgreSQL (state.postgres): the table every replica adds its batches to
and reads, so that the sums agree whichever replica answers. A connection of its own, so that
counting never waits on the ledger's, nor marks the shared state degraded."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gitreg.catalog.settings import PostgresSettings
from gitreg.state.database import Database
from gitreg.state.download_counts import (
    Download,
    Kind,
    PrincipalCount,
    Summary,
    version_totals,
)

_KEY = "kind, address, version, principal, client, client_version, day"
_ADD = (
    f"INSERT INTO gitreg_downloads AS d ({_KEY}, count)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
    f" ON CONFLICT ({_KEY}) DO UPDATE SET count = d.count + excluded.count"
)
_ADD_TOTAL = (
    "INSERT INTO gitreg_download_totals AS t (kind, address, version, count)"
    " VALUES (%s, %s, %s, %s)"
    " ON CONFLICT (kind, address, version) DO UPDATE SET count = t.count + excluded.count"
)


class PostgresDownloads:
    def __init__(self, settings: PostgresSettings) -> None:
        self.db = Database(settings)

    def add(self, counts: Mapping[Download, int]) -> None:
        # Sorted, so that two replicas' batches lock shared rows in one order (no deadlock).
        rows = sorted(
            (d.kind, d.address, d.version, d.principal, d.client, d.client_version, d.day, n)
            for d, n in counts.items()
        )
        totals = version_totals(counts)
        with self.db.transaction() as conn, conn.cursor() as cursor:
            cursor.executemany(_ADD, rows)
            cursor.executemany(_ADD_TOTAL, [(*key, n) for key, n in sorted(totals.items())])

    def forget_before(self, day: int, most: int) -> int:
        with self.db.transaction() as conn:
            cursor = conn.execute(
                "DELETE FROM gitreg_downloads WHERE ctid = ANY(ARRAY("
                " SELECT ctid FROM gitreg_downloads WHERE day < %s LIMIT %s))",
                (day, most),
            )
            return cursor.rowcount

    def summary(self, kind: Kind, address: str, day: int) -> Summary:
        with self.db.transaction() as conn:
            row = conn.execute(
                "SELECT coalesce(sum(count) FILTER (WHERE day > %s), 0),"
                " coalesce(sum(count) FILTER (WHERE day > %s), 0),"
                " coalesce(sum(count) FILTER (WHERE day > %s), 0)"
                " FROM gitreg_downloads WHERE kind = %s AND address = %s",
                (day - 7, day - 30, day - 365, kind, address),
            ).fetchone()
            total = conn.execute(
                "SELECT coalesce(sum(count), 0) FROM gitreg_download_totals"
                " WHERE kind = %s AND address = %s",
                (kind, address),
            ).fetchone()
        week, month, year = row if row is not None else (0, 0, 0)
        return Summary(int(week), int(month), int(year), int(total[0]) if total else 0)

    def totals(self, kind: Kind, addresses: Sequence[str]) -> dict[str, int]:
        if not addresses:
            return {}
        with self.db.transaction() as conn:
            rows = conn.execute(
                "SELECT address, sum(count) FROM gitreg_download_totals"
                " WHERE kind = %s AND address = ANY(%s) GROUP BY address",
                (kind, list(addresses)),
            ).fetchall()
        return {str(address): int(count) for address, count in rows}

    def by_version(self, kind: Kind, address: str) -> dict[str, int]:
        with self.db.transaction() as conn:
            rows = conn.execute(
                "SELECT version, count FROM gitreg_download_totals"
                " WHERE kind = %s AND address = %s",
                (kind, address),
            ).fetchall()
        return {str(version): int(count) for version, count in rows}

    def principals(self, kind: Kind, address: str, since: int = 0) -> list[PrincipalCount]:
        with self.db.transaction() as conn:
            rows = conn.execute(
                "SELECT principal, version, client, client_version, sum(count), max(day)"
                " FROM gitreg_downloads WHERE kind = %s AND address = %s AND day >= %s"
                " GROUP BY principal, version, client, client_version"
                " ORDER BY sum(count) DESC, principal, version",
                (kind, address, since),
            ).fetchall()
        return [PrincipalCount(p, v, c, cv, int(n), int(last)) for p, v, c, cv, n, last in rows]

    def downloaded(self, kind: Kind, address: str, version: str, principal: str) -> bool:
        with self.db.transaction() as conn:
            row = conn.execute(
                "SELECT 1 FROM gitreg_downloads WHERE kind = %s AND address = %s"
                " AND version = %s AND principal = %s LIMIT 1",
                (kind, address, version, principal),
            ).fetchone()
        return row is not None

    def close(self) -> None:
        self.db.close()
