"""Who a request comes from, and what that opens: namespace patterns, the network mirror, ops."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from gitreg.catalog.namespace_scope import NamespaceScope
from gitreg.errors import Unauthorized

Access = Literal["read", "mirror", "ops"]


@dataclass(frozen=True)
class Principal:
    """A client we know. `name` is what logs and metrics show: never the token itself.
    `git`: the client's token may also open a module whose own repository accepts it.
    `preview`: it sees the versions `publish_when` holds back, in what it may read."""

    name: str
    read: NamespaceScope = NamespaceScope()
    mirror: bool = False
    ops: bool = False
    git: bool = False
    preview: bool = False

    def may(self, access: Access, namespace: str | None = None) -> bool:
        if access == "mirror":
            return self.mirror
        if access == "ops":
            return self.ops
        return namespace is not None and self.read.covers(namespace)


ANONYMOUS = Principal("anonymous")
GIT = Principal("git", git=True)  # a token no one here issued, that Git servers may accept


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
