"""The state replicas share, in PostgreSQL (state.postgres).

It holds the ledger of published tags, notices of change (NOTIFY/LISTEN), poll leases (one
replica polls a repository at a time), browser sessions signed out, tokens issued at sign-in
(`pg_issued.py`), each repository's last read (`shared_reads.py`) and download counts
(`pg_downloads.py`). See docs/how-it-works/internals.md."""

from __future__ import annotations

import logging
import os
import socket
import uuid
from collections.abc import Mapping
from pathlib import Path

from gitreg.catalog.settings import PostgresSettings
from gitreg.errors import StateUnavailable
from gitreg.git.location import RepoLocation, clone_name
from gitreg.state import shared_reads
from gitreg.state.database import Database
from gitreg.state.download_counts import DownloadStore
from gitreg.state.ended_sessions import EndedSessionFiles
from gitreg.state.issued_tokens import IssuedTokens
from gitreg.state.ledger import DiskLedger, TagLedger
from gitreg.state.listener import CHANNEL, ChangeListener, notice
from gitreg.state.pg_downloads import PostgresDownloads
from gitreg.state.pg_issued import PostgresIssuedTokens
from gitreg.state.pg_ledger import PostgresLedger, all_digests
from gitreg.state.shared import OnChange

log = logging.getLogger(__name__)


class PostgresState:
    def __init__(self, settings: PostgresSettings, cache_dir: Path) -> None:
        self.settings = settings
        self.db = Database(settings)
        # Names this process in notices (to skip its own) and leases (to renew its own).
        self.replica = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.confirmed_dir = cache_dir / "ledgers-confirmed"
        self.listener: ChangeListener | None = None
        # This machine's workers see a sign-out at once, and one the database told of is
        # not asked for again.
        self.ended = EndedSessionFiles(cache_dir)
        self.issued: IssuedTokens = PostgresIssuedTokens(self.db)

    def ledger(self, location: RepoLocation, name: str) -> TagLedger:
        confirmed = DiskLedger(self.confirmed_dir / f"{name}.json")
        return PostgresLedger(self.db, location.url, confirmed)

    def announce(self, location: RepoLocation) -> None:
        try:
            with self.db.transaction() as conn:
                conn.execute(
                    "SELECT pg_notify(%s, %s)", (CHANNEL, notice(self.replica, location.url))
                )
        except StateUnavailable as exc:
            # The others learn it when they reconnect (every repository is synced then).
            log.debug("cannot tell the other replicas that %s changed: %s", location, exc)

    def may_poll(self, location: RepoLocation, lease: float) -> bool:
        try:
            with self.db.transaction() as conn:
                row = conn.execute(
                    "INSERT INTO gitreg_poll_leases AS l (repository, holder, expires)"
                    " VALUES (%s, %s, now() + make_interval(secs => %s))"
                    " ON CONFLICT (repository) DO UPDATE"
                    " SET holder = excluded.holder, expires = excluded.expires"
                    " WHERE l.holder = excluded.holder OR l.expires < now()"
                    " RETURNING holder",
                    (location.url, self.replica, lease),
                ).fetchone()
        except StateUnavailable:
            return True  # alone, as far as we know: polling publishes nothing unconfirmed
        return row is not None

    def listen(self, on_change: OnChange) -> None:
        def changed(repository: str | None) -> None:
            if repository is None:
                self.db.retry_now()
            on_change(repository)

        if self.listener is None:
            self.listener = ChangeListener(self.settings, self.replica, changed)
            self.listener.start()

    def end_session(self, session: str, expires: int) -> None:
        self.ended.end_session(session, expires)
        try:
            with self.db.transaction() as conn:
                conn.execute(
                    "INSERT INTO gitreg_ended_sessions (id, expires) VALUES (%s, to_timestamp(%s))"
                    " ON CONFLICT (id) DO NOTHING",
                    (session, expires),
                )
                conn.execute("DELETE FROM gitreg_ended_sessions WHERE expires < now()")
        except StateUnavailable as exc:
            log.warning("a sign-out is recorded on this machine only, not on the others: %s", exc)

    def session_ended(self, session: str, expires: int) -> bool:
        if self.ended.session_ended(session, expires):
            return True
        try:
            with self.db.transaction() as conn:
                row = conn.execute(
                    "SELECT 1 FROM gitreg_ended_sessions WHERE id = %s", (session,)
                ).fetchone()
        except StateUnavailable:
            # Unknown: the sessions signed out here still end; /readyz says it is degraded.
            return False
        if row is None:
            return False
        self.ended.end_session(session, expires)
        return True

    def saved_reads(self) -> dict[str, str]:
        return shared_reads.saved_reads(self.db)

    def save_reads(self, lines: Mapping[str, str]) -> None:
        shared_reads.save_reads(self.db, self.replica, lines)

    def archive_digests(self) -> dict[str, dict[str, str]]:
        found: dict[str, dict[str, str]] = {}
        for repository, archive, digest in all_digests(self.settings):
            found.setdefault(clone_name(repository), {})[archive] = digest
        return found

    def download_store(self) -> DownloadStore:
        return PostgresDownloads(self.settings)

    def problem(self) -> str | None:
        listening = self.listener.problem if self.listener is not None else None
        return self.db.problem or listening

    def close(self) -> None:
        if self.listener is not None:
            self.listener.stop()
        self.db.close()
