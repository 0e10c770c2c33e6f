"""What a module page links to beside the module itself.

They are the examples at its repository's root that call it (a monorepo keeps them there), and
the other modules published from the same repository."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass, replace

from gitreg.catalog.specs import ModuleSpec
from gitreg.docs.model import FolderDocs


@dataclass(frozen=True)
class Sibling:
    address: str
    url: str


def siblings(spec: ModuleSpec, specs: Iterable[ModuleSpec]) -> tuple[Sibling, ...]:
    """The other modules of `specs` (those published from `spec`'s repository that the reader
    may read), by address."""
    found = {
        str(other.address): Sibling(
            str(other.address),
            f"/modules/{other.address.namespace}/{other.address.name}/{other.address.system}",
        )
        for other in specs
        if other.address.key != spec.address.key
    }
    return tuple(found[k] for k in sorted(found))


def calling_examples(spec: ModuleSpec, examples: Iterable[FolderDocs]) -> tuple[FolderDocs, ...]:
    """The repository's root examples (paths from the module's folder, as the docs hold them)
    that call the module: by a relative path to its folder, a Git source's `//folder`, or its
    registry address. Each with its path in the repository."""
    found = []
    for example in examples:
        where = posixpath.normpath(posixpath.join(spec.path, example.path))
        if any(_calls(spec, where, call.source) for call in example.module_calls):
            found.append(replace(example, path=where))
    return tuple(found)


def _calls(spec: ModuleSpec, where: str, source: str) -> bool:
    folder = posixpath.normpath(spec.path or ".")
    if source.startswith(("./", "../")):
        target = posixpath.normpath(posixpath.join(where, source.split("//")[0]))
        return target == folder
    plain = source.removeprefix("git::").split("?")[0]
    rest = plain.rpartition("://")[2]
    if "//" in rest:
        return posixpath.normpath(rest.split("//", 1)[1]) == folder
    a = spec.address
    return plain.lower().endswith(f"/{a.namespace}/{a.name}/{a.system}".lower())
