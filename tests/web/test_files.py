"""If-None-Match, as RFC 9110 reads it."""

from __future__ import annotations

import pytest

from gitreg.web.files import etag_matches


@pytest.mark.parametrize(
    ("header", "matches"),
    [
        ('"abc"', True),
        ("*", True),
        ('W/"abc"', True),
        ('"x", "abc"', True),
        ('"x" , W/"abc" ', True),
        ('"abcd"', False),
        ('"ab"', False),
        ("", False),
        ("abc", False),
    ],
)
def test_if_none_match(header: str, matches: bool) -> None:
    assert etag_matches(header, '"abc"') is matches
