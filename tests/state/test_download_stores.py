"""Both stores of download counts, the same table of cases: a real SQLite file and a real
PostgreSQL. Batches add up, each version's total outlives the retention, who downloaded what is
one indexed question, and a store out of reach says so (StateUnavailable), then recovers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from gitreg.catalog.secrets import SecretRef
from gitreg.catalog.settings import PostgresSettings
from gitreg.errors import StateUnavailable
from gitreg.state.download_counts import Download, DownloadStore, PrincipalCount, Summary
from gitreg.state.pg_downloads import PostgresDownloads
from gitreg.state.sqlite_downloads import SqliteDownloads
from tests.support.postgres import PostgresServer

DSN_ENV = "GITREG_TEST_DOWNLOADS_DSN"
DAY = 20_000  # "today", in days since 1970


def vpc(version: str, principal: str, day: int = DAY, client: str = "terraform") -> Download:
    return Download("module", "infra/vpc/aws", version, principal, client, "1.11.4", day)


@pytest.fixture(params=["sqlite", "postgres"])
def store(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[DownloadStore]:
    made: DownloadStore
    if request.param == "sqlite":
        made = SqliteDownloads(tmp_path / "cache" / "downloads.sqlite3")
    else:
        monkeypatch.setenv(DSN_ENV, request.getfixturevalue("database_url"))
        made = PostgresDownloads(PostgresSettings(SecretRef(env=DSN_ENV)))
    try:
        yield made
    finally:
        made.close()


def test_batches_add_up_by_version_principal_client_and_day(store: DownloadStore) -> None:
    store.add({vpc("1.0.0", "ci"): 2, vpc("1.0.0", "alice"): 1, vpc("1.1.0", "ci", DAY - 10): 4})
    store.add({vpc("1.0.0", "ci"): 3, vpc("1.1.0", "ci", DAY - 100): 5})
    store.add({vpc("1.0.0", "ci", client="opentofu"): 1})
    assert store.summary("module", "infra/vpc/aws", DAY) == Summary(7, 11, 16, 16)
    assert store.by_version("module", "infra/vpc/aws") == {"1.0.0": 7, "1.1.0": 9}
    assert store.totals("module", ["infra/vpc/aws", "infra/dns/aws"]) == {"infra/vpc/aws": 16}
    assert store.principals("module", "infra/vpc/aws")[:2] == [
        PrincipalCount("ci", "1.1.0", "terraform", "1.11.4", 9, DAY - 10),
        PrincipalCount("ci", "1.0.0", "terraform", "1.11.4", 5, DAY),
    ]
    # Since a day: the rows of that day and after, as the retiring report reads the last N days.
    assert store.principals("module", "infra/vpc/aws", since=DAY - 10) == [
        PrincipalCount("ci", "1.0.0", "terraform", "1.11.4", 5, DAY),
        PrincipalCount("ci", "1.1.0", "terraform", "1.11.4", 4, DAY - 10),
        PrincipalCount("alice", "1.0.0", "terraform", "1.11.4", 1, DAY),
        PrincipalCount("ci", "1.0.0", "opentofu", "1.11.4", 1, DAY),
    ]
    assert store.principals("module", "infra/vpc/aws", since=DAY + 1) == []
    assert store.downloaded("module", "infra/vpc/aws", "1.0.0", "alice")
    assert not store.downloaded("module", "infra/vpc/aws", "1.1.0", "alice")
    assert not store.downloaded("provider", "infra/vpc/aws", "1.0.0", "alice")
    assert store.summary("module", "infra/dns/aws", DAY) == Summary()


def test_rows_past_the_retention_go_a_bounded_number_at_a_time(store: DownloadStore) -> None:
    store.add({vpc("1.0.0", f"p{i}", DAY - 500): 1 for i in range(5)})
    store.add({vpc("1.0.0", "recent"): 1})
    assert store.forget_before(DAY - 400, 3) == 3
    assert store.forget_before(DAY - 400, 3) == 2
    assert store.forget_before(DAY - 400, 3) == 0
    # Each version's total is kept: the badge's `total` never goes down.
    assert store.summary("module", "infra/vpc/aws", DAY) == Summary(1, 1, 1, 6)
    assert [p.principal for p in store.principals("module", "infra/vpc/aws")] == ["recent"]


def test_a_corrupt_sqlite_file_is_out_of_reach_until_replaced(tmp_path: Path) -> None:
    path = tmp_path / "downloads.sqlite3"
    path.write_bytes(b"no database here " * 256)
    store = SqliteDownloads(path)
    with pytest.raises(StateUnavailable, match="not a database"):
        store.add({vpc("1.0.0", "ci"): 1})
    path.unlink()
    store.add({vpc("1.0.0", "ci"): 1})
    assert store.by_version("module", "infra/vpc/aws") == {"1.0.0": 1}
    store.close()


def test_postgresql_down_is_out_of_reach_until_it_is_back(
    postgres: PostgresServer, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DSN_ENV, database_url)
    store = PostgresDownloads(PostgresSettings(SecretRef(env=DSN_ENV)))
    store.add({vpc("1.0.0", "ci"): 1})
    postgres.stop()
    try:
        with pytest.raises(StateUnavailable) as failed:
            store.add({vpc("1.0.0", "ci"): 1})
        assert postgres.password not in str(failed.value)
    finally:
        postgres.start()
    store.db.retry_now()
    store.add({vpc("1.0.0", "ci"): 1})
    assert store.by_version("module", "infra/vpc/aws") == {"1.0.0": 2}
    with psycopg.connect(database_url) as conn:
        row = conn.execute("SELECT sum(count) FROM gitreg_downloads").fetchone()
    assert row is not None and row[0] == 2
    store.close()
