"""Download URLs that carry their own permission, signed with HMAC-SHA256.

Terraform fetches archives, provider zips, SHA256SUMS and its signature without a token, so the
answer that points at them (given to a client whose token opens them) signs the path, an expiry,
the token's name and what that name stands for now (`binding`: the token's digest, an issuer's
URL). A URL whose token was since removed or changed stops opening at the next reload. Keys
rotate by listing the previous one after the new: all verify, the first signs. See
docs/private.md."""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import logging
import os
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from urllib.parse import quote_plus, unquote

from gitreg.atomic import write_atomically
from gitreg.errors import Forbidden

log = logging.getLogger(__name__)

QUERY_KEYS = ("expires", "by", "signature")
EXPIRY_STEP = 10  # seconds: expiries are rounded up to a multiple of this


class UrlSigner:
    def __init__(self, keys: Sequence[bytes], ttl: float) -> None:
        if not keys:
            raise ValueError("signing download URLs needs a key")
        self._keys = [hmac.new(k, digestmod=hashlib.sha256) for k in keys]
        self.ttl = ttl
        # A busy CI fleet asks for the same few downloads with the same token again and again,
        # and a kept answer the same set of URLs (a mirror's archives).
        self._signed_query = functools.lru_cache(maxsize=4096)(self._query)
        self._signed_urls = functools.lru_cache(maxsize=1024)(self._urls)

    def query(self, path: str, principal: str, now: float | None = None, binding: str = "") -> str:
        """The query string that lets `path` be fetched until the TTL runs out (rounded up to
        the next EXPIRY_STEP seconds, so that the same download asked again by the same token
        within those seconds gets the same URL, signed once). `binding`: what the principal's
        name stands for now, which `check` must find unchanged."""
        return self._signed_query(path, principal, self._expiry(now), binding)

    def urls(
        self, urls: tuple[tuple[str, str], ...], principal: str, binding: str = ""
    ) -> tuple[str, ...]:
        """Each of `urls` (a path, then a suffix such as a `//folder`, which may end in a query
        the signed one is appended to) with its `query`: the
        same set for the same principal within one EXPIRY_STEP, made once."""
        return self._signed_urls(urls, principal, self._expiry(None), binding)

    def _expiry(self, now: float | None) -> int:
        """When a URL signed now expires: the TTL from now, rounded up to EXPIRY_STEP seconds."""
        moment = time.time() if now is None else now
        return -(-int(moment + self.ttl) // EXPIRY_STEP) * EXPIRY_STEP

    def _urls(
        self, urls: tuple[tuple[str, str], ...], principal: str, expires: int, binding: str
    ) -> tuple[str, ...]:
        # A suffix may hold a query of its own (`//folder?checksum=…`): the signed one follows it.
        return tuple(
            f"{path}{suffix}{'&' if '?' in suffix else '?'}"
            f"{self._signed_query(path, principal, expires, binding)}"
            for path, suffix in urls
        )

    def _query(self, path: str, principal: str, expires: int, binding: str) -> str:
        mac = self._mac(self._keys[0], unquote(path), expires, principal, binding)
        # What urlencode() gives, at less of its cost (bench/RESULTS.md: bench.auth): the
        # expiry is digits and the signature URL-safe base64, so only the name may need quoting.
        return f"expires={expires}&by={quote_plus(principal)}&signature={mac}"

    def check(
        self,
        path: str,
        query: Mapping[str, str],
        now: float | None = None,
        binding_of: Callable[[str], str | None] = lambda name: "",
    ) -> str:
        """The name of the principal the URL was signed for; Forbidden, saying why, when its
        signature is missing, expired, or does not verify (tampered, another path, a key no
        longer listed, its token changed), or when `binding_of` its name is None (no such
        token or issuer is configured now)."""
        if not all(k in query for k in QUERY_KEYS):
            raise Forbidden(
                "this download needs a signed URL: ask the registry for the download again"
                " (its answer holds one), or send a token that opens it"
            )
        by, text = query["by"], query["expires"]
        if not (text.isascii() and text.isdigit()) or len(text) > 12:  # int() refuses "²"
            raise Forbidden("the download URL's expiry is not a time")
        expires = int(text)
        binding = binding_of(by)
        if binding is None:
            raise Forbidden(
                f"the token that signed this download URL ({by[:64]!r}) is no longer configured"
                " in registry.yaml: ask for the download again with a current token"
            )
        # As bytes: compare_digest refuses str with characters outside ASCII (a TypeError, a 500).
        given = query["signature"].encode(errors="replace")
        if not any(
            hmac.compare_digest(self._mac(key, path, expires, by, binding).encode(), given)
            for key in self._keys
        ):
            raise Forbidden(
                "the download URL's signature does not verify (altered, signed by a key no"
                " longer listed, or for a token changed since): ask for it again"
            )
        if expires < (time.time() if now is None else now):
            raise Forbidden("the download URL has expired: ask the registry for it again")
        return by

    @staticmethod
    def _mac(key: hmac.HMAC, path: str, expires: int, principal: str, binding: str) -> str:
        mac = key.copy()
        mac.update(f"{path}\n{expires}\n{principal}\n{binding}".encode())
        return base64.urlsafe_b64encode(mac.digest()).rstrip(b"=").decode()


def generated_key(cache_dir: Path) -> bytes:
    """The registry's own URL key, made once and kept (mode 0600) in its cache: used when
    registry.yaml names none, so signed URLs survive a restart. The first process to make it
    wins (workers start at once, and must all sign with one key): a new key is linked into
    place only where none is, and every process then reads the one there."""
    path = cache_dir / "auth" / "url-signing.key"
    try:
        return path.read_bytes().strip()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    made = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    write_atomically(made, secrets.token_hex(32).encode(), mode=0o600)
    try:
        os.link(made, path)  # fails where another process linked its key first
        log.info("made a key for signed download URLs: %s", path)
    except FileExistsError:
        pass
    finally:
        made.unlink(missing_ok=True)
    return path.read_bytes().strip()
