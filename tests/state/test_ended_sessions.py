"""Sign-outs shared by replicas on a real PostgreSQL: a session ended on one replica is refused
by another (whose cache_dir is its own) over real HTTPS; each replica keeps what it learnt in
its cache_dir; and with the database away a sign-out still ends the session on its machine."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gitreg.catalog.secrets import SecretRef
from gitreg.catalog.settings import PostgresSettings
from gitreg.process.tlscert import TlsMaterial
from gitreg.state.ended_sessions import EndedSessionFiles
from gitreg.state.postgres_state import PostgresState
from tests.support.browser_sessions import (
    PRIVATE,
    private_catalog,
    served,
    sign_in,
    sign_out,
    with_cookie,
)
from tests.support.servers import free_port

DSN_ENV = "GITREG_TEST_SESSIONS_DSN"
SESSION, OTHER = "A" * 22, "B" * 22
EXPIRES = 4_000_000_000

_OPEN: list[PostgresState] = []


@pytest.fixture(autouse=True)
def _close_states() -> Iterator[None]:
    yield
    while _OPEN:
        _OPEN.pop().close()


def _state(url: str, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> PostgresState:
    monkeypatch.setenv(DSN_ENV, url)
    state = PostgresState(PostgresSettings(SecretRef(env=DSN_ENV)), cache_dir)
    _OPEN.append(state)
    return state


def test_a_sign_out_on_one_replica_is_known_to_the_others(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one = _state(database_url, tmp_path / "one", monkeypatch)
    two = _state(database_url, tmp_path / "two", monkeypatch)
    assert not two.session_ended(SESSION, EXPIRES)
    one.end_session(SESSION, EXPIRES)
    assert two.session_ended(SESSION, EXPIRES)
    assert not two.session_ended(OTHER, EXPIRES)
    # What the database said is kept on the machine: its other workers need not ask.
    assert EndedSessionFiles(tmp_path / "two").session_ended(SESSION, EXPIRES)


def test_expired_sign_outs_leave_the_table(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one = _state(database_url, tmp_path / "one", monkeypatch)
    one.end_session(OTHER, 1_000_000_000)  # expired long ago: swept at the next sign-out
    one.end_session(SESSION, EXPIRES)
    with one.db.transaction() as conn:
        rows = conn.execute("SELECT id FROM gitreg_ended_sessions").fetchall()
    assert rows == [(SESSION,)]


def test_with_the_database_away_a_sign_out_still_ends_the_session_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"postgresql://gitreg:not-the-password@127.0.0.1:{free_port()}/none"
    state = _state(url, tmp_path, monkeypatch)
    state.end_session(SESSION, EXPIRES)
    assert state.session_ended(SESSION, EXPIRES)
    assert not state.session_ended(OTHER, EXPIRES)  # unknown: honoured, and /readyz degraded
    assert "recorded on this machine only" in caplog.text
    assert "not-the-password" not in caplog.text


def test_replicas_on_postgresql_refuse_a_cookie_signed_out_on_another(
    database_url: str, tmp_path: Path, tls: TlsMaterial, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two replicas (each its own cache_dir) on one database, over real HTTPS."""
    monkeypatch.setenv(DSN_ENV, database_url)
    state = f"state:\n  postgres: {{dsn_env: {DSN_ENV}}}\n"
    first, second = (private_catalog(tmp_path / name, state) for name in ("first", "second"))
    assert first.cache_dir != second.cache_dir and first.state is not None
    with served(first, tls) as one, served(second, tls) as two:
        value = sign_in(one)
        assert two.get(PRIVATE, headers=with_cookie(value)).status_code == 200
        sign_out(one, value)
        refused = two.get(PRIVATE, headers=with_cookie(value))
        assert refused.status_code == 401 and "the session has ended" in refused.text
        assert one.get(PRIVATE, headers=with_cookie(value)).status_code == 401
