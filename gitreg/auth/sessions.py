"""Browser sessions: a person pastes a client token once, and the cookie set in return names
that token and an expiry, signed with a key derived from the URL-signing keys. It holds neither
the token nor its digest: a stolen cookie is a session that ends, never a token to use
elsewhere, and a token changed or removed in registry.yaml ends the sessions made with it (the
signature covers the token's current digest, which only the registry knows)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from collections.abc import Iterable, Sequence

from gitreg.auth.principal import Principal

COOKIE = "gitreg_session"
SESSION_TTL = 8 * 3600  # seconds: a working day, then the token is pasted again
_VERSION = "s1"
_LABEL = b"gitreg browser session key"  # a session key is no URL key: neither verifies the other


class SessionSigner:
    def __init__(self, keys: Sequence[bytes], ttl: float = SESSION_TTL) -> None:
        if not keys:
            raise ValueError("signing sessions needs a key")
        self._keys = [hmac.new(k, _LABEL, hashlib.sha256).digest() for k in keys]
        self.ttl = ttl

    def issue(self, name: str, token_digest: bytes, now: float | None = None) -> str:
        """The cookie value for the token called `name`, whose SHA-256 is `token_digest`."""
        expires = int((time.time() if now is None else now) + self.ttl)
        encoded = base64.urlsafe_b64encode(name.encode()).rstrip(b"=").decode()
        mac = self._mac(self._keys[0], name, expires, token_digest)
        return f"{_VERSION}.{encoded}.{expires}.{mac}"

    def principal(
        self,
        value: str,
        tokens: Iterable[tuple[bytes, Principal]],
        now: float | None = None,
    ) -> Principal | None:
        """The principal a cookie value signs in, among `tokens` (each token's digest and
        principal, as registry.yaml holds them now); None when it is malformed, expired, or
        its token is gone or changed."""
        name, expires, given = _parse(value)
        if name is None or expires < (time.time() if now is None else now):
            return None
        for token_digest, principal in tokens:
            if principal.name != name:
                continue
            for key in self._keys:
                if hmac.compare_digest(self._mac(key, name, expires, token_digest), given):
                    return principal
        return None

    @staticmethod
    def _mac(key: bytes, name: str, expires: int, token_digest: bytes) -> str:
        message = b"\n".join((name.encode(), str(expires).encode(), token_digest))
        mac = hmac.new(key, message, hashlib.sha256).digest()
        return base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


def _parse(value: str) -> tuple[str | None, int, str]:
    parts = value.split(".")
    if len(parts) != 4 or parts[0] != _VERSION or len(value) > 1024:
        return None, 0, ""
    _, encoded, expires, mac = parts
    if not (expires.isascii() and expires.isdigit()) or len(expires) > 12 or not mac.isascii():
        return None, 0, ""
    try:
        name = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None, 0, ""
    return name, int(expires), mac
