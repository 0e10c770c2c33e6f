"""A forge's page decoded into the fields a lister reads: every other field skipped, absent ones
absent, and what no page of that forge is (not JSON, an item that is not an object, `values`
that is not a list) a fault, never fewer repositories."""

from __future__ import annotations

import pytest

from gitreg.sources.forge_json import Malformed, NotJson, PageShape, items, member, text

LISTED = PageShape("Listed", ("name", "topics"))
PAGED = PageShape("Paged", ("slug",), page=("values", "isLastPage"), within="values")


def test_only_the_fields_read_are_kept() -> None:
    body = b'[{"name": "a", "topics": ["x"], "owner": {"login": "o"}, "id": 1}, {"name": "b"}]'
    assert LISTED.decode(body) == [{"name": "a", "topics": ["x"]}, {"name": "b"}]
    page = b'{"values": [{"slug": "s", "id": 3}], "isLastPage": true, "size": 1}'
    assert PAGED.decode(page) == {"values": [{"slug": "s"}], "isLastPage": True}


GOOD_JSON_WRONG_SHAPE: list[tuple[PageShape, bytes, str]] = [
    (LISTED, b'{"message": "ok"}', "a list of repositorys was expected, not an object"),
    (LISTED, b'[{"topics": []}]', "an item without 'name'"),
    (PAGED, b"[]", "an object was expected, not a list"),
    (PAGED, b'{"isLastPage": true}', "the answer has no 'values'"),
]


@pytest.mark.parametrize(("shape", "body", "said"), GOOD_JSON_WRONG_SHAPE)
def test_json_of_another_shape_comes_back_whole_for_the_checks_to_refuse(
    shape: PageShape, body: bytes, said: str
) -> None:
    decoded = shape.decode(body)
    with pytest.raises(Malformed, match=said):
        page = member(decoded, "values") if shape is PAGED else decoded
        for item in items(page, "repository"):
            text(item, "name")


MALFORMED: list[tuple[PageShape, bytes]] = [
    (LISTED, b"[1, 2]"),  # items that are not objects
    (LISTED, b'"a string"'),
    (LISTED, b"null"),
    (PAGED, b'{"values": {"slug": "s"}}'),  # values not a list
    (PAGED, b'{"values": [7]}'),
]


@pytest.mark.parametrize(("shape", "body"), MALFORMED)
def test_what_no_page_is_is_malformed(shape: PageShape, body: bytes) -> None:
    with pytest.raises(Malformed):
        shape.decode(body)


@pytest.mark.parametrize("body", [b"<html>Sign in</html>", b"", b'[{"name": "a"'])
def test_what_is_not_json_is_said_so(body: bytes) -> None:
    with pytest.raises(NotJson):
        LISTED.decode(body)
