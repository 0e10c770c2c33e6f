"""Download counts in a SQLite file under cache_dir (the default, without `state:`).

WAL mode, so that the workers of one host write and read the one file; each write a batch in
one transaction. A file that cannot be opened or written (a full disk, a lock held too long, a
corrupt or unwritable file) is a StateUnavailable, and the connection is opened again at the
next use: the counts of that batch are lost, the requests are not."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from gitreg.errors import StateUnavailable
from gitreg.state.download_counts import (
    Download,
    Kind,
    PrincipalCount,
    Summary,
    version_totals,
)

T = TypeVar("T")
BUSY_TIMEOUT = 2.0  # seconds a write waits for another process's

_KEY = "kind, address, version, principal, client, client_version, day"
_SCHEMA = (
    f"""CREATE TABLE IF NOT EXISTS downloads (
        kind TEXT NOT NULL, address TEXT NOT NULL, version TEXT NOT NULL,
        principal TEXT NOT NULL, client TEXT NOT NULL, client_version TEXT NOT NULL,
        day INTEGER NOT NULL, count INTEGER NOT NULL, UNIQUE ({_KEY}))""",
    "CREATE INDEX IF NOT EXISTS downloads_day ON downloads (day)",
    """CREATE TABLE IF NOT EXISTS download_totals (
        kind TEXT NOT NULL, address TEXT NOT NULL, version TEXT NOT NULL,
        count INTEGER NOT NULL, PRIMARY KEY (kind, address, version))""",
)
_ADD = (
    f"INSERT INTO downloads ({_KEY}, count) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
    f" ON CONFLICT ({_KEY}) DO UPDATE SET count = count + excluded.count"
)
_ADD_TOTAL = (
    "INSERT INTO download_totals (kind, address, version, count) VALUES (?, ?, ?, ?)"
    " ON CONFLICT (kind, address, version) DO UPDATE SET count = count + excluded.count"
)


class SqliteDownloads:
    """The counts in `path`, opened at first use."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def add(self, counts: Mapping[Download, int]) -> None:
        rows = [(*_key(d), n) for d, n in counts.items()]
        totals = version_totals(counts)

        def write(conn: sqlite3.Connection) -> None:
            with conn:
                conn.executemany(_ADD, rows)
                conn.executemany(_ADD_TOTAL, [(*key, n) for key, n in totals.items()])

        self._use(write)

    def forget_before(self, day: int, most: int) -> int:
        def forget(conn: sqlite3.Connection) -> int:
            with conn:
                return conn.execute(
                    "DELETE FROM downloads WHERE rowid IN"
                    " (SELECT rowid FROM downloads WHERE day < ? LIMIT ?)",
                    (day, most),
                ).rowcount

        return self._use(forget)

    def summary(self, kind: Kind, address: str, day: int) -> Summary:
        def read(conn: sqlite3.Connection) -> Summary:
            week, month, year = conn.execute(
                "SELECT coalesce(sum(CASE WHEN day > ? THEN count END), 0),"
                " coalesce(sum(CASE WHEN day > ? THEN count END), 0),"
                " coalesce(sum(CASE WHEN day > ? THEN count END), 0)"
                " FROM downloads WHERE kind = ? AND address = ?",
                (day - 7, day - 30, day - 365, kind, address),
            ).fetchone()
            (total,) = conn.execute(
                "SELECT coalesce(sum(count), 0) FROM download_totals"
                " WHERE kind = ? AND address = ?",
                (kind, address),
            ).fetchone()
            return Summary(int(week), int(month), int(year), int(total))

        return self._use(read)

    def totals(self, kind: Kind, addresses: Sequence[str]) -> dict[str, int]:
        def read(conn: sqlite3.Connection) -> dict[str, int]:
            marks = ", ".join("?" * len(addresses))
            rows = conn.execute(
                "SELECT address, sum(count) FROM download_totals"
                f" WHERE kind = ? AND address IN ({marks}) GROUP BY address",
                (kind, *addresses),
            )
            return {str(address): int(count) for address, count in rows}

        return self._use(read) if addresses else {}

    def by_version(self, kind: Kind, address: str) -> dict[str, int]:
        def read(conn: sqlite3.Connection) -> dict[str, int]:
            rows = conn.execute(
                "SELECT version, count FROM download_totals WHERE kind = ? AND address = ?",
                (kind, address),
            )
            return {str(version): int(count) for version, count in rows}

        return self._use(read)

    def principals(self, kind: Kind, address: str, since: int = 0) -> list[PrincipalCount]:
        def read(conn: sqlite3.Connection) -> list[PrincipalCount]:
            rows = conn.execute(
                "SELECT principal, version, client, client_version, sum(count), max(day)"
                " FROM downloads WHERE kind = ? AND address = ? AND day >= ?"
                " GROUP BY principal, version, client, client_version"
                " ORDER BY sum(count) DESC, principal, version",
                (kind, address, since),
            )
            return [PrincipalCount(*row) for row in rows]

        return self._use(read)

    def downloaded(self, kind: Kind, address: str, version: str, principal: str) -> bool:
        def read(conn: sqlite3.Connection) -> bool:
            row = conn.execute(
                "SELECT 1 FROM downloads WHERE kind = ? AND address = ? AND version = ?"
                " AND principal = ? LIMIT 1",
                (kind, address, version, principal),
            ).fetchone()
            return row is not None

        return self._use(read)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _use(self, work: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            try:
                if self._conn is None:
                    self._conn = self._open()
                return work(self._conn)
            except (sqlite3.Error, OSError) as exc:
                if self._conn is not None:
                    self._conn.close()
                    self._conn = None
                raise StateUnavailable(f"the download counts in {self.path}: {exc}") from None

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, check_same_thread=False)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            with conn:
                for statement in _SCHEMA:
                    conn.execute(statement)
        except sqlite3.Error:
            conn.close()
            raise
        return conn


def _key(d: Download) -> tuple[str, str, str, str, str, str, int]:
    return (d.kind, d.address, d.version, d.principal, d.client, d.client_version, d.day)
