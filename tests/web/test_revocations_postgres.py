"""Revocation under `state: postgres`, over real HTTP: the download counts in a real PostgreSQL
decide who keeps a revoked version, and while the database is down a reader whose installs
cannot be read keeps it (an outage must not break a pin); the install is answered all the same."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from tests.support.postgres import PostgresServer
from tests.support.revoked_registry import (
    EARLY,
    LATE,
    MODULES,
    THIRD,
    bearer,
    write_revoked_registry,
)
from tests.support.servers import RegistryServer, wait_until

TEAM = MODULES[0]
DSN_ENV = "GITREG_TEST_REVOKED_DSN"
STATE = f"state: {{postgres: {{dsn_env: {DSN_ENV}}}}}\n"


def listed(server: RegistryServer, token: str) -> list[str]:
    answer = httpx.get(f"{server.url}{TEAM}/versions", headers=bearer(token), timeout=20)
    assert answer.status_code == 200, answer.text
    return [v["version"] for v in answer.json()["modules"][0]["versions"]]


def download(server: RegistryServer, token: str) -> int:
    url = f"{server.url}{TEAM}/1.0.0/download"
    return httpx.get(url, headers=bearer(token), timeout=20).status_code


def test_the_counts_in_postgres_decide_and_an_outage_keeps_the_version(
    tmp_path: Path,
    postgres: PostgresServer,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(DSN_ENV, database_url)
    path = write_revoked_registry(tmp_path, revoked=False, extra=STATE)
    with RegistryServer(load_catalog(path)) as server:
        assert download(server, EARLY) == 200
        server.state.downloads.write()
        write_revoked_registry(tmp_path, revoked=True, extra=STATE)
        assert server.reload()
        assert listed(server, EARLY) == ["2.0.0", "1.1.0", "1.0.0"]
        assert listed(server, LATE) == ["2.0.0", "1.1.0"] and download(server, LATE) == 410
        postgres.stop()
        try:
            assert listed(server, THIRD) == ["2.0.0", "1.1.0", "1.0.0"]
            assert download(server, THIRD) == 200
        finally:
            postgres.start()
        # The outage's install was lost with its batch; once out of the tally's memory, and with
        # nothing kept of the outage's answers, the store's word holds again.
        for _ in range(2):
            server.state.downloads.write()
        hidden = ["2.0.0", "1.1.0"]
        wait_until(lambda: listed(server, THIRD) == hidden, 60, "the database to be read again")
