"""Change notices between replicas, by PostgreSQL's NOTIFY and LISTEN.

A replica whose served versions of a repository changed NOTIFYs; every other one LISTENs on a
connection of its own, in a thread of its own, and syncs that repository. The connection is
reopened after a failure, with backoff; once it is back, every repository is due a sync (notices
sent meanwhile were lost). See docs/how-it-works/internals.md."""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from typing import Any

import psycopg

from gitreg.catalog.settings import PostgresSettings
from gitreg.errors import StateUnavailable
from gitreg.state.database import connect, describe
from gitreg.state.shared import OnChange

log = logging.getLogger(__name__)

CHANNEL = "gitreg_changes"
MAX_BACKOFF = 10.0
NOT_YET = "not listening to the other replicas yet"


def notice(replica: str, repository: str) -> str:
    """The payload of one notice (PostgreSQL caps a payload at 8000 bytes: a URL fits)."""
    return json.dumps({"from": replica, "repository": repository})


class ChangeListener:
    def __init__(self, settings: PostgresSettings, replica: str, on_change: OnChange) -> None:
        self.settings = settings
        self.replica = replica
        self.on_change = on_change
        self.connected = threading.Event()
        # Why it is not listening; until it first does, it may miss another replica's notice.
        self.problem: str | None = NOT_YET
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="gitreg-listen", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        backoff, first = 0.5, True
        while not self._stop.is_set():
            try:
                conn = connect(self.settings)
            except StateUnavailable as exc:
                self._lost(str(exc).removeprefix("PostgreSQL: "))
                self._stop.wait(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF)
                continue
            try:
                conn.execute(f"LISTEN {CHANNEL}")
                if self.problem is not None and not first:
                    log.info("PostgreSQL: listening again; syncing every repository")
                self.problem = None
                self.connected.set()
                backoff = 0.5
                if not first:
                    self.on_change(None)  # notices sent while away were lost: catch up
                first = False
                self._listen(conn)
            except psycopg.Error as exc:
                self._lost(describe(exc))
            finally:
                with contextlib.suppress(psycopg.Error):
                    conn.close()
            self._stop.wait(backoff)

    def _listen(self, conn: psycopg.Connection[Any]) -> None:
        while not self._stop.is_set():
            for note in conn.notifies(timeout=1.0):
                try:
                    body = json.loads(note.payload)
                    sender, repository = body["from"], body["repository"]
                except (ValueError, KeyError, TypeError):
                    continue
                if sender != self.replica and isinstance(repository, str):
                    self.on_change(repository)
            # Nothing came for a second: a statement proves the connection still stands.
            conn.execute("SELECT 1")

    def _lost(self, reason: str) -> None:
        if self.problem in (None, NOT_YET):
            log.warning("PostgreSQL: not listening for other replicas' changes: %s", reason)
        self.problem = reason
        self.connected.clear()
