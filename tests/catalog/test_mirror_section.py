"""mirror: in registry.yaml: read-through off unless turned on, the origins it may read (named in
a mapping or a list), the download hosts, and the bounds of its threads and deadlines."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitreg.catalog.mirror_settings import DOWNLOAD_HOSTS, MirrorSettings
from tests.conftest import WriteCatalog
from tests.support.refused_catalogs import refusal


def test_the_defaults(write_catalog: WriteCatalog) -> None:
    mirror = write_catalog("mirror: {}\n").mirror
    assert mirror == MirrorSettings()
    assert not mirror.read_through and mirror.origins == () and mirror.named == frozenset()
    assert mirror.download_hosts == DOWNLOAD_HOSTS
    assert (mirror.workers, mirror.per_origin) == (16, 4)
    assert (mirror.deadline, mirror.download_deadline) == (30.0, 600.0)


def test_every_key(write_catalog: WriteCatalog) -> None:
    mirror = write_catalog(
        """
        mirror:
          read_through: true
          origins: [Registry.Example.test, other.example.test]
          download_hosts: [files.example.test]
          workers: 8
          per_origin: 2
          deadline: 10s
          download_deadline: 20m
        """
    ).mirror
    assert mirror.read_through
    assert mirror.origins == (
        ("registry.example.test", "https://registry.example.test/"),
        ("other.example.test", "https://other.example.test/"),
    )
    assert mirror.named == {"registry.example.test", "other.example.test"}
    assert mirror.download_hosts == ("files.example.test",)
    assert (mirror.workers, mirror.per_origin) == (8, 2)
    assert (mirror.deadline, mirror.download_deadline) == (10.0, 1200.0)


def test_an_origin_with_only_a_token_is_named(write_catalog: WriteCatalog) -> None:
    mirror = write_catalog("mirror:\n  origins:\n    app.example.test: {token_env: PATH}\n").mirror
    assert mirror.named == {"app.example.test"} and mirror.origins == ()


def test_no_download_host_but_the_origins(write_catalog: WriteCatalog) -> None:
    assert write_catalog("mirror: {download_hosts: []}\n").mirror.download_hosts == ()


@pytest.mark.parametrize(
    ("text", "path", "reason"),
    [
        ("mirror: {origins: [127.0.0.1:8443]}", "mirror.origins[0]", "without a port"),
        ("mirror: {origins: [{a: b}]}", "mirror.origins[0]", "must be a hostname"),
        ("mirror: {origins: 5}", "mirror.origins", "or list hostnames"),
        ("mirror: {download_hosts: [10.0.0.1]}", "mirror.download_hosts[0]", "not a public DNS"),
        ("mirror: {download_hosts: [files]}", "mirror.download_hosts[0]", "a single label"),
        ("mirror: {download_hosts: ['f.example:8443']}", "mirror.download_hosts[0]", "port"),
        ("mirror: {download_hosts: [7]}", "mirror.download_hosts[0]", "must be a hostname"),
        ("mirror: {download_hosts: files.example}", "mirror.download_hosts", "must be a list"),
        ("mirror: {workers: 0}", "mirror.workers", "from 1 to 1024"),
        ("mirror: {per_origin: many}", "mirror.per_origin", "from 1 to 1024"),
        (
            "mirror: {workers: 4, per_origin: 8}",
            "mirror.per_origin",
            "more than mirror.workers (4)",
        ),
        ("mirror: {deadline: 0}", "mirror.deadline", "positive duration"),
        ("mirror: {download_deadline: soon}", "mirror.download_deadline", "positive duration"),
        ("mirror: {read_through: yes please}", "mirror.read_through", "true or false"),
        ("mirror: {proxy: x}", "mirror.proxy", "unknown key"),
    ],
)
def test_a_broken_mirror_section_is_refused_with_the_key_and_line(
    tmp_path: Path, text: str, path: str, reason: str
) -> None:
    refused = refusal(tmp_path, f"modules: []\n{text}\n")
    problems = [(p.path, p.line) for p in refused.problems if reason in p.reason]
    assert problems == [(path, 3)], refused.problems
