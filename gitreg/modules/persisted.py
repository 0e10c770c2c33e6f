"""The persisted index: what serving needs of one repository, as one line of text.

A line holds its modules' versions, ignored tags and tag changes, and its tags, with what they
were read from (`ReadFrom`: digests of the clone's tag refs and of the ledger's published tags):
a start serves from it a repository whose clone and ledger still give those digests, rather than
read the clone. It is `<sha256 of the rest> <head>\t<body>`, both JSON (which never holds a raw
tab): the head, `[format, url, refs, ledger]`, says what the line is without the body parsed, and
a line cut short or changed fails its digest. Strings are written once per line and named by
position, so that 50 commits are not written 500 times (the file's size and a cold read's time:
bench/RESULTS.md, bench.scale). See docs/how-it-works/internals.md."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from gitreg.catalog.specs import ModuleSpec
from gitreg.git.clone import TagRef
from gitreg.modules.cooldown import held
from gitreg.modules.index import ModuleEntry
from gitreg.modules.resolve import IgnoredTag, ModuleVersions, Release
from gitreg.modules.tag_policy import TagChange

FORMAT = 2  # of a line; a line of another format is read as absent (2: versions' deprecations)
_NONE = -1  # where a commit is None (a tag of a tree) or a tag change's current commit


class Unreadable(ValueError):
    """A line that cannot be used: cut short, changed, or of another format."""


@dataclass(frozen=True)
class ReadFrom:
    """What a repository's entries were read from: served again only while both still hold."""

    refs: str  # digest of the clone's tag refs (git.tag_refs)
    ledger: str  # the ledger's fingerprint (TagLedger.fingerprint)


_COMMIT = 40  # characters of a SHA-1 object id


def reading(spec: ModuleSpec) -> list[str]:
    """What of a module's spec its entry depends on: a line read for another (a template or
    the folder changed in registry.yaml since) is not used. The rest (download mode, archive
    scope, ...) is taken from the catalog served."""
    templates = [part for t in spec.tags for part in (t.prefix, t.suffix)]
    read = [spec.path, spec.moved_tags, spec.deleted_tags, *templates]
    signers = spec.signed_tags
    read = [*read, f"signed:{signers.kind}:{signers.digest}"] if signers else read
    # A clone with versions held back is never noted: no line read without it serves it.
    return [*read, "publish_when"] if held(spec) else read


@dataclass(frozen=True)
class RepositoryLine:
    """One repository's line, decoded as far as a start needs to decide whether to use it."""

    url: str
    read_from: ReadFrom
    body: dict[str, Any]  # the line's JSON

    def modules(self) -> dict[tuple[str, str, str], list[str]]:
        """Module key → its `reading` when the line was written."""
        return {(m[0], m[1], m[2]): m[3] for m in self._modules()}

    def serves(self, specs: Sequence[ModuleSpec]) -> bool:
        """Whether the line was written for exactly these modules, each as specified now."""
        try:
            return self.modules() == {s.address.key: reading(s) for s in specs}
        except (IndexError, KeyError, TypeError) as exc:
            raise Unreadable(f"the line of {self.url} is malformed: {exc!r}") from None

    def entries(
        self, specs: Sequence[ModuleSpec], clone_path: Path
    ) -> tuple[tuple[ModuleEntry, ...], tuple[TagRef, ...]]:
        """The entries of `specs` (which it `serves`) and the repository's tags."""
        try:
            strings = self.body["strings"]
            assert isinstance(strings, list) and all(type(s) is str for s in strings)
            # Versions and tag names repeat from one repository to the next (every monorepo
            # of a release train has `mod3/v1.2.0`, `1.2.0`): one string each, not one per line
            # (the memory it saves: bench/RESULTS.md, bench.scale). Commits are each their own.
            strings = [s if len(s) == _COMMIT else sys.intern(s) for s in strings]
            by_key = {(m[0], m[1], m[2]): m for m in self._modules()}
            entries = tuple(
                _entry(spec, clone_path, by_key[spec.address.key], strings) for spec in specs
            )
            flat = self.body["tags"]
            assert isinstance(flat, list)
            named = _named(flat, strings)
            tags = tuple(map(_make_tag_ref, zip(named[0::2], named[1::2], strict=True)))
        except (AssertionError, KeyError, IndexError, TypeError, ValueError) as exc:
            raise Unreadable(f"the line of {self.url} is malformed: {exc!r}") from None
        return entries, tags

    def _modules(self) -> list[list[Any]]:  # as JSON made it; checked where read
        modules = self.body.get("modules")
        if not isinstance(modules, list):
            raise Unreadable(f"the line of {self.url} lists no modules")
        return modules


def _entry(
    spec: ModuleSpec, clone_path: Path, module: list[Any], strings: list[str]
) -> ModuleEntry:
    _, _, _, _, releases, ignored, unmatched, changes, deprecated = module[:9]
    signed = module[9] if len(module) > 9 else []  # lines written before signatures hold none
    assert isinstance(releases, list) and isinstance(ignored, list)
    assert isinstance(changes, list) and type(unmatched) is int
    assert isinstance(deprecated, list) and isinstance(signed, list)
    s = strings
    named = [s[i] for i in releases]
    reasons = [""] * (len(named) // 3)
    for i in range(0, len(deprecated), 2):  # only the few versions deprecated are written
        reasons[deprecated[i]] = s[deprecated[i + 1]]
    signers = [""] * (len(named) // 3)
    for i in range(0, len(signed), 2):  # only under require_signed_tags
        signers[signed[i]] = s[signed[i + 1]]
    made = zip(named[0::3], named[1::3], named[2::3], reasons, signers, strict=True)
    versions = ModuleVersions(
        tuple(map(_make_release, made)),
        tuple(IgnoredTag(s[ignored[i]], s[ignored[i + 1]]) for i in range(0, len(ignored), 2)),
        unmatched,
    )
    tag_changes = tuple(
        TagChange(
            s[changes[i]],
            s[changes[i + 1]],
            None if changes[i + 2] == _NONE else s[changes[i + 2]],
            s[changes[i + 3]],  # type: ignore[arg-type]  # one of Action's, as written
        )
        for i in range(0, len(changes), 4)
    )
    return ModuleEntry(spec, clone_path, versions, tag_changes)


# A named tuple made from a plain one in C, without its Python-level __new__: half a million
# releases and as many tags are made at a start.
_make_release = partial(tuple.__new__, Release)
_make_tag_ref = partial(tuple.__new__, TagRef)


def _named(positions: list[int], strings: list[str]) -> list[str | None]:
    """The strings at `positions`; None for _NONE (a negative position would name another)."""
    return [None if i == _NONE else strings[i] for i in positions]


class _Strings:
    """Each string's position in the line's table, the first time it is named."""

    def __init__(self) -> None:
        self.table: list[str] = []
        self._at: dict[str, int] = {}

    def __call__(self, text: str | None) -> int:
        if text is None:
            return _NONE
        at = self._at.get(text)
        if at is None:
            at = self._at[text] = len(self.table)
            self.table.append(text)
        return at


def encode(
    url: str, read_from: ReadFrom, entries: Iterable[ModuleEntry], tags: Iterable[TagRef]
) -> str:
    """One repository's line (without its newline)."""
    s = _Strings()
    modules = []
    for e in entries:
        releases = [s(part) for r in e.versions.releases for part in r[:3]]
        deprecated = [
            part
            for at, r in enumerate(e.versions.releases)
            if r.deprecated
            for part in (at, s(r.deprecated))
        ]
        ignored = [s(part) for i in e.versions.ignored for part in i]
        changes = [s(part) for c in e.changes for part in (c.tag, c.published, c.current, c.action)]
        signed = [
            part
            for at, r in enumerate(e.versions.releases)
            if r.signer
            for part in (at, s(r.signer))
        ]
        key = e.spec.address.key
        unmatched = e.versions.unmatched
        module = [*key, reading(e.spec), releases, ignored, unmatched, changes, deprecated]
        modules.append([*module, signed] if signed else module)
    flat_tags = [s(part) for t in tags for part in t]
    body = {"modules": modules, "tags": flat_tags, "strings": s.table}
    head = [FORMAT, url, read_from.refs, read_from.ledger]
    text = f"{_json(head)}\t{_json(body)}"
    return f"{_digest(text)} {text}"


def head(line: str) -> tuple[str, ReadFrom]:
    """A line's repository and what it was read from, its body not parsed; Unreadable when it
    cannot be used."""
    digest, _, text = line.partition(" ")
    if _digest(text) != digest:
        raise Unreadable("a line fails its digest (cut short or changed)")
    first, _, _ = text.partition("\t")
    try:
        version, url, refs, ledger = json.loads(first)
    except (ValueError, TypeError) as exc:
        raise Unreadable(f"a line is malformed: {exc!r}") from None
    if version != FORMAT:
        raise Unreadable(f"a line of format {version!r}, not {FORMAT}")
    if not all(isinstance(v, str) for v in (url, refs, ledger)):
        raise Unreadable("a line is malformed: its url, refs or ledger is not text")
    return url, ReadFrom(refs, ledger)


def decode(line: str) -> RepositoryLine:
    """A line, body and all; Unreadable when it cannot be used."""
    url, read_from = head(line)
    try:
        body = json.loads(line.partition("\t")[2])
    except ValueError as exc:
        raise Unreadable(f"the line of {url} is malformed: {exc!r}") from None
    if not isinstance(body, dict):
        raise Unreadable(f"the line of {url} is malformed: its body is no object")
    return RepositoryLine(url, read_from, body)


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
