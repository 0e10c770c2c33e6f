"""Namespace patterns, as registry.yaml writes them (`auth.public`, a token's `read`): which
namespaces they cover. A value of the catalog's, so that the catalog (archive scopes) and the
gate read the patterns by one rule."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fnmatch import translate


@dataclass(frozen=True)
class NamespaceScope:
    """Namespace patterns: `platform`, `team-*`, `*` (every namespace); case does not matter,
    as namespaces are looked up without it."""

    patterns: tuple[str, ...] = ()
    # Patterns without a wildcard, looked up as they are (every request of a private registry
    # asks: a set's lookup costs a tenth of the match); the others, as one expression.
    _names: frozenset[str] = field(init=False, repr=False, compare=False, default=frozenset())
    _match: re.Pattern[str] | None = field(init=False, repr=False, compare=False, default=None)

    def __post_init__(self) -> None:
        lowered = [p.lower() for p in self.patterns]
        wild = [p for p in lowered if any(c in p for c in "*?[")]
        object.__setattr__(self, "_names", frozenset(p for p in lowered if p not in wild))
        if wild:
            object.__setattr__(self, "_match", re.compile("|".join(map(translate, wild))))

    def covers(self, namespace: str) -> bool:
        lowered = namespace.lower()
        if lowered in self._names:
            return True
        return self._match is not None and self._match.match(lowered) is not None

    def __str__(self) -> str:
        return ", ".join(self.patterns) or "no namespace"
