"""The documentation site cannot rot silently: every block of docs/ that a user runs or pastes
is claimed by a named test that reads its page (which fails unless it runs every block it
claims), or says why no test runs it; and the README keeps the two commands CI runs, and links
into the site that lead somewhere."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.site_snippets import RUN_OR_PASTED, TOP, pages, read_page

TESTS = TOP / "tests"


def test_every_block_a_user_runs_is_run_by_a_test_or_says_why() -> None:
    unmarked = [
        f"{s.where} ({s.language or 'no language'})"
        for page in pages()
        for s in read_page(page)[0]
        if s.language in RUN_OR_PASTED and s.test is None and s.not_run is None
    ]
    assert not unmarked, (
        "blocks with no test and no reason; put `<!-- test: test_name -->` (a test that takes "
        "it with tests.support.site_snippets.claimed) or `<!-- not run: why -->` on the line "
        "right before each:\n" + "\n".join(unmarked)
    )


def test_every_reason_not_to_run_a_block_is_given() -> None:
    empty = [s.where for page in pages() for s in read_page(page)[0] if s.not_run == ""]
    assert not empty


def test_every_marker_stands_right_before_a_block() -> None:
    stray = [
        f"docs/{m.page}:{m.line}"
        for page in pages()
        for m in read_page(page)[1]
        if not m.followed_by_fence
    ]
    assert not stray, f"markers with no block on the next line: {stray}"


def _test_sources() -> dict[Path, str]:
    return {path: path.read_text() for path in TESTS.rglob("test_*.py")}


def test_every_claim_names_a_test_that_reads_its_page() -> None:
    sources = _test_sources()
    claims = {(page, s.test) for page in pages() for s in read_page(page)[0] if s.test}
    unknown = []
    for page, test in sorted(claims):
        defines = re.compile(rf"^def {re.escape(test)}\(", re.M)
        readers = [p for p, text in sources.items() if defines.search(text) and page in text]
        if not readers:
            unknown.append(f"docs/{page}: {test}")
    assert not unknown, (
        f"claims no test module takes up (defines the test, names the page): {unknown}"
    )


README = (TOP / "README.md").read_text()


def test_the_readme_keeps_the_two_commands() -> None:
    for command in (
        "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/gitreg demo\n",
        "python3 -m venv .venv && .venv/bin/pip install '.[dev]' && .venv/bin/python -m pytest\n",
    ):
        assert command in README


def test_the_readmes_links_into_the_site_lead_to_its_pages() -> None:
    linked = re.findall(r"\]\((docs/[^)#\s]+\.md)(?:#[^)]*)?\)", README)
    assert linked, "the README links into the site"
    missing = [link for link in linked if not (TOP / link).exists()]
    assert not missing, missing
