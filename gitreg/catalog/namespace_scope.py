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
    _match: re.Pattern[str] | None = field(init=False, repr=False, compare=False, default=None)

    def __post_init__(self) -> None:
        if self.patterns:
            joined = "|".join(translate(p.lower()) for p in self.patterns)
            object.__setattr__(self, "_match", re.compile(joined))

    def covers(self, namespace: str) -> bool:
        return self._match is not None and self._match.match(namespace.lower()) is not None

    def __str__(self) -> str:
        return ", ".join(self.patterns) or "no namespace"
