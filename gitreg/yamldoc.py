"""YAML that remembers where each key stood, and a reader that reports problems by key path."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import yaml

from gitreg.errors import ConfigProblem

_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|s|m|h)?")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


class Mapping(dict[str, Any]):
    """A YAML mapping with the line of the mapping and of each of its keys."""

    line: int
    key_lines: dict[str, int]


class Sequence(list[Any]):
    """A YAML sequence with the line of the sequence and of each of its items."""

    line: int
    item_lines: list[int]


class DuplicateKey(yaml.MarkedYAMLError):
    pass


class _Loader(yaml.SafeLoader):
    pass


def _mapping(loader: _Loader, node: yaml.MappingNode) -> Mapping:
    loader.flatten_mapping(node)
    result = Mapping()
    result.line = node.start_mark.line + 1
    result.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, str):
            key = str(key)
        if key in result:
            raise DuplicateKey(
                "while reading a mapping",
                node.start_mark,
                f"the key {key!r} is given twice",
                key_node.start_mark,
            )
        result[key] = loader.construct_object(value_node, deep=True)
        result.key_lines[key] = key_node.start_mark.line + 1
    return result


def _sequence(loader: _Loader, node: yaml.SequenceNode) -> Sequence:
    result = Sequence(loader.construct_object(child, deep=True) for child in node.value)
    result.line = node.start_mark.line + 1
    result.item_lines = [child.start_mark.line + 1 for child in node.value]
    return result


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _sequence)


def load(text: str) -> Any:
    """Parse one YAML document; raise yaml.YAMLError (with a line) when it is not YAML."""
    return yaml.load(text, Loader=_Loader)


class Reader:
    """Walks a YAML tree once, collecting every problem with its key path and line."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.problems: list[ConfigProblem] = []

    def problem(self, path: str, line: int | None, reason: str) -> None:
        self.problems.append(ConfigProblem(path or "(document)", line, reason))

    def mapping(
        self,
        value: Any,
        path: str,
        line: int | None,
        allowed: Collection[str],
        required: Collection[str] = (),
    ) -> Mapping | None:
        if not isinstance(value, Mapping):
            self.problem(path, line, f"must be a mapping, not {_kind(value)}")
            return None
        for key in value:
            if key not in allowed:
                known = ", ".join(sorted(allowed))
                self.problem(
                    join(path, key), value.key_lines[key], f"unknown key (known keys: {known})"
                )
        for key in sorted(set(required) - value.keys()):
            self.problem(join(path, key), value.line, "is required")
        return value

    def string(self, m: Mapping, key: str, path: str, default: str | None = None) -> str | None:
        if key not in m or m[key] is None:
            return default
        value = m[key]
        if not isinstance(value, str) or not value.strip():
            self.problem(
                join(path, key),
                m.key_lines[key],
                f"must be a non-empty string, not {_kind(value)}",
            )
            return None
        return value.strip()

    def choice(self, m: Mapping, key: str, path: str, options: tuple[str, ...]) -> str:
        value = self.string(m, key, path, options[0])
        if value not in options:
            self.problem(
                join(path, key),
                m.key_lines.get(key),
                f"must be one of {', '.join(options)}, not {value!r}",
            )
            return options[0]
        return value

    def parsed(self, m: Mapping, key: str, path: str, parse: Callable[[str], Any]) -> Any:
        text = self.string(m, key, path)
        if text is None:
            return None
        try:
            return parse(text)
        except ValueError as exc:
            self.problem(join(path, key), m.key_lines[key], str(exc))
            return None

    def duration(self, m: Mapping, key: str, path: str, default: float) -> float:
        value = m.get(key, default)
        if isinstance(value, bool):
            value = None
        if isinstance(value, (int, float)) and value > 0:
            return float(value)
        match = _DURATION.fullmatch(value.strip()) if isinstance(value, str) else None
        seconds = float(match[1]) * _UNITS[match[2]] if match else 0.0
        if seconds <= 0:
            self.problem(
                join(path, key),
                m.key_lines.get(key),
                f"must be a positive duration like 30s, 5m or 1h, not {value!r}",
            )
            return default
        return seconds

    def flag(self, m: Mapping, key: str, path: str, default: bool) -> bool:
        value = m.get(key, default)
        if not isinstance(value, bool):
            self.problem(
                join(path, key), m.key_lines.get(key), f"must be true or false, not {value!r}"
            )
            return default
        return value

    def count(self, m: Mapping, key: str, path: str, default: int) -> int:
        value = m.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= 1024:
            self.problem(
                join(path, key),
                m.key_lines.get(key),
                f"must be a whole number from 1 to 1024, not {value!r}",
            )
            return default
        return value

    def env_name(self, m: Mapping, key: str, path: str) -> str | None:
        """The name of an environment variable given at `key`; reported when it is unset (or
        empty): a secret read from it would be missing at its first use, not at start-up."""
        name = self.string(m, key, path)
        if name and not os.environ.get(name):
            self.problem(
                join(path, key), m.key_lines[key], f"the environment variable {name} is not set"
            )
        return name

    def file(self, m: Mapping, key: str, path: str) -> Path | None:
        text = self.string(m, key, path)
        if text is None:
            return None
        resolved = (self.base / os.path.expanduser(text)).resolve()
        if not resolved.is_file():
            self.problem(
                join(path, key), m.key_lines[key], f"{text!r} is not a readable file ({resolved})"
            )
        return resolved

    def items(self, top: Mapping, key: str, parent: str = "") -> list[tuple[str, int, Any]]:
        value = top.get(key)
        where = join(parent, key)
        if value is None:
            return []
        if not isinstance(value, Sequence):
            self.problem(where, top.key_lines[key], f"must be a list, not {_kind(value)}")
            return []
        return [(f"{where}[{i}]", value.item_lines[i], item) for i, item in enumerate(value)]

    def problems_at(self, path: str) -> bool:
        """Whether any problem was reported at `path` or below it."""
        return any(
            p.path == path or p.path.startswith((f"{path}.", f"{path}[")) for p in self.problems
        )


def join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _kind(value: Any) -> str:
    kinds = (
        (bool, "a boolean"),
        (dict, "a mapping"),
        (list, "a list"),
        (str, "a string"),
        (int, "a number"),
        (float, "a number"),
    )
    if value is None:
        return "nothing"
    return next((word for kind, word in kinds if isinstance(value, kind)), type(value).__name__)
