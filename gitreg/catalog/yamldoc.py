"""A reader of the YAML tree (`yamltree`) that reports every problem by key path and line."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from gitreg.catalog.secrets import SECRET_USES, SecretUse
from gitreg.catalog.yamltree import Mapping, Sequence
from gitreg.errors import ConfigProblem

__all__ = ["Mapping", "Reader", "Sequence", "join"]

_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|y)?")
_UNITS = {
    "ms": 0.001,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
    "d": 86400.0,
    "y": 365 * 86400.0,
    None: 0.0,  # a number alone: only 0, which needs no unit
}
_SIZE = re.compile(r"(\d+)\s*(B|KiB|MiB|GiB|TiB|KB|MB|GB|TB)?")
_SIZE_UNITS = {
    None: 1,
    "B": 1,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
    "TiB": 2**40,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
}


class Reader:
    """Walks a YAML tree once, collecting every problem with its key path and line.

    A key written without a value (`name:`, `name: ~`, `name: null`) or with an empty string is
    reported, never read as if it were left out: `system: null` is a module whose system YAML
    read as nothing, not a module to skip. A section (`tls:`, `mirror:`) written alone is the
    section with nothing in it, a list (`modules:`) the empty list.

    Secrets (`token_env`, `secret_file`, ...) are checked only for the uses in `secrets`: a
    command that never sends a webhook secret does not need it set."""

    def __init__(self, base: Path, secrets: Collection[SecretUse] = SECRET_USES) -> None:
        self.base = base
        self.secrets = frozenset(secrets)
        self.problems: list[ConfigProblem] = []
        # Every problem's path and each path above it (`modules[3].repo`: `modules[3]` and
        # `modules`), so that asking whether a path has a problem is a lookup: searching the
        # problems was slow for 10,000 modules whose repo was refused (bench/RESULTS.md:
        # bench.catalog_load).
        self._problem_paths: set[str] = set()
        self._problem_exact: set[str] = set()
        self._parsed: dict[tuple[Callable[[str], Any], str], Any] = {}

    def problem(self, path: str, line: int | None, reason: str) -> None:
        problem = ConfigProblem(path or "(document)", line, reason)
        self.problems.append(problem)
        where = problem.path
        self._problem_exact.add(where)
        self._problem_paths.add(where)
        self._problem_paths.update(where[:i] for i, c in enumerate(where) if c in ".[")

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
        for key in sorted(required):
            if key not in value:
                self.problem(join(path, key), value.line, "is required")
            else:
                self.no_value(value, key, path, required=True)
        return value

    def section(
        self,
        parent: Mapping,
        key: str,
        path: str,
        allowed: Collection[str],
        required: Collection[str] = (),
    ) -> Mapping | None:
        """A mapping under `key`; None when the key is absent, an empty one when it is given
        alone (so that its required keys are asked for, not the whole section dropped)."""
        if key not in parent:
            return None
        value = parent[key]
        line = parent.key_lines[key]
        if value is None:
            value = Mapping.empty(line)
        return self.mapping(value, join(path, key), line, allowed, required)

    def no_value(self, m: Mapping, key: str, path: str, required: bool = False) -> bool:
        """Whether `key` was given no value or an empty string; reported once, saying how to
        write the name null when that is what YAML read as no value."""
        value = m[key]
        if value is None:
            text = m.null_texts.get(key, "")
            if text.lower() == "null":
                reason = 'is null; write "null" in quotes if you mean the name null'
            elif text == "~":
                reason = "is ~, which YAML reads as no value"
            else:
                reason = "has no value"
        elif isinstance(value, str) and not value.strip():
            reason = "is an empty string"
        else:
            return False
        if not reason.startswith("is null"):
            reason += " (it is required)" if required else "; give one, or leave the key out"
        where = join(path, key)
        if where not in self._problem_exact:
            self.problem(where, m.key_lines[key], reason)
        return True

    def string(self, m: Mapping, key: str, path: str, default: str | None = None) -> str | None:
        """The stripped text at `key`; `default` when the key is absent, None after a problem."""
        if key not in m:
            return default
        if self.no_value(m, key, path):
            return None
        value = m[key]
        if not isinstance(value, str):
            self.problem(
                join(path, key),
                m.key_lines[key],
                f"must be a non-empty string, not {_kind(value)}",
            )
            return None
        return value.strip()

    def choice(self, m: Mapping, key: str, path: str, options: tuple[str, ...]) -> str:
        value = self.string(m, key, path, options[0])
        if value is None:
            return options[0]
        if value not in options:
            self.problem(
                join(path, key),
                m.key_lines.get(key),
                f"must be one of {', '.join(options)}, not {value!r}",
            )
            return options[0]
        return value

    def parsed(
        self,
        m: Mapping,
        key: str,
        path: str,
        parse: Callable[[str], Any],
        repeats: bool = False,
    ) -> Any:
        """`parse` of the text at `key`, or None after a problem. With `repeats`, each text is
        parsed once per read (`parse` must then be the same object at every call)."""
        text = self.string(m, key, path)
        if text is None:
            return None
        try:
            return self.once(parse, text) if repeats else parse(text)
        except ValueError as exc:
            self.problem(join(path, key), m.key_lines[key], str(exc))
            return None

    def once(self, parse: Callable[[str], Any], text: str) -> Any:
        """`parse(text)`, from what this read already parsed when it can: what a catalog of
        monorepos repeats (a repository's URL, a tag template) is parsed, and its folder looked
        up on disk, once per read rather than once per module. Raises what `parse` raised."""
        memo = (parse, text)
        if memo not in self._parsed:
            try:
                self._parsed[memo] = parse(text)
            except ValueError as exc:
                self._parsed[memo] = exc
        found = self._parsed[memo]
        if isinstance(found, ValueError):
            raise ValueError(*found.args)
        return found

    def duration(
        self, m: Mapping, key: str, path: str, default: float, zero_is_off: bool = False
    ) -> float:
        """A positive duration with its unit (30s, 5m, 1h): a number alone is refused with a
        hint, since 60 could mean seconds or minutes. With `zero_is_off`, 0 too (the feature it
        times is off), with or without a unit."""
        if key in m and self.no_value(m, key, path):
            return default
        if key not in m:
            return default
        value = m[key]
        if isinstance(value, bool):
            value = None
        text = str(value).strip() if isinstance(value, (int, float, str)) else ""
        match = _DURATION.fullmatch(text)
        if match and match[2] is None and float(match[1]) != 0:
            # 60 could be seconds, minutes or milliseconds: the reader is never left to guess
            number = match[1]
            self.problem(
                join(path, key),
                m.key_lines.get(key),
                f"{value!r} has no unit: write {number}s for seconds (or {number}m, {number}h;"
                " units: ms, s, m, h, d)",
            )
            return default
        seconds = float(match[1]) * _UNITS[match[2]] if match else -1.0
        if seconds < 0 or (seconds == 0 and not zero_is_off):
            off = " (or 0: off)" if zero_is_off else ""
            self.problem(
                join(path, key),
                m.key_lines.get(key),
                f"must be a positive duration like 30s, 5m or 1h{off}, not {value!r}",
            )
            return default
        return seconds

    def flag(self, m: Mapping, key: str, path: str, default: bool) -> bool:
        if key in m and self.no_value(m, key, path):
            return default
        value = m.get(key, default)
        if not isinstance(value, bool):
            self.problem(
                join(path, key), m.key_lines.get(key), f"must be true or false, not {value!r}"
            )
            return default
        return value

    def count(self, m: Mapping, key: str, path: str, default: int, most: int = 1024) -> int:
        if key in m and self.no_value(m, key, path):
            return default
        value = m.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= most:
            self.problem(
                join(path, key),
                m.key_lines.get(key),
                f"must be a whole number from 1 to {most}, not {value!r}",
            )
            return default
        return value

    def size(self, m: Mapping, key: str, path: str, default: int, zero_is_off: bool = False) -> int:
        """A number of bytes: 1048576, or with a unit: 512MiB, 2GiB, 100MB. With `zero_is_off`,
        0 too (the feature it bounds is off), with or without a unit."""
        if key in m and self.no_value(m, key, path):
            return default
        value = m.get(key, default)
        least = 0 if zero_is_off else 1
        if isinstance(value, int) and not isinstance(value, bool) and value >= least:
            return value
        match = _SIZE.fullmatch(value.strip()) if isinstance(value, str) else None
        size = int(match[1]) * _SIZE_UNITS[match[2]] if match else -1
        if size < least:
            off = " (or 0: off)" if zero_is_off else ""
            self.problem(
                join(path, key),
                m.key_lines.get(key),
                f"must be a positive size like 512MiB, 2GiB or 100MB{off}, not {value!r}",
            )
            return default
        return size

    def env_name(self, m: Mapping, key: str, path: str, use: SecretUse) -> str | None:
        """The name of an environment variable that holds a secret, given at `key`; reported
        when it is unset (or empty) and this command uses it: a secret read from it would be
        missing at its first use, not at start-up. The one place this is checked."""
        name = self.string(m, key, path)
        if name and use in self.secrets and not os.environ.get(name):
            self.problem(
                join(path, key), m.key_lines[key], f"the environment variable {name} is not set"
            )
        return name

    def file(self, m: Mapping, key: str, path: str, use: SecretUse | None = None) -> Path | None:
        """A file given at `key`, checked to be readable; a secret's file (with `use`) only when
        this command uses that secret."""
        text = self.string(m, key, path)
        if text is None:
            return None
        resolved = (self.base / os.path.expanduser(text)).resolve()
        if (use is None or use in self.secrets) and not resolved.is_file():
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

    def left_out(self, path: str, line: int | None) -> None:
        """An item that could not be built must have said why: never a silent drop."""
        if not self.problems_at(path):
            self.problem(path, line, "could not be read, and gitreg did not say why (a bug)")

    def problems_at(self, path: str) -> bool:
        """Whether any problem was reported at `path` or below it."""
        return path in self._problem_paths


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
