"""Tokens issued here to people who signed in (auth.login), as the gate meets them.

A token's principal is looked up by its SHA-256 in the state on every request (so that a
revocation holds at once, on every worker and replica), and new ones are issued here. A token
reads what it was issued for only as far as registry.yaml's claim rules, as they are now, still
give it to the claims it was issued for: this is rebuilt with the gate at each reload. The state
is asked off the event loop; a state that cannot answer makes the token one that cannot be
checked now (a 503), never one that opens anything."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

from gitreg.auth.oidc import granted
from gitreg.auth.principal import Principal
from gitreg.auth.tokens import digest, new_token
from gitreg.catalog.auth_settings import LoginSettings, OidcIssuer
from gitreg.catalog.namespace_scope import NamespaceScope
from gitreg.errors import AuthUnavailable, StateUnavailable
from gitreg.state.issued_tokens import Claims, IssuedToken, IssuedTokens, Via

P = ParamSpec("P")
R = TypeVar("R")
PREFIX = "gitreg_"  # what every token issued here starts with: no other is looked up


@dataclass(frozen=True)
class Identity:
    """Who the provider says signed in: their `sub`, the provider (its issuer URL) that says
    so, and the claims its rules read (`oidc.rule_claims`), kept with every token issued."""

    subject: str
    issuer: str
    claims: Claims


class IssuedPrincipals:
    def __init__(
        self, store: IssuedTokens, settings: LoginSettings, clock: Callable[[], float] = time.time
    ) -> None:
        """`settings`: auth.login as registry.yaml says now, whose claim rules every token is
        held to."""
        self.store = store
        self.rules = settings.grants
        self.issuer = settings.issuer
        self.clock = clock

    async def principal(self, token: str) -> Principal | None:
        """The principal of a live token issued here; None for any other token."""
        if not token.startswith(PREFIX) or len(token) > 256:
            return None
        found = await self._ask(self.store.find, digest(token).hex())
        return self.held(found) if found is not None else None

    async def named(self, name: str) -> list[tuple[bytes, Principal]]:
        """The live tokens issued to `name`: each one's digest and principal (what a browser
        session is checked against)."""
        found = await self._ask(self.store.named, name)
        return [(bytes.fromhex(t.digest), self.held(t)) for t in found]

    def held(self, token: IssuedToken) -> Principal:
        """What `token` opens now: what it was issued for, and what the claim rules still give
        to its claims (namespaces both cover; the mirror and ops only when both give them). A
        token of another issuer than auth.login's now, or recorded before claims were kept,
        matches no rule: it reads nothing."""
        read, mirror, ops = _held(
            self.rules, self.issuer, token.issuer, token.claims, token.read, token.mirror, token.ops
        )
        return Principal(token.name, read, mirror, ops)

    async def issue(
        self, principal: Principal, identity: Identity, ttl: float, via: Via
    ) -> tuple[str, IssuedToken]:
        """A new token for `principal`, who is `identity`, kept for `ttl` seconds: its value
        (given once, kept nowhere) and its record."""
        value = new_token()
        now = int(self.clock())
        record = IssuedToken(
            name=principal.name,
            digest=digest(value).hex(),
            read=principal.read.patterns,
            mirror=principal.mirror,
            ops=principal.ops,
            issued=now,
            expires=now + int(ttl),
            via=via,
            subject=identity.subject,
            issuer=identity.issuer,
            claims=identity.claims,
        )
        await self._ask(self.store.keep, record)
        return value, record

    async def spend(self, code: str, expires: int) -> bool:
        """Whether a one-time code is spent now for the first time (`IssuedTokens.spend_code`)."""
        return await self._ask(self.store.spend_code, code, expires)

    async def _ask(self, call: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await asyncio.to_thread(call, *args, **kwargs)
        except (StateUnavailable, OSError) as exc:
            what = exc.strerror if isinstance(exc, OSError) else str(exc)
            raise AuthUnavailable(
                f"the tokens issued by sign-in cannot be read or kept now ({what})"
            ) from None


# Every request with an issued token asks: the rules are matched once per record and catalog.
@functools.lru_cache(maxsize=4096)
def _held(
    rules: tuple[OidcIssuer, ...],
    issuer: str,
    issued_by: str,
    claims: Claims | None,
    read: tuple[str, ...],
    mirror: bool,
    ops: bool,
) -> tuple[NamespaceScope, bool, bool]:
    if claims is None or issued_by != issuer:
        return NamespaceScope(), False, False
    found: Mapping[str, Any] = dict(claims)
    now = granted(rules, found)
    return NamespaceScope(read).narrowed(now.read), mirror and now.mirror, ops and now.ops
