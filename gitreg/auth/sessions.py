"""Browser sessions: a signed cookie that names a client token the person pasted once.

The cookie names that token, an expiry and a random session id, signed with a key derived from
the URL-signing keys. It holds neither the token nor its digest: a stolen cookie is a session that
ends, never a token to use elsewhere, and a token changed or removed in registry.yaml ends the
sessions made with it (the signature covers the token's current digest, which only the registry
knows). Signing out records the session's id as ended until the cookie would have expired
(`EndedSessions`: in cache_dir, and in PostgreSQL under state:), so a copy of the cookie taken
before opens nothing after, on any worker or replica. See docs/private.md."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gitreg.auth.principal import Principal
from gitreg.state.ended_sessions import SESSION_ID

COOKIE = "gitreg_session"
SESSION_TTL = 8 * 3600  # seconds: a working day, then the token is pasted again
# s1 cookies (before session ids) are refused: their holders sign in again.
_VERSION = "s2"
_LABEL = b"gitreg browser session key"  # a session key is no URL key: neither verifies the other


@dataclass(frozen=True)
class Session:
    """A cookie that verifies: whom it signs in, its id, and when it expires (epoch seconds)."""

    principal: Principal
    id: str
    expires: int


class EndedHere:
    """Sign-outs kept in this process alone (a Gate built without a shared record)."""

    def __init__(self) -> None:
        self._ended: dict[str, int] = {}

    def end_session(self, session: str, expires: int) -> None:
        now = time.time()
        self._ended = {s: e for s, e in self._ended.items() if e >= now}
        self._ended[session] = expires

    def session_ended(self, session: str, expires: int) -> bool:
        return session in self._ended


class SessionSigner:
    def __init__(self, keys: Sequence[bytes], ttl: float = SESSION_TTL) -> None:
        if not keys:
            raise ValueError("signing sessions needs a key")
        self._keys = [hmac.new(k, _LABEL, hashlib.sha256).digest() for k in keys]
        self.ttl = ttl

    def issue(self, name: str, token_digest: bytes, now: float | None = None) -> str:
        """The cookie value for the token called `name`, whose SHA-256 is `token_digest`: a
        new session, with an id of its own."""
        expires = int((time.time() if now is None else now) + self.ttl)
        encoded = base64.urlsafe_b64encode(name.encode()).rstrip(b"=").decode()
        session = secrets.token_urlsafe(16)
        mac = self._mac(self._keys[0], name, expires, session, token_digest)
        return f"{_VERSION}.{encoded}.{expires}.{session}.{mac}"

    def session(
        self,
        value: str,
        tokens: Iterable[tuple[bytes, Principal]],
        now: float | None = None,
    ) -> Session | None:
        """The session a cookie value holds, among `tokens` (each token's digest and
        principal, as registry.yaml holds them now); None when it is malformed, expired, or
        its token is gone or changed. Whether it was signed out is the caller's to ask."""
        name, expires, session, given = _parse(value)
        if name is None or expires < (time.time() if now is None else now):
            return None
        for token_digest, principal in tokens:
            if principal.name != name:
                continue
            for key in self._keys:
                mac = self._mac(key, name, expires, session, token_digest)
                if hmac.compare_digest(mac, given):
                    return Session(principal, session, expires)
        return None

    @staticmethod
    def _mac(key: bytes, name: str, expires: int, session: str, token_digest: bytes) -> str:
        message = b"\n".join((name.encode(), str(expires).encode(), session.encode(), token_digest))
        mac = hmac.new(key, message, hashlib.sha256).digest()
        return base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


def name_of(value: str) -> str | None:
    """Whom a cookie value says it signs in (unverified: to find what to check it against)."""
    name, _, _, _ = _parse(value)
    return name


def expires_of(value: str) -> int | None:
    """When a cookie value says it expires (unverified: for showing its holder)."""
    name, expires, _, _ = _parse(value)
    return expires if name is not None else None


def _parse(value: str) -> tuple[str | None, int, str, str]:
    parts = value.split(".")
    if len(parts) != 5 or parts[0] != _VERSION or len(value) > 1024:
        return None, 0, "", ""
    _, encoded, expires, session, mac = parts
    if not (expires.isascii() and expires.isdigit()) or len(expires) > 12 or not mac.isascii():
        return None, 0, "", ""
    if not SESSION_ID.fullmatch(session):
        return None, 0, "", ""
    try:
        name = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None, 0, "", ""
    return name, int(expires), session, mac
