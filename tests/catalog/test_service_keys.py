"""registry.yaml's keys for running as a service: readiness.max_staleness, log_format,
shutdown_grace; good values read, bad ones refused with key path and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import WriteCatalog
from tests.support.refused_catalogs import assert_refused, refusal


@pytest.mark.parametrize(
    ("text", "staleness", "log_format", "grace"),
    [
        ("", 0.0, "text", 20.0),  # the defaults: no staleness bound, text, 20 s
        ("readiness: {max_staleness: 15m}\n", 900.0, "text", 20.0),
        ("readiness: {max_staleness: 0}\n", 0.0, "text", 20.0),
        ("readiness:\n", 0.0, "text", 20.0),
        ("refresh_interval: 10s\nreadiness: {max_staleness: 11s}\n", 11.0, "text", 20.0),
        ("log_format: json\n", 0.0, "json", 20.0),
        ("log_format: text\n", 0.0, "text", 20.0),
        ("shutdown_grace: 25s\n", 0.0, "text", 25.0),
        ("shutdown_grace: 0\n", 0.0, "text", 0.0),
        ("shutdown_grace: 1m\n", 0.0, "text", 60.0),
    ],
)
def test_service_keys(
    write_catalog: WriteCatalog, text: str, staleness: float, log_format: str, grace: float
) -> None:
    catalog = write_catalog(f"mirror: {{}}\n{text}")
    assert catalog.freshness.max_staleness == staleness
    assert catalog.server.log_format == log_format
    assert catalog.server.shutdown_grace == grace


@pytest.mark.parametrize(
    ("text", "path", "line", "reason"),
    [
        ("readiness: {max_staleness: soon}\n", "readiness.max_staleness", 3, "positive duration"),
        ("readiness: {max_staleness: -5m}\n", "readiness.max_staleness", 3, "positive duration"),
        ("readiness: {max_staleness: 30s}\n", "readiness.max_staleness", 3, "longer than"),
        (
            "refresh_interval: 5m\nreadiness:\n  max_staleness: 5m\n",
            "readiness.max_staleness",
            5,
            "longer than refresh_interval (300 s)",
        ),
        ("readiness: {max_age: 1h}\n", "readiness.max_age", 3, "unknown key"),
        ("readiness: 15m\n", "readiness", 3, "must be a mapping"),
        ("log_format: yaml\n", "log_format", 3, "must be one of text, json, not 'yaml'"),
        ("log_format:\n", "log_format", 3, "has no value"),
        ("shutdown_grace: forever\n", "shutdown_grace", 3, "positive duration"),
        ("shutdown_grace: true\n", "shutdown_grace", 3, "(or 0: off)"),
    ],
)
def test_bad_service_keys(tmp_path: Path, text: str, path: str, line: int, reason: str) -> None:
    assert_refused(refusal(tmp_path, f"modules: []\n{text}"), path, line, reason)
