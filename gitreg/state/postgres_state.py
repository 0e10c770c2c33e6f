"""The state replicas share, in PostgreSQL (state.postgres): the ledger of published tags,
notices of change (NOTIFY/LISTEN), and poll leases (one replica polls a repository at a time)."""

from __future__ import annotations

import logging
import os
import socket
import uuid
from pathlib import Path

from gitreg.catalog.model import PostgresSettings
from gitreg.errors import StateUnavailable
from gitreg.git.location import RepoLocation
from gitreg.modules.ledger import DiskLedger, TagLedger
from gitreg.state.database import Database
from gitreg.state.listener import CHANNEL, ChangeListener, notice
from gitreg.state.pg_ledger import PostgresLedger
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

    def problem(self) -> str | None:
        listening = self.listener.problem if self.listener is not None else None
        return self.db.problem or listening

    def close(self) -> None:
        if self.listener is not None:
            self.listener.stop()
        self.db.close()
