"""The state: section of registry.yaml: where the shared ledger lives, and each mistake refused
with its key path and line (the database URL itself never in a message)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitreg.catalog.secrets import SecretRef
from gitreg.catalog.settings import PostgresSettings
from tests.conftest import WriteCatalog
from tests.support.refused_catalogs import assert_refused, refusal

MODULE = "modules:\n  - {namespace: infra, name: vpc, system: aws, repo: https://git.example.com/x.git}\n"
DSN = "postgresql://gitreg:hunter2@db.internal/gitreg"


def test_no_state_section_keeps_the_ledger_on_disk(write_catalog: WriteCatalog) -> None:
    assert write_catalog(MODULE).state is None


def test_the_database_url_from_the_environment(
    write_catalog: WriteCatalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITREG_TEST_DSN", DSN)
    catalog = write_catalog(MODULE + "state:\n  postgres: {dsn_env: GITREG_TEST_DSN}\n")
    assert catalog.state == PostgresSettings(SecretRef(env="GITREG_TEST_DSN"))
    assert catalog.state.dsn.value() == DSN
    assert "hunter2" not in repr(catalog)


def test_the_database_url_from_a_file(write_catalog: WriteCatalog, tmp_path: Path) -> None:
    (tmp_path / "dsn").write_text(DSN + "\n")
    catalog = write_catalog(MODULE + "state:\n  postgres:\n    dsn_file: dsn\n")
    assert catalog.state == PostgresSettings(SecretRef(file=tmp_path / "dsn"))


@pytest.mark.parametrize(
    ("section", "path", "line", "reason"),
    [
        ("state: {}\n", "state.postgres", 4, "is required"),
        ("state:\n  redis: {}\n", "state.redis", 5, "unknown key"),
        ("state:\n  postgres: {}\n", "state.postgres", 5, "give dsn_env or dsn_file"),
        (
            "state:\n  postgres: {dsn_env: A, dsn_file: dsn}\n",
            "state.postgres",
            5,
            "give dsn_env or dsn_file",
        ),
        (
            "state:\n  postgres: {dsn_env: GITREG_TEST_UNSET_DSN}\n",
            "state.postgres.dsn_env",
            5,
            "GITREG_TEST_UNSET_DSN is not set",
        ),
        (
            "state:\n  postgres: {dsn_file: nowhere}\n",
            "state.postgres.dsn_file",
            5,
            "not a readable",
        ),
        ("state:\n  postgres: {dsn: x}\n", "state.postgres.dsn", 5, "unknown key"),
        ("state: postgres\n", "state", 4, "must be a mapping"),
    ],
)
def test_a_bad_state_section_is_refused_with_its_path_and_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    section: str,
    path: str,
    line: int,
    reason: str,
) -> None:
    monkeypatch.setenv("A", DSN)
    monkeypatch.delenv("GITREG_TEST_UNSET_DSN", raising=False)
    (tmp_path / "dsn").write_text(DSN)
    refused = refusal(tmp_path, MODULE + section)
    assert_refused(refused, path, line, reason)
    assert "hunter2" not in str(refused)
