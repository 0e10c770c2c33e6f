"""The documentation site's pages as a test reads them: a page's text, its sections by heading,
and the code spans of a table's first column."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


def page(name: str) -> str:
    """The Markdown of `docs/<name>`."""
    return (DOCS / name).read_text()


def sections(text: str, level: int = 2) -> dict[str, str]:
    """Each heading of `level` (`## gitreg serve`) and the text under it, up to the next
    heading of that level or above."""
    marks = "#" * level
    found = re.finditer(rf"^{marks} ([^\n]+)\n(.*?)(?=^#{{1,{level}}} |\Z)", text, re.M | re.S)
    return {m.group(1).strip(): m.group(2) for m in found}


def first_cells(text: str, header: str) -> dict[str, str]:
    """The code spans in the first cell of every row of the tables whose first column is headed
    `header`, each mapped to its whole row: `| `a.b` | ... |` gives {"a.b": "| `a.b` | ... |"}.
    A cell may hold several (`` `GET` `HEAD` ``)."""
    rows: dict[str, str] = {}
    heading: str | None = None  # the first column's header of the table being read
    for line in text.splitlines():
        if not line.startswith("|"):
            heading = None
            continue
        cell = line.split("|")[1].strip()
        if heading is None:
            heading = cell
        elif heading == header and not set(line) <= set("|-: "):
            for span in re.findall(r"`([^`]+)`", cell):
                rows.setdefault(span, line)
    return rows
