"""The shared state's tables, created and migrated by gitreg itself: each step once, in order,
under a transaction-scoped advisory lock, so replicas that start at once take turns."""

from __future__ import annotations

from typing import Any

import psycopg

from gitreg.errors import StateUnavailable

LOCK = 0x67697472_6567  # "gitreg": the advisory lock that serialises migrations

# Each step: the statements that take the schema from the version before it to its own.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        # The ledger: the first commit seen per (repository, tag); `accepted` when an operator's
        # `gitreg accept` decided it instead.
        """CREATE TABLE gitreg_published (
            repository text NOT NULL,
            tag text NOT NULL,
            commit_id text NOT NULL,
            first_seen double precision NOT NULL,
            accepted boolean NOT NULL DEFAULT false,
            PRIMARY KEY (repository, tag)
        )""",
        # Every `gitreg accept`, for the record.
        """CREATE TABLE gitreg_decisions (
            id bigserial PRIMARY KEY,
            repository text NOT NULL,
            tag text NOT NULL,
            previous_commit text,
            commit_id text NOT NULL,
            decided_at timestamptz NOT NULL DEFAULT now()
        )""",
        # Who polls a repository: one replica at a time, until `expires`.
        """CREATE TABLE gitreg_poll_leases (
            repository text PRIMARY KEY,
            holder text NOT NULL,
            expires timestamptz NOT NULL
        )""",
    ),
    (
        # Browser sessions signed out, until their cookie would have expired anyway.
        """CREATE TABLE gitreg_ended_sessions (
            id text PRIMARY KEY,
            expires timestamptz NOT NULL
        )""",
    ),
    (
        # What a replica read of each repository, as one line of the persisted index
        # (gitreg.modules.persisted): a replica with no clone yet serves it (its digest and
        # format are checked by the reader; the line names the refs it was read from).
        """CREATE TABLE gitreg_repository_reads (
            repository text PRIMARY KEY,
            line text NOT NULL,
            written_by text NOT NULL,
            written_at timestamptz NOT NULL DEFAULT now()
        )""",
    ),
    (
        # Tokens issued to people who signed in (auth.login): the SHA-256 of each, never the
        # token, with the record `gitreg token list` shows; a revoked one is deleted.
        """CREATE TABLE gitreg_issued_tokens (
            digest text PRIMARY KEY,
            name text NOT NULL,
            body text NOT NULL,
            expires timestamptz NOT NULL
        )""",
        "CREATE INDEX gitreg_issued_tokens_name ON gitreg_issued_tokens (name)",
        # Authorization codes spent once, until they would have expired anyway.
        """CREATE TABLE gitreg_spent_codes (
            id text PRIMARY KEY,
            expires timestamptz NOT NULL
        )""",
    ),
    (
        # Who each issued token is for, as the provider says (`sub`) and which provider: so
        # that people who share a name are told apart. Rows issued before have ''.
        "ALTER TABLE gitreg_issued_tokens ADD COLUMN subject text NOT NULL DEFAULT ''",
        "ALTER TABLE gitreg_issued_tokens ADD COLUMN issuer text NOT NULL DEFAULT ''",
    ),
    (
        # The SHA-256 of each archive (by file name: commit, folder, format) as first built by
        # any replica: a replica whose build gives other bytes refuses to serve them.
        """CREATE TABLE gitreg_archive_digests (
            repository text NOT NULL,
            archive text NOT NULL,
            digest text NOT NULL,
            recorded_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (repository, archive)
        )""",
    ),
    (
        # Download counts (gitreg/usage/): one row per install's dimensions and day, which every
        # replica adds to; rows past `downloads.retention` are deleted, each version's total kept.
        """CREATE TABLE gitreg_downloads (
            kind text NOT NULL,
            address text NOT NULL,
            version text NOT NULL,
            principal text NOT NULL,
            client text NOT NULL,
            client_version text NOT NULL,
            day integer NOT NULL,
            count bigint NOT NULL,
            PRIMARY KEY (kind, address, version, principal, client, client_version, day)
        )""",
        "CREATE INDEX gitreg_downloads_day ON gitreg_downloads (day)",
        """CREATE TABLE gitreg_download_totals (
            kind text NOT NULL,
            address text NOT NULL,
            version text NOT NULL,
            count bigint NOT NULL,
            PRIMARY KEY (kind, address, version)
        )""",
    ),
    (
        # A tag recorded while `publish_when` holds it back: served once it is published
        # (pending false), and never held back again. Rows recorded before were published.
        "ALTER TABLE gitreg_published ADD COLUMN pending boolean NOT NULL DEFAULT false",
    ),
)


def migrate(conn: psycopg.Connection[Any]) -> int:
    """Bring the schema up to date; return its version. Idempotent, and safe to run from every
    replica at once: the advisory lock lets one through at a time, the others then find it done."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK,))
        conn.execute("CREATE TABLE IF NOT EXISTS gitreg_schema (version integer NOT NULL)")
        row = conn.execute("SELECT coalesce(max(version), 0) FROM gitreg_schema").fetchone()
        current = int(row[0]) if row else 0
        if current > len(MIGRATIONS):
            raise StateUnavailable(
                f"PostgreSQL: the schema is at version {current}, newer than this gitreg knows"
                f" ({len(MIGRATIONS)}): upgrade gitreg"
            )
        for version in range(current + 1, len(MIGRATIONS) + 1):
            for statement in MIGRATIONS[version - 1]:
                conn.execute(statement)
            conn.execute("INSERT INTO gitreg_schema (version) VALUES (%s)", (version,))
        return len(MIGRATIONS)
