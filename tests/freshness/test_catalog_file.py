"""registry.yaml read again while serving (freshness/catalog_file.py): the keys that wait for a
restart keep their served values, each change said once in the log; the others apply at once."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from gitreg.catalog.load import load_catalog
from gitreg.catalog.model import Catalog
from gitreg.freshness.catalog_file import read_again

MODULE = "modules:\n  - {namespace: infra, name: vpc, system: aws, repo: https://git.example.com/x.git}\n"
BEFORE = "hostname: one.example.com\ncache_dir: cache\nrefresh_interval: 60s\n"
AFTER = """hostname: two.example.com
public_url: https://two.example.com:9443
listen: 0.0.0.0:9443
tls: {certfile: cert.pem, keyfile: key.pem}
cache_dir: elsewhere
log_format: json
shutdown_grace: 5s
hsts: false
mcp: {enabled: true}
archives: {max_size: 1MiB, memory_budget: 0}
refresh_interval: 5m
"""
WAITING = ("listen", "tls", "cache_dir", "log_format", "shutdown_grace", "hsts", "mcp", "archives")


def _waiting(c: Catalog) -> tuple[object, ...]:
    s = c.server
    return (s.listen, s.tls, c.cache_dir, s.log_format, s.shutdown_grace, s.hsts, c.mcp, c.archives)


def _applied(c: Catalog) -> tuple[object, ...]:
    return (c.server.hostname, c.server.public_url, c.freshness.refresh_interval)


def test_a_reload_keeps_what_waits_for_a_restart_and_applies_the_rest(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    for name in ("cert.pem", "key.pem"):
        (tmp_path / name).write_text("not read by the catalog\n")
    path = tmp_path / "registry.yaml"
    path.write_text(BEFORE + MODULE)
    served = load_catalog(path)
    path.write_text(AFTER + MODULE)
    with caplog.at_level(logging.WARNING, "gitreg.freshness.catalog_file"):
        reloaded = read_again(served)
    assert _waiting(reloaded) == _waiting(served) != _waiting(load_catalog(path))
    assert _applied(reloaded) == _applied(load_catalog(path)) != _applied(served)
    assert [r.getMessage() for r in caplog.records] == [
        f"catalog reload: a change of {key} takes effect at the next restart" for key in WAITING
    ]


def test_a_reload_that_changes_none_of_them_says_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "registry.yaml"
    path.write_text(BEFORE + MODULE)
    served = load_catalog(path)
    path.write_text(BEFORE.replace("one.", "two.") + MODULE)
    with caplog.at_level(logging.WARNING, "gitreg.freshness.catalog_file"):
        reloaded = read_again(served)
    assert reloaded.server.hostname == "two.example.com" and not caplog.records
