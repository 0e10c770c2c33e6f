"""The browser side of the gate: sessions checked on every request and ended everywhere.

A session is opened by a pasted client token or by signing in with the OpenID provider
(auth.login), checked against the tokens it was made for on every request, and ended everywhere
at sign-out. A part of `Gate` (`gate.py`), kept apart to keep each short."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter

from gitreg.auth.issued import Identity, IssuedPrincipals
from gitreg.auth.principal import Principal, Refused
from gitreg.auth.sessions import SESSION_TTL, Session, SessionSigner, name_of
from gitreg.auth.tokens import StaticTokens, digest
from gitreg.auth.wrong_tokens import WrongTokens
from gitreg.errors import AuthUnavailable, TooManyRequests
from gitreg.state.ended_sessions import EndedSessions

log = logging.getLogger("gitreg.auth.gate")


class BrowserSessions:
    tokens: StaticTokens
    sessions: SessionSigner
    ended: EndedSessions
    counts: Counter[tuple[str, str]]
    wrong_tokens: WrongTokens
    issued: IssuedPrincipals | None

    def _throttle(self, client: str) -> None:
        try:
            self.wrong_tokens.admit(client)
        except TooManyRequests:
            self.counts[("unknown", "throttled")] += 1
            raise

    async def sign_in(self, token: str, client: str = "") -> tuple[Principal, str] | None:
        """A client token pasted in a browser: its principal and the session cookie's value;
        None for a token that is not one of registry.yaml's (a CI identity token expires within
        minutes, and a token only a Git server knows would have to be kept: neither opens a
        session), after the delay `client`'s wrong tokens are due."""
        self._throttle(client)
        found = self.tokens.principal(token)
        if found is None:
            self.counts[("unknown", "bad_sign_in")] += 1
            await self.wrong_tokens.wrong(client)
            return None
        self.counts[(found.name, "signed_in")] += 1
        return found, self.sessions.issue(found.name, digest(token))

    async def session(self, value: str) -> Session | None:
        """The session a cookie value holds; None when it no longer signs anyone in (expired,
        its token changed or removed, or signed out on any worker or replica)."""
        found = self.sessions.session(value, await self._session_tokens(value))
        if found is None:
            return None
        # Off the event loop: under state: postgres, the database may be asked.
        if await asyncio.to_thread(self.ended.session_ended, found.id, found.expires):
            return None
        return found

    async def _session_tokens(self, value: str) -> list[tuple[bytes, Principal]]:
        """What a session cookie may have been made for: registry.yaml's tokens, and the
        tokens sign-in issued to the person it names."""
        entries = self.tokens.entries()
        name = name_of(value)
        if self.issued is not None and name and all(p.name != name for _, p in entries):
            entries += await self.issued.named(name)
        return entries

    async def login_session(self, principal: Principal, identity: Identity) -> str:
        """A browser session for a person who signed in with the OpenID provider: a token
        issued for the session's length, which the cookie names (revoking it ends it), held
        to the claim rules as every issued token is."""
        assert self.issued is not None
        value, _ = await self.issued.issue(principal, identity, SESSION_TTL, "browser")
        self.counts[(principal.name, "signed_in")] += 1
        return self.sessions.issue(principal.name, digest(value))

    async def session_principal(self, value: str) -> Principal | None:
        """Whom a session cookie signs in; None when it no longer does."""
        found = await self.session(value)
        return found.principal if found is not None else None

    async def sign_out(self, value: str) -> None:
        """End the session a cookie value holds, everywhere, until it would have expired. A
        value that does not verify ends nothing (and is recorded nowhere)."""
        found = self.sessions.session(value, await self._session_tokens(value))
        if found is None:
            return
        try:
            await asyncio.to_thread(self.ended.end_session, found.id, found.expires)
        except OSError as exc:
            # Said, not hidden: a session the person believes ended would live on.
            log.error("a sign-out could not be recorded in cache_dir: %s", exc.strerror)
            raise AuthUnavailable(
                "the sign-out could not be recorded, so the session has not ended: try again"
            ) from None
        self.counts[(found.principal.name, "signed_out")] += 1

    async def _session(self, value: str) -> Principal:
        found = await self.session_principal(value)
        if found is None:
            raise Refused("anonymous", "session_expired", "the session has ended: sign in again")
        return found
