"""One connection to PostgreSQL, shared by the threads of a replica.

It is opened at first use, the schema brought up to date then, and reopened after a failure (not
more often than a backoff allows, so an outage costs each sync an instant, not a connect
timeout). Every failure becomes a StateUnavailable that names no host, user or password (the
driver's messages may)."""

from __future__ import annotations

import contextlib
import logging
import select
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg

from gitreg.catalog.settings import PostgresSettings
from gitreg.errors import StateUnavailable
from gitreg.state.schema import migrate

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 3  # seconds
STATEMENT_TIMEOUT_MS = 5000
MAX_BACKOFF = 10.0

# What a driver's message says, in words that hold no host, user or database name.
_KNOWN = (
    ("password authentication failed", "authentication failed"),
    ("no password supplied", "authentication failed (no password given)"),
    ("connection refused", "connection refused"),
    ("timeout expired", "connection timed out"),
    ("could not translate host name", "unknown host name"),
    ("name or service not known", "unknown host name"),
    ("does not exist", "the database or role does not exist"),
    ("the database system is starting up", "the server is starting up"),
    ("the database system is shutting down", "the server is shutting down"),
    ("terminating connection", "the server ended the connection"),
    ("server closed the connection", "the server closed the connection"),
    ("consuming input failed", "the connection was lost"),
    ("connection is closed", "the connection was lost"),
    ("canceling statement due to statement timeout", "a statement timed out"),
    ("invalid dsn", "the database URL is malformed"),
    ("invalid connection option", "the database URL is malformed"),
    ('missing "="', "the database URL is malformed"),
)


def describe(exc: BaseException) -> str:
    """What went wrong, without the driver's text (it may echo the URL, host or user)."""
    text = str(exc).lower()
    for needle, words in _KNOWN:
        if needle in text:
            return words
    state = getattr(exc, "sqlstate", None)
    return f"{type(exc).__name__}" + (f" (SQLSTATE {state})" if state else "")


def connect(settings: PostgresSettings, autocommit: bool = True) -> psycopg.Connection[Any]:
    """A new connection, or StateUnavailable saying why not (in gitreg's words)."""
    dsn = settings.dsn.value()
    if not dsn:
        where = settings.dsn.env or settings.dsn.file
        raise StateUnavailable(f"PostgreSQL: no database URL in {where}")
    try:
        return psycopg.connect(
            dsn,
            autocommit=autocommit,
            connect_timeout=CONNECT_TIMEOUT,
            application_name="gitreg",
            options=f"-c statement_timeout={STATEMENT_TIMEOUT_MS}",
            # A peer that vanishes (a partition, not a refusal) is noticed within ~20 s.
            keepalives=1,
            keepalives_idle=10,
            keepalives_interval=5,
            keepalives_count=2,
        )
    except (psycopg.Error, ValueError, OSError) as exc:
        raise StateUnavailable(f"PostgreSQL: cannot connect: {describe(exc)}") from None


def _readable(conn: psycopg.Connection[Any]) -> bool:
    try:
        return bool(select.select([conn.fileno()], [], [], 0)[0])
    except (OSError, ValueError, psycopg.Error):
        return True


class Database:
    """The replica's connection for reads and writes of the shared state (one at a time: each
    is a statement or two, and a lock is cheaper than a pool here)."""

    def __init__(
        self, settings: PostgresSettings, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.settings = settings
        self.clock = clock
        self._lock = threading.Lock()
        self._conn: psycopg.Connection[Any] | None = None
        self._retry_at = 0.0
        self._backoff = 0.0
        self.problem: str | None = None  # the last failure, until an operation succeeds

    @contextlib.contextmanager
    def transaction(self) -> Iterator[psycopg.Connection[Any]]:
        """The connection inside a transaction, for one operation; StateUnavailable on failure."""
        with self._lock:
            conn = self._connection()
            try:
                with conn.transaction():
                    yield conn
            except psycopg.Error as exc:
                self._failed(describe(exc))
                with contextlib.suppress(psycopg.Error):
                    conn.close()
                self._conn = None
                raise StateUnavailable(f"PostgreSQL: {describe(exc)}") from None
            self.problem = None
            self._backoff = 0.0

    def retry_now(self) -> None:
        """Connect again at the next operation: the database is known to be back (the next
        operation says so, or fails anew)."""
        self._retry_at = 0.0
        self.problem = None

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                with contextlib.suppress(psycopg.Error):
                    self._conn.close()
                self._conn = None

    def _connection(self) -> psycopg.Connection[Any]:
        if self._conn is not None and not self._conn.closed:
            if not _readable(self._conn):
                return self._conn
            # An idle connection with something to read was ended by the server (a restart,
            # an administrator): open a new one rather than fail the operation on it.
            with contextlib.suppress(psycopg.Error):
                self._conn.close()
            self._conn = None
        if self.clock() < self._retry_at:
            raise StateUnavailable(f"PostgreSQL: {self.problem or 'unavailable'}")
        try:
            conn = connect(self.settings)
            try:
                migrate(conn)
            except (psycopg.Error, StateUnavailable) as exc:
                conn.close()
                if isinstance(exc, StateUnavailable):
                    raise
                raise StateUnavailable(f"PostgreSQL: {describe(exc)}") from None
        except StateUnavailable as exc:
            self._failed(str(exc).removeprefix("PostgreSQL: "))
            raise
        if self.problem is not None:
            log.info("PostgreSQL is reachable again")
        self._conn = conn
        return conn

    def _failed(self, reason: str) -> None:
        if self.problem is None:
            log.warning("PostgreSQL: %s; serving what is known, publishing nothing new", reason)
        self.problem = reason
        self._backoff = min(max(self._backoff * 2, 0.5), MAX_BACKOFF)
        self._retry_at = self.clock() + self._backoff
