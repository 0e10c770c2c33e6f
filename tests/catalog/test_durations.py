"""Durations in registry.yaml: every key that takes one wants its unit (`60s`, `5m`), and a
number alone is refused with the key, the line and a hint, never read as seconds silently."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gitreg.errors import ConfigError
from tests.conftest import WriteCatalog
from tests.support.servers import run_gitreg

CATALOG = Path(__file__).resolve().parents[2] / "gitreg" / "catalog"

# Every duration of registry.yaml: its key path, and a catalog line holding `{}` for its value.
# Those marked True may be 0, which turns their feature off and needs no unit.
DURATIONS = {
    "refresh_interval": ("refresh_interval: {}", False),
    "fetch_timeout": ("fetch_timeout: {}", False),
    "max_backoff": ("max_backoff: {}", False),
    "fresh_reads": ("fresh_reads: {}", True),
    "shutdown_grace": ("shutdown_grace: {}", True),
    "readiness.max_staleness": ("readiness: {{max_staleness: {}}}", True),
    "auth.download_ttl": ("auth: {{download_ttl: {}}}", False),
    "auth.git.cache": ("auth: {{git: {{cache: {}}}}}", False),
    "auth.git.timeout": ("auth: {{git: {{timeout: {}}}}}", False),
    "hsts.max_age": ("hsts: {{max_age: {}}}", True),
    "mirror.deadline": ("mirror: {{deadline: {}}}", False),
    "mirror.download_deadline": ("mirror: {{download_deadline: {}}}", False),
    "downloads.retention": ("downloads: {{retention: {}}}", False),
}


def _catalog(key: str, value: str) -> str:
    line, _ = DURATIONS[key]
    mirror = "" if key.startswith("mirror.") else "mirror: {}\n"
    return f"{mirror}{line.format(value)}\n"


def _problems_at(write_catalog: WriteCatalog, text: str, key: str) -> list[tuple[int | None, str]]:
    try:
        write_catalog(text)
    except ConfigError as exc:
        return [(p.line, p.reason) for p in exc.problems if p.path == key]
    return []


def test_the_table_names_every_duration_the_loader_reads() -> None:
    """A duration key added to the loader without a row here fails this test."""
    read = set()
    for source in CATALOG.glob("*.py"):
        for key, parent in re.findall(
            r'self\.duration\(\s*\w+,\s*"(\w+)",\s*"([\w.]*)"', source.read_text()
        ):
            read.add(f"{parent}.{key}" if parent else key)
    assert read == set(DURATIONS)


@pytest.mark.parametrize("key", sorted(DURATIONS))
@pytest.mark.parametrize(
    ("value", "hint"),
    [
        ("60", "60 has no unit: write 60s for seconds (or 60m, 60h; units: ms, s, m, h, d)"),
        ("2.5", "2.5 has no unit: write 2.5s for seconds"),
        ("'60'", "'60' has no unit: write 60s for seconds"),
    ],
)
def test_a_number_alone_is_refused_with_a_hint(
    write_catalog: WriteCatalog, key: str, value: str, hint: str
) -> None:
    text = _catalog(key, value)
    line = text.splitlines().index(DURATIONS[key][0].format(value)) + 2  # cache_dir is line 1
    found = _problems_at(write_catalog, text, key)
    assert len(found) == 1, found
    assert found[0][0] == line
    assert found[0][1].startswith(hint)


@pytest.mark.parametrize("key", sorted(DURATIONS))
def test_zero_needs_no_unit_where_it_turns_the_feature_off(
    write_catalog: WriteCatalog, key: str
) -> None:
    found = _problems_at(write_catalog, _catalog(key, "0"), key)
    if DURATIONS[key][1]:
        assert found == []
    else:
        assert [reason for _, reason in found] == [
            "must be a positive duration like 30s, 5m or 1h, not 0"
        ]


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("90s", 90.0), ("1.5m", 90.0), ("2h", 7200.0), ("500ms", 0.5), ("1d", 86400.0)],
)
def test_a_duration_with_its_unit_is_read(
    write_catalog: WriteCatalog, value: str, seconds: float
) -> None:
    catalog = write_catalog(_catalog("max_backoff", value))
    assert catalog.freshness.max_backoff == seconds


def test_the_hint_is_given_by_check_as_by_serve(tmp_path: Path) -> None:
    """What an operator sees: the file, the key, the line, and what to write."""
    path = tmp_path / "registry.yaml"
    path.write_text("cache_dir: cache\nmirror: {}\nrefresh_interval: 60\n")
    for command in ("check", "serve"):
        done = run_gitreg(command, "--config", str(path))
        assert done.returncode == 2
        assert done.stderr == (
            f"gitreg: {path}: refresh_interval (line 3): 60 has no unit:"
            " write 60s for seconds (or 60m, 60h; units: ms, s, m, h, d)\n"
        )
