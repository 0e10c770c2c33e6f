"""docs/how-it-works/index.md summarises ARCHITECTURE.md: every package its table names has a
row on the page, and its layers are the page's, as many and in the same order."""

from __future__ import annotations

import re
from pathlib import Path

from tests.docs_site.site_pages import first_cells, page, sections

ARCHITECTURE = (Path(__file__).resolve().parents[2] / "ARCHITECTURE.md").read_text()
PAGE = page("how-it-works/index.md")


def test_every_package_of_the_architecture_is_on_the_page() -> None:
    packages = set(first_cells(ARCHITECTURE, "package"))
    assert {"gitreg/", "catalog/", "web/"} <= packages
    on_page = set(first_cells(PAGE, "package"))
    missing = sorted(packages - on_page)
    assert not missing, f"packages ARCHITECTURE.md names, not on the page: {missing}"
    unknown = sorted(on_page - packages)
    assert not unknown, f"packages on the page ARCHITECTURE.md does not name: {unknown}"


def _layers(text: str) -> list[tuple[str, str]]:
    """Each numbered line under '## Layers': its number and its text."""
    found = re.finditer(r"^(\d+)\. (.*)$", sections(text)["Layers"], re.M)
    return [(m.group(1), m.group(2)) for m in found]


def test_the_layers_are_the_architectures() -> None:
    theirs, ours = _layers(ARCHITECTURE), _layers(PAGE)
    assert [n for n, _ in ours] == [n for n, _ in theirs], "as many layers, numbered alike"
    for (number, line), (_, summary) in zip(theirs, ours, strict=True):
        for package in re.findall(r"`(\w+/)`", line):
            assert f"`{package}`" in summary, f"layer {number} holds {package}: {summary}"
