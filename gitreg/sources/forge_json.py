"""What a forge's JSON answer holds, read with its types checked: a field of the wrong type or
missing is a malformed answer, never a repository quietly left out.

A page of repositories is decoded by msgspec straight into structs of the fields a lister reads,
typed: a GitLab project is some seventy fields, of which eight are read, and building the rest,
or checking the eight one by one in Python, cost as much as receiving the page. Answers read
rarely (a forge's releases) are decoded whole and checked field by field."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Generic, TypeVar

import msgspec


class Malformed(Exception):
    """The forge answered 200 with something other than what its API documents."""


Item = Mapping[str, object]


class NotJson(ValueError):
    """The answer's body is not JSON at all (a sign-in page, a proxy's error)."""


P = TypeVar("P", covariant=True)


class Shaped(Generic[P]):
    """A page decoded by msgspec straight into `shape`: structs of the fields a lister reads,
    with their types (below), every other field skipped unbuilt. A field of the wrong type, or
    a required one missing or empty, is Malformed, naming where; text that is not JSON is
    NotJson."""

    def __init__(self, shape: type[P]) -> None:
        self._decoder: msgspec.json.Decoder[P] = msgspec.json.Decoder(shape)

    def decode(self, content: bytes) -> P:
        try:
            return self._decoder.decode(content)
        except msgspec.ValidationError as exc:
            raise Malformed(f"not as its API documents: {exc}") from None
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

# What the listers read of each forge's repositories. A string a repository must have is
# Named (not empty); one it may leave out or give as null, `str | None`. Decoded from JSON, they
# can hold no reference cycle: the collector need not track them (`gc=False`), which spares its
# passes over 10,000 repositories' worth during a listing. Topics are decoded as the tuples a
# FoundRepository keeps.
Named = Annotated[str, msgspec.Meta(min_length=1)]


class GitLabProject(msgspec.Struct, gc=False):
    path: Named
    path_with_namespace: Named
    http_url_to_repo: Named
    ssh_url_to_repo: str | None = None
    default_branch: str | None = None  # null for an empty project
    topics: tuple[str, ...] | None = None
    tag_list: tuple[str, ...] | None = None  # topics, before GitLab 14.0
    archived: bool | None = None


class GitHubRepository(msgspec.Struct, gc=False):
    """As GitHub's REST API writes a repository, and Gitea's and Forgejo's v1 API the same."""

    name: Named
    full_name: Named
    clone_url: Named
    ssh_url: str | None = None
    default_branch: str | None = None
    topics: tuple[str, ...] | None = None
    archived: bool | None = None


class BitbucketProject(msgspec.Struct, gc=False):
    key: str | None = None


class BitbucketLink(msgspec.Struct, gc=False):
    name: Named
    href: Named


class BitbucketLinks(msgspec.Struct, gc=False):
    clone: list[BitbucketLink] = []


class BitbucketRepository(msgspec.Struct, gc=False):
    slug: Named
    project: BitbucketProject | None = None
    links: BitbucketLinks | None = None
    archived: bool | None = None  # Data Center 8.0 and later


class BitbucketPage(msgspec.Struct, gc=False):
    values: list[BitbucketRepository]
    isLastPage: bool
    nextPageStart: int | None = None


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
