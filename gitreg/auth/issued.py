"""Tokens issued here to people who signed in (auth.login), as the gate meets them: a token's
principal, looked up by its SHA-256 in the state on every request (so that a revocation holds at
once, on every worker and replica), and new ones issued. The state is asked off the event loop;
a state that cannot answer makes the token one that cannot be checked now (a 503), never one
that opens anything."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from gitreg.auth.principal import Principal
from gitreg.auth.tokens import digest, new_token
from gitreg.catalog.namespace_scope import NamespaceScope
from gitreg.errors import AuthUnavailable, StateUnavailable
from gitreg.state.issued_tokens import IssuedToken, IssuedTokens, Via

P = ParamSpec("P")
R = TypeVar("R")
PREFIX = "gitreg_"  # what every token issued here starts with: no other is looked up


class IssuedPrincipals:
    def __init__(self, store: IssuedTokens, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.clock = clock

    async def principal(self, token: str) -> Principal | None:
        """The principal of a live token issued here; None for any other token."""
        if not token.startswith(PREFIX) or len(token) > 256:
            return None
        found = await self._ask(self.store.find, digest(token).hex())
        return _principal(found) if found is not None else None

    async def named(self, name: str) -> list[tuple[bytes, Principal]]:
        """The live tokens issued to `name`: each one's digest and principal (what a browser
        session is checked against)."""
        found = await self._ask(self.store.named, name)
        return [(bytes.fromhex(t.digest), _principal(t)) for t in found]

    async def issue(self, principal: Principal, ttl: float, via: Via) -> tuple[str, IssuedToken]:
        """A new token for `principal`, kept for `ttl` seconds: its value (given once, kept
        nowhere) and its record."""
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


def _principal(token: IssuedToken) -> Principal:
    return Principal(token.name, NamespaceScope(token.read), token.mirror, token.ops)
