"""Every key registry.yaml accepts, asked of the loader itself: a key it does not know is
refused with the keys it knows (`unknown key (known keys: ...)`), so a probe key put in each
section in turn, as a mapping, a list of them or a mapping of host names to them, draws out
every section's keys, however the loader holds them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.refused_catalogs import refused

PROBE = "zzprobe"
HOST = "probe.example"
_KNOWN = "unknown key (known keys: "


@dataclass(frozen=True)
class Step:
    """One step down the catalog: into a key, into a list's first item, or into a mapping of
    host names (`mirror.origins`) at one host."""

    kind: str  # "key", "item" or "host"
    key: str = ""

    def path(self) -> str:
        """The step as the loader's key paths write it."""
        return {"key": f".{self.key}", "item": "[0]", "host": f".{HOST}"}[self.kind]

    def shown(self) -> str:
        """The step as the reference page writes it."""
        return {"key": f".{self.key}", "item": "[]", "host": ".HOST"}[self.kind]


Where = tuple[Step, ...]


def _path(where: Where) -> str:
    return "".join(s.path() for s in where).removeprefix(".")


def shown(where: Where) -> str:
    return "".join(s.shown() for s in where).removeprefix(".")


def _document(where: Where, leaf: Any) -> Any:
    value = leaf
    for step in reversed(where):
        if step.kind == "key":
            value = {step.key: value}
        elif step.kind == "item":
            value = [value]
        else:
            value = {HOST: value}
    return value


def _known_keys(folder: Path, where: Where) -> set[str] | None:
    """The keys the loader knows in the mapping at `where`, or None when it reads none there."""
    catalog = folder / "registry.yaml"
    catalog.write_text(json.dumps(_document(where, {PROBE: 1})))  # JSON is YAML
    wanted = f"{_path(where)}.{PROBE}".removeprefix(".")
    for problem in refused(catalog, secrets=()).problems:
        if problem.path == wanted and problem.reason.startswith(_KNOWN):
            return set(problem.reason.removeprefix(_KNOWN).rstrip(")").split(", "))
    return None


def accepted_keys(folder: Path) -> Iterator[str]:
    """Every key path registry.yaml accepts, as the reference page writes it: `hostname`,
    `modules[].repo`, `auth.git.cache`, `mirror.origins.HOST.url`."""
    waiting: list[Where] = [()]
    while waiting:
        where = waiting.pop()
        keys = _known_keys(folder, where)
        if keys is None:
            continue
        for key in sorted(keys):
            child = (*where, Step("key", key))
            yield shown(child)
            waiting += [child, (*child, Step("item")), (*child, Step("host"))]
