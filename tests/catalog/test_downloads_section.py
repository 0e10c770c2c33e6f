"""The `downloads:` section: counting on by default, kept 400 days, principals shown to ops
alone; every bad value refused with its key, its line and why."""

from __future__ import annotations

import pytest

from gitreg.catalog.settings import DownloadSettings
from gitreg.errors import ConfigError
from tests.conftest import WriteCatalog

DAY = 86400.0


def test_the_defaults(write_catalog: WriteCatalog) -> None:
    catalog = write_catalog("mirror: {}\n")
    assert catalog.downloads == DownloadSettings(
        enabled=True, retention=400 * DAY, show_principals=False
    )


def test_each_key_is_read(write_catalog: WriteCatalog) -> None:
    catalog = write_catalog(
        "mirror: {}\ndownloads:\n  enabled: false\n  retention: 30d\n  show_principals: true\n"
    )
    assert catalog.downloads == DownloadSettings(
        enabled=False, retention=30 * DAY, show_principals=True
    )


@pytest.mark.parametrize(
    ("lines", "key", "line", "reason"),
    [
        (
            "  retention: 12h\n",
            "downloads.retention",
            4,
            "must be at least 1d: downloads are counted by day, not '12h'",
        ),
        ("  retention: 400\n", "downloads.retention", 4, "400 has no unit"),
        ("  enabled: maybe\n", "downloads.enabled", 4, "must be true or false"),
        ("  show_principal: true\n", "downloads.show_principal", 4, "unknown key"),
    ],
)
def test_a_bad_value_is_refused_with_its_key_and_line(
    write_catalog: WriteCatalog, lines: str, key: str, line: int, reason: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        write_catalog(f"mirror: {{}}\ndownloads:\n{lines}")
    found = [(p.path, p.line, p.reason) for p in refused.value.problems]
    assert len(found) == 1, found
    assert found[0][:2] == (key, line)
    assert reason in found[0][2]
