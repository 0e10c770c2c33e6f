"""A start's or a reload's summary line says what changed, and leaves out what did not."""

from __future__ import annotations

import pytest

from gitreg.modules.read_summary import ReadSummary


@pytest.mark.parametrize(
    ("summary", "line"),
    [
        (
            ReadSummary(2, 0, 200, 400, 0, 0, 0, 0, 0, 0.46),
            "200 modules, 400 versions; 2 repositories read in 0.5 s",
        ),
        (
            ReadSummary(1, 1, 1, 1, 1, 0, 0, 1, 0, 2.0),
            "1 module, 1 version; 1 repository read, 1 failed in 2.0 s; modules 1 added;"
            " 1 new version",
        ),
        (
            ReadSummary(1000, 3, 10000, 500000, 1, 2, 3, 4, 5, 0.9),
            "10,000 modules, 500,000 versions; 1,000 repositories read, 3 failed in 0.9 s;"
            " modules 1 added, 2 removed, 3 changed; 4 new versions; 5 tags ignored",
        ),
    ],
)
def test_the_summary_line(summary: ReadSummary, line: str) -> None:
    assert str(summary) == line
