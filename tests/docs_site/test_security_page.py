"""docs/how-it-works/security.md: every promise names the tests that prove it, and each of them
exists; the page sends reporters to SECURITY.md, which exists."""

from __future__ import annotations

import re
from pathlib import Path

from tests.docs_site.site_pages import page, sections

TOP = Path(__file__).resolve().parents[2]
PAGE = page("how-it-works/security.md")


def test_every_promise_names_the_tests_that_prove_it() -> None:
    promises = sections(sections(PAGE)["What gitreg promises"], level=3)
    assert len(promises) >= 6, f"the promises, one section each: {sorted(promises)}"
    for promise, text in promises.items():
        named = re.findall(r"`(tests/[\w/]+\.py)`", text)
        assert named, f"'{promise}' names no test that proves it"
        absent = [path for path in named if not (TOP / path).is_file()]
        assert not absent, f"'{promise}' names tests that do not exist: {absent}"


def test_reporters_are_sent_to_security_md() -> None:
    assert "`SECURITY.md`" in sections(PAGE)["Reporting a problem"]
    assert (TOP / "SECURITY.md").is_file()
