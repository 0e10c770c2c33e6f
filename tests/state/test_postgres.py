"""The shared state in a real PostgreSQL: the schema made once however many replicas start at
once, the first writer wins, accept decides, leases give a repository's polls to one replica,
notices reach the others, and an unreachable database is a StateUnavailable that shows no
secret, while a ledger still answers what the database last confirmed."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest

from gitreg.catalog.secrets import SecretRef
from gitreg.catalog.settings import PostgresSettings
from gitreg.errors import StateUnavailable
from gitreg.git.location import RepoLocation
from gitreg.state.database import Database, connect
from gitreg.state.postgres_state import PostgresState
from gitreg.state.schema import MIGRATIONS, migrate
from tests.support.postgres import PostgresServer
from tests.support.servers import free_port, wait_until

REPO = RepoLocation("https://git.example.com/infra/vpc.git", "https")
A, B = "a" * 40, "b" * 40


def _settings(
    url: str, monkeypatch: pytest.MonkeyPatch, var: str = "GITREG_TEST_DSN"
) -> PostgresSettings:
    monkeypatch.setenv(var, url)
    return PostgresSettings(SecretRef(env=var))


_OPEN: list[PostgresState] = []


@pytest.fixture(autouse=True)
def _close_states() -> Iterator[None]:
    yield
    while _OPEN:
        _OPEN.pop().close()


def _state(url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> PostgresState:
    state = PostgresState(_settings(url, monkeypatch), tmp_path / name)
    _OPEN.append(state)
    return state


def test_the_schema_is_made_once_when_replicas_start_at_once(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = _settings(database_url, monkeypatch)
    start = threading.Barrier(8)

    def replica(_: int) -> int:
        with connect(settings) as conn:
            start.wait()
            return migrate(conn)

    with ThreadPoolExecutor(8) as pool:
        assert set(pool.map(replica, range(8))) == {len(MIGRATIONS)}
    with connect(settings) as conn:
        assert migrate(conn) == len(MIGRATIONS)  # and again: nothing to do
        rows = conn.execute("SELECT version FROM gitreg_schema").fetchall()
    assert rows == [(v,) for v in range(1, len(MIGRATIONS) + 1)]


def test_a_newer_schema_is_refused(database_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = _settings(database_url, monkeypatch)
    with connect(settings) as conn:
        migrate(conn)
        conn.execute("INSERT INTO gitreg_schema VALUES (99)")
        with pytest.raises(StateUnavailable, match="version 99, newer than this gitreg knows"):
            migrate(conn)


def test_the_first_writer_wins(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one = _state(database_url, tmp_path, monkeypatch, "one").ledger(REPO, "vpc")
    two = _state(database_url, tmp_path, monkeypatch, "two").ledger(REPO, "vpc")
    assert one.record({"v1.0.0": A})["v1.0.0"].commit == A
    # The second replica saw the tag later, moved: it is told the first commit.
    assert two.record({"v1.0.0": B, "v1.1.0": B})["v1.0.0"].commit == A
    assert {t: p.commit for t, p in one.read().items()} == {"v1.0.0": A, "v1.1.0": B}


def test_the_first_digest_recorded_of_an_archive_is_every_replicas(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one = _state(database_url, tmp_path, monkeypatch, "one").ledger(REPO, "vpc")
    two = _state(database_url, tmp_path, monkeypatch, "two").ledger(REPO, "vpc")
    assert two.digest(f"{A}.tar.gz") is None
    assert one.record_digest(f"{A}.tar.gz", "1" * 64) == "1" * 64
    # Another replica's build gave other bytes: it is told the first digest, which stays.
    assert two.record_digest(f"{A}.tar.gz", "2" * 64) == "1" * 64
    assert two.record_digest(f"{A}.zip", "3" * 64) == "3" * 64  # each archive its own
    assert one.digest(f"{A}.tar.gz") == two.digest(f"{A}.tar.gz") == "1" * 64
    assert {t: p.commit for t, p in one.read().items()} == {}  # tags are another record


def test_first_writer_wins_under_a_race(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledgers = [
        _state(database_url, tmp_path, monkeypatch, f"r{i}").ledger(REPO, "vpc") for i in range(6)
    ]
    start = threading.Barrier(len(ledgers))

    def record(i: int) -> str:
        start.wait()
        return ledgers[i].record({"v2.0.0": f"{i}" * 40})["v2.0.0"].commit

    with ThreadPoolExecutor(len(ledgers)) as pool:
        winners = set(pool.map(record, range(len(ledgers))))
    assert len(winners) == 1  # every replica was told the same commit


def test_accept_decides_and_is_recorded(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = _state(database_url, tmp_path, monkeypatch, "one")
    ledger = state.ledger(REPO, "vpc")
    ledger.record({"v1.0.0": A})
    before = ledger.version()
    ledger.accept("v1.0.0", B)
    assert ledger.read()["v1.0.0"].commit == B
    assert ledger.version() != before
    with connect(state.settings) as conn:
        decisions = conn.execute(
            "SELECT tag, previous_commit, commit_id FROM gitreg_decisions"
        ).fetchall()
    assert decisions == [("v1.0.0", A, B)]


def test_one_replica_polls_a_repository_until_its_lease_expires(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one = _state(database_url, tmp_path, monkeypatch, "one")
    two = _state(database_url, tmp_path, monkeypatch, "two")
    assert one.may_poll(REPO, 60)
    assert not two.may_poll(REPO, 60)
    assert one.may_poll(REPO, 60)  # the holder renews it
    assert one.may_poll(REPO, 0.2)
    wait_until(lambda: two.may_poll(REPO, 60), 5, "the lease to pass to the other replica")
    assert not one.may_poll(REPO, 60)


def test_a_notice_reaches_the_other_replicas_not_the_sender(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one = _state(database_url, tmp_path, monkeypatch, "one")
    two = _state(database_url, tmp_path, monkeypatch, "two")
    heard: dict[str, list[str | None]] = {"one": [], "two": []}
    one.listen(heard["one"].append)
    two.listen(heard["two"].append)
    try:
        for state in (one, two):
            assert state.listener is not None
            wait_until(state.listener.connected.is_set, 10, "the listener to connect")
        one.announce(REPO)
        wait_until(lambda: heard["two"] == [REPO.url], 5, "the notice to reach the other replica")
        assert heard["one"] == []
    finally:
        one.close()
        two.close()


def test_an_unreachable_database_is_unavailable_and_shows_no_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"postgresql://gitreg:hunter2-pw@127.0.0.1:{free_port()}/secretdb"
    db = Database(_settings(url, monkeypatch))
    with pytest.raises(StateUnavailable) as caught, db.transaction():
        pass
    assert str(caught.value) == "PostgreSQL: cannot connect: connection refused"
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    # Within the backoff, it fails at once, naming the same reason.
    with pytest.raises(StateUnavailable, match="connection refused"), db.transaction():
        pass
    for secret in ("hunter2", "secretdb", "127.0.0.1"):
        assert secret not in caplog.text
        assert secret not in str(caught.value)


def test_a_wrong_password_shows_neither_password_nor_user(
    postgres: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = postgres.url().replace(postgres.password, "wrong-pw-123")
    with pytest.raises(StateUnavailable) as caught:
        connect(_settings(url, monkeypatch))
    assert str(caught.value) == "PostgreSQL: cannot connect: authentication failed"


def test_a_ledger_answers_what_was_confirmed_while_the_database_is_away(
    postgres: PostgresServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = postgres.database()
    state = _state(url, tmp_path, monkeypatch, "one")
    state.ledger(REPO, "vpc").record({"v1.0.0": A})
    state.ledger(REPO, "vpc").record_digest(f"{A}.tar.gz", "1" * 64)
    # The same replica, now pointed at a database that does not answer.
    monkeypatch.setenv("GITREG_TEST_DSN", f"postgresql://gitreg:x@127.0.0.1:{free_port()}/x")
    state.db.close()
    ledger = state.ledger(REPO, "vpc")
    assert {t: p.commit for t, p in ledger.read().items()} == {"v1.0.0": A}
    with pytest.raises(StateUnavailable):
        ledger.record({"v1.1.0": B})
    with pytest.raises(StateUnavailable):  # no digest is recorded without the database
        ledger.record_digest(f"{A}.tar.gz", "1" * 64)
    assert ledger.digest(f"{A}.tar.gz") == "1" * 64  # as last confirmed
    assert state.problem() == "cannot connect: connection refused"
    assert state.may_poll(REPO, 60)  # alone, as far as it knows


def test_a_broken_connection_is_reopened(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = _state(database_url, tmp_path, monkeypatch, "one")
    ledger = state.ledger(REPO, "vpc")
    ledger.record({"v1.0.0": A})
    with psycopg.connect(database_url, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE application_name = 'gitreg' AND datname = current_database()"
        )
        # Terminating is asynchronous: wait until the backend is gone.
        wait_until(
            lambda: (
                admin.execute(
                    "SELECT count(*) FROM pg_stat_activity"
                    " WHERE application_name = 'gitreg' AND datname = current_database()"
                ).fetchone()
                == (0,)
            ),
            10,
            "the backend to end",
        )
    # The server ended it while idle: the next operation opens a new one, and succeeds.
    assert "v1.1.0" in ledger.record({"v1.1.0": B})
    assert state.problem() is None
