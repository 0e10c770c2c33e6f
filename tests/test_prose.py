"""Module docstrings for their reader: one plain sentence first, at most ten lines in all.

Why a mechanism works as it does belongs on its page of docs/ (which a docstring names) and
its figures in bench/RESULTS.md, where they can be kept true; a docstring says what the module
is for. A page a docstring names must exist."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parents[1]
PACKAGE = TOP / "gitreg"
MOST_LINES = 10  # "a module docstring is at most about ten lines" (issue 38, item 6)


MODULES = sorted(path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py"))
SENTENCE_END = re.compile(r"[.!?](\s|$)")
PAGE = re.compile(r"\bdocs/[\w/-]+\.md\b")


def docstring_of(relative: str) -> tuple[str, int]:
    """The module's docstring, and how many lines of the file it takes, quotes included."""
    tree = ast.parse((PACKAGE / relative).read_text())
    first = tree.body[0] if tree.body else None
    assert (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ), f"gitreg/{relative} has no docstring: say in one sentence what the module is for"
    assert first.end_lineno is not None
    return first.value.value, first.end_lineno - first.lineno + 1


@pytest.mark.parametrize("relative", MODULES)
def test_a_module_docstring_is_short_and_starts_with_a_sentence(relative: str) -> None:
    text, lines = docstring_of(relative)
    assert lines <= MOST_LINES, (
        f"gitreg/{relative}: a docstring of {lines} lines; keep it to {MOST_LINES} and name the"
        " docs/ page that explains the mechanism"
    )
    opening = " ".join(text.strip().splitlines()[:2])
    assert SENTENCE_END.search(opening), (
        f"gitreg/{relative}: the docstring's first sentence does not end within its first two lines"
    )


def test_the_pages_docstrings_name_exist() -> None:
    missing = {
        f"gitreg/{relative}: {page}"
        for relative in MODULES
        for page in PAGE.findall(docstring_of(relative)[0])
        if not (TOP / page).is_file()
    }
    assert not missing, sorted(missing)
