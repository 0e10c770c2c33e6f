"""What a forge's JSON answer holds, read with its types checked: a field of the wrong type or
missing is a malformed answer, never a repository quietly left out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


class Malformed(Exception):
    """The forge answered 200 with something other than what its API documents."""


Item = Mapping[str, object]


def items(body: object, what: str) -> Sequence[Item]:
    """`body`, which must be a JSON array of objects (`what` names one: "project")."""
    if not isinstance(body, list):
        raise Malformed(f"a list of {what}s was expected, not {_kind(body)}")
    for item in body:
        if not isinstance(item, dict):
            raise Malformed(f"a {what} was expected, not {_kind(item)}")
    return body


def member(body: object, key: str) -> object:
    """`body[key]`, where `body` must be a JSON object holding `key`."""
    if not isinstance(body, dict):
        raise Malformed(f"an object was expected, not {_kind(body)}")
    if key not in body:
        raise Malformed(f"the answer has no {key!r}")
    return body[key]


def text(item: Item, key: str) -> str:
    """A string the item must have, not empty."""
    value = item.get(key)
    if not isinstance(value, str) or not value:
        raise Malformed(f"an item without {key!r}: {_kind(value)} where a string was expected")
    return value


def optional_text(item: Item, key: str) -> str:
    """A string the item may leave out or give as null: then ""."""
    value = item.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise Malformed(f"{key!r} is {_kind(value)}, not a string")
    return value


def flag(item: Item, key: str) -> bool:
    """A boolean the item may leave out (older forges): then False."""
    value = item.get(key, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise Malformed(f"{key!r} is {_kind(value)}, not true or false")
    return value


def words(item: Item, key: str) -> tuple[str, ...] | None:
    """A list of strings (topics); None when the item leaves it out or gives null."""
    value = item.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(word, str) for word in value):
        raise Malformed(f"{key!r} is {_kind(value)}, not a list of strings")
    return tuple(value)


def _kind(value: object) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    if value is None:
        return "nothing"
    return names.get(type(value), "a number" if isinstance(value, int | float) else "a value")
