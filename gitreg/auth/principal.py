"""Who a request comes from, and what that opens: namespace patterns, the network mirror, ops."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fnmatch import translate
from typing import Literal, Protocol

from gitreg.errors import Unauthorized

Access = Literal["read", "mirror", "ops"]


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


@dataclass(frozen=True)
class Principal:
    """A client we know. `name` is what logs and metrics show: never the token itself.
    `git`: the client's token may also open a module whose own repository accepts it."""

    name: str
    read: NamespaceScope = NamespaceScope()
    mirror: bool = False
    ops: bool = False
    git: bool = False

    def may(self, access: Access, namespace: str | None = None) -> bool:
        if access == "mirror":
            return self.mirror
        if access == "ops":
            return self.ops
        return namespace is not None and self.read.covers(namespace)


ANONYMOUS = Principal("anonymous")


class Refused(Unauthorized):
    """Unauthorized, with who (as far as known) and why, for the counts."""

    def __init__(self, name: str, reason: str, message: str) -> None:
        super().__init__(message)
        self.name, self.reason = name, reason


class Verifier(Protocol):
    """One way of telling who a Bearer token belongs to (CI identity tokens, ...)."""

    async def identify(self, token: str) -> Principal | None:
        """The token's principal; None when the token is not of this kind. Raises Unauthorized
        (a Refused, saying whose and why) when it is of this kind but fails a check,
        AuthUnavailable when it cannot be checked now."""
        ...

    def close(self) -> None: ...
