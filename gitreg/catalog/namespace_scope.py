"""Namespace patterns, as registry.yaml writes them (`auth.public`, a token's `read`): which
namespaces they cover, and the scope two of them cover together. A value of the catalog's, so
that the catalog (archive scopes) and the gate read the patterns by one rule."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fnmatch import translate

_WILD = "*?["


@dataclass(frozen=True)
class NamespaceScope:
    """Namespace patterns: `platform`, `team-*`, `*` (every namespace); case does not matter,
    as namespaces are looked up without it. `within`: another scope a namespace must be in too
    (what `narrowed` makes when neither side is plain names)."""

    patterns: tuple[str, ...] = ()
    within: NamespaceScope | None = None
    # Patterns without a wildcard, looked up as they are (every request of a private registry
    # asks: a set's lookup costs a tenth of the match); the others, as one expression.
    _names: frozenset[str] = field(init=False, repr=False, compare=False, default=frozenset())
    _match: re.Pattern[str] | None = field(init=False, repr=False, compare=False, default=None)

    def __post_init__(self) -> None:
        lowered = [p.lower() for p in self.patterns]
        wild = [p for p in lowered if _is_wild(p)]
        object.__setattr__(self, "_names", frozenset(p for p in lowered if p not in wild))
        if wild:
            object.__setattr__(self, "_match", re.compile("|".join(map(translate, wild))))

    def covers(self, namespace: str) -> bool:
        lowered = namespace.lower()
        if lowered in self._names:
            found = True
        else:
            found = self._match is not None and self._match.match(lowered) is not None
        return found and (self.within is None or self.within.covers(namespace))

    def narrowed(self, other: NamespaceScope) -> NamespaceScope:
        """The namespaces both this scope and `other` cover. Where one side is plain names,
        the result is plain names too (those the other side covers); two sides with patterns
        (`team-*` and `*-prod`) keep both, and a namespace must match each."""
        if not self.patterns or not other.patterns:
            return NamespaceScope()
        for plain, wide in ((self, other), (other, self)):
            if plain.within is None and not any(_is_wild(p) for p in plain.patterns):
                return NamespaceScope(tuple(p for p in plain.patterns if wide.covers(p)))
        inner = self.within.narrowed(other) if self.within is not None else other
        return NamespaceScope(self.patterns, inner) if inner.patterns else NamespaceScope()

    def __str__(self) -> str:
        shown = ", ".join(self.patterns) or "no namespace"
        return shown if self.within is None else f"{shown}, within {self.within}"


def _is_wild(pattern: str) -> bool:
    return any(c in pattern for c in _WILD)
