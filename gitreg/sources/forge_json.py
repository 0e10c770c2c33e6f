"""What a forge's JSON answer holds, read with its types checked: a field of the wrong type or
missing is a malformed answer, never a repository quietly left out.

A page is decoded by msgspec into the few fields a lister reads (`PageShape`), every other field
skipped unbuilt: a GitLab project is some seventy fields, of which seven are read, and decoding
the rest cost as much as receiving the page. What is read comes back as plain mappings and lists,
checked field by field as before."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec


class Malformed(Exception):
    """The forge answered 200 with something other than what its API documents."""


Item = Mapping[str, object]


class NotJson(ValueError):
    """The answer's body is not JSON at all (a sign-in page, a proxy's error)."""


class PageShape:
    """The fields a lister reads of a page: of each item of a JSON array (`fields`), or, for a
    page that is an object (`page`: its own fields), of each item of its `within` array. Any
    other JSON value decodes whole, for the checks to name it."""

    def __init__(
        self, name: str, fields: Sequence[str], page: Sequence[str] = (), within: str = ""
    ) -> None:
        item = _struct(f"{name}Item", fields)
        shape: Any = list[item] | dict[str, Any]  # type: ignore[valid-type]
        if within:
            items: Any = list[item] | msgspec.UnsetType  # type: ignore[valid-type]
            top: list[tuple[str, Any, Any]] = [(f, Any, msgspec.UNSET) for f in page if f != within]
            top.append((within, items, msgspec.UNSET))
            shape = msgspec.defstruct(f"{name}Page", top) | list[Any]
        self._decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder(shape)

    def decode(self, content: bytes) -> object:
        """The page's JSON, with only the fields read; NotJson, or Malformed when it is JSON
        that no page of this forge is (an item that is not an object, a `values` that is not
        a list)."""
        try:
            return _plain(self._decoder.decode(content))
        except msgspec.ValidationError as exc:
            raise Malformed(str(exc)) from None
        except msgspec.DecodeError as exc:
            raise NotJson(str(exc)) from None


class WholePage:
    """A page decoded whole: every field of every item (a forge's releases, read rarely)."""

    def decode(self, content: bytes) -> object:
        try:
            return msgspec.json.decode(content)
        except msgspec.DecodeError as exc:
            raise NotJson(str(exc)) from None


WHOLE = WholePage()


def _struct(name: str, fields: Sequence[str]) -> type[msgspec.Struct]:
    # Every field as any JSON value, absent when absent: the checks below say what is wrong.
    return msgspec.defstruct(name, [(f, Any, msgspec.UNSET) for f in fields])


def _plain(value: object) -> object:
    """A page's structs as dicts of the fields present: the page's own and its items'."""
    if isinstance(value, list):
        return [_fields(v) if isinstance(v, msgspec.Struct) else v for v in value]
    if isinstance(value, msgspec.Struct):
        page = _fields(value)
        return {k: _plain(v) if isinstance(v, list) else v for k, v in page.items()}
    return value


def _fields(struct: msgspec.Struct) -> dict[str, object]:
    # The fields' own values are plain JSON already (each is typed Any).
    pairs = zip(struct.__struct_fields__, msgspec.structs.astuple(struct), strict=True)
    return {name: v for name, v in pairs if v is not msgspec.UNSET}


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
