"""What a request asks the gate for: a namespace to read (and, with auth.git, which repository's
Git server may say yes), the network mirror, or the ops pages."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gitreg.auth.principal import Access, Principal
from gitreg.catalog.namespace_scope import NamespaceScope


@dataclass(frozen=True, slots=True)
class GitQuestion:
    """Which repository's Git server is asked for a request: the module's own, or a stand-in
    for one that does not exist, asked so that it costs the same. `opens`: False for a stand-in
    from another namespace, whose yes opens nothing here."""

    url: str
    opens: bool = True


@dataclass(frozen=True, slots=True)
class Target:
    """What a request wants: `read` a namespace (`what` names the module or provider, and
    `git` is the repository asked, when the Git server may decide), the `mirror`, or `ops`."""

    access: Access
    what: str
    namespace: str | None = None
    git: Callable[[], GitQuestion | None] | None = None


def refusal(principal: Principal, target: Target) -> str:
    """Why `principal` may not have `target`, said the same whether it exists or not: a token
    outside a namespace learns nothing of what is in it."""
    if target.access == "mirror":
        return f"token {principal.name!r} may not use the network mirror (it needs mirror: true)"
    if target.access == "ops":
        return f"token {principal.name!r} may not read {target.what} (it needs ops: true)"
    if principal.git and principal.read == NamespaceScope():
        return f"{target.what}: its Git server did not accept this token"
    return f"token {principal.name!r} may not read {target.what} (it reads {principal.read})"
