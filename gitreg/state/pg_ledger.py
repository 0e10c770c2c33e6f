"""The ledger of one repository in PostgreSQL, shared by every replica: the first replica to
record a tag decides its commit (INSERT ... ON CONFLICT DO NOTHING, then read back what won).

What the database last confirmed is kept in a file too: while the database is away, a replica
serves those tags, and no other; a tag first seen then waits until the database decides it.
Archives' digests likewise: the first replica to record one decides it for all."""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping
from typing import Any

import psycopg

from gitreg.catalog.settings import PostgresSettings
from gitreg.errors import StateUnavailable
from gitreg.state.database import Database, connect, describe
from gitreg.state.ledger import DiskLedger, Published, published_digest


class PostgresLedger:
    def __init__(self, db: Database, repository: str, confirmed: DiskLedger) -> None:
        self.db = db
        self.repository = repository
        self.confirmed = confirmed  # what the database last said, for when it is away
        self._version: object = None

    def version(self) -> object:
        try:
            with self.db.transaction() as conn:
                row = conn.execute(
                    "SELECT count(*), coalesce(max(first_seen), 0),"
                    " count(*) FILTER (WHERE pending) FROM gitreg_published"
                    " WHERE repository = %s",
                    (self.repository,),
                ).fetchone()
        except StateUnavailable:
            return self._version  # unknown: no change to act on
        self._version = tuple(row) if row else None
        return self._version

    def fingerprint(self) -> str:
        return published_digest(self.read())

    def read(self) -> dict[str, Published]:
        try:
            return self._read_shared()
        except StateUnavailable:
            return self.confirmed.read()

    def record(
        self, tags: Mapping[str, str], pending: Collection[str] = (), now: float | None = None
    ) -> dict[str, Published]:
        now = time.time() if now is None else now
        rows = [(self.repository, t, c, now, t in pending) for t, c in sorted(tags.items())]
        with self.db.transaction() as conn:
            with conn.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO gitreg_published (repository, tag, commit_id, first_seen, pending)"
                    " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (repository, tag) DO NOTHING",
                    rows,
                )
            published = self._select(conn)
        self.confirmed.replace(published)
        return published

    def publish(self, tags: Collection[str]) -> dict[str, Published]:
        with self.db.transaction() as conn:
            conn.execute(
                "UPDATE gitreg_published SET pending = false"
                " WHERE repository = %s AND tag = ANY(%s) AND pending",
                (self.repository, sorted(tags)),
            )
            published = self._select(conn)
        self.confirmed.replace(published)
        return published

    def accept(self, tag: str, commit: str) -> None:
        with self.db.transaction() as conn:
            row = conn.execute(
                "SELECT commit_id FROM gitreg_published WHERE repository = %s AND tag = %s"
                " FOR UPDATE",
                (self.repository, tag),
            ).fetchone()
            conn.execute(
                "INSERT INTO gitreg_published"
                " (repository, tag, commit_id, first_seen, accepted) VALUES (%s, %s, %s, %s, true)"
                " ON CONFLICT (repository, tag) DO UPDATE SET commit_id = excluded.commit_id,"
                " first_seen = excluded.first_seen, accepted = true",
                (self.repository, tag, commit, time.time()),
            )
            conn.execute(
                "INSERT INTO gitreg_decisions (repository, tag, previous_commit, commit_id)"
                " VALUES (%s, %s, %s, %s)",
                (self.repository, tag, row[0] if row else None, commit),
            )
        self._read_shared()

    def digest(self, archive: str) -> str | None:
        try:
            with self.db.transaction() as conn:
                row = conn.execute(
                    "SELECT digest FROM gitreg_archive_digests WHERE repository = %s"
                    " AND archive = %s",
                    (self.repository, archive),
                ).fetchone()
        except StateUnavailable:
            return self.confirmed.digest(archive)
        return str(row[0]) if row else None

    def record_digest(self, archive: str, digest: str) -> str:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO gitreg_archive_digests (repository, archive, digest)"
                " VALUES (%s, %s, %s) ON CONFLICT (repository, archive) DO NOTHING",
                (self.repository, archive, digest),
            )
            row = conn.execute(
                "SELECT digest FROM gitreg_archive_digests WHERE repository = %s AND archive = %s",
                (self.repository, archive),
            ).fetchone()
        recorded = str(row[0]) if row else digest
        self.confirmed.record_digest(archive, recorded)
        return recorded

    def _read_shared(self) -> dict[str, Published]:
        with self.db.transaction() as conn:
            published = self._select(conn)
        self.confirmed.replace(published)
        return published

    def _select(self, conn: psycopg.Connection[Any]) -> dict[str, Published]:
        rows = conn.execute(
            "SELECT tag, commit_id, first_seen, pending FROM gitreg_published"
            " WHERE repository = %s",
            (self.repository,),
        ).fetchall()
        return {tag: Published(c, seen, bool(pending)) for tag, c, seen, pending in rows}


def all_digests(settings: PostgresSettings) -> list[tuple[str, str, str]]:
    """Every (repository URL, archive file name, digest) the replicas recorded, read on a
    connection of its own: a command's one read migrates nothing and logs no warning that the
    registry is degraded. StateUnavailable, in gitreg's words, when it cannot be read."""
    with connect(settings) as conn:
        try:
            rows = conn.execute(
                "SELECT repository, archive, digest FROM gitreg_archive_digests"
            ).fetchall()
        except psycopg.errors.UndefinedTable:
            return []  # no replica has brought this database's schema this far: none recorded
        except psycopg.Error as exc:
            raise StateUnavailable(f"PostgreSQL: {describe(exc)}") from None
    return [(str(repository), str(archive), str(digest)) for repository, archive, digest in rows]
