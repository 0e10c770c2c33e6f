"""An OIDC issuer's signing keys, fetched over HTTPS and kept for an hour.

They are found through the issuer's discovery document, and fetched again sooner (at most once a
minute) when a token names a key not seen yet, so that a rotated key is picked up and a flood of
made-up key ids cannot hammer the issuer. See docs/private.md."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import ssl
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
from joserfc.errors import JoseError
from joserfc.jwk import Key, KeySet

from gitreg.auth.certificate_trust import untrusted_certificate, untrusted_text
from gitreg.errors import AuthUnavailable

log = logging.getLogger(__name__)

REFRESH_AFTER = 3600.0  # seconds the keys are kept before they are fetched again
MIN_INTERVAL = 60.0  # seconds between two fetches (a key id not seen yet, or a failure)
CA_KEY = "the ca_file of its auth.oidc entry (auth.login.ca_file for auth.login's provider)"
_TIMEOUT = httpx.Timeout(5.0)
_MAX_DISCOVERY_BYTES = 64 << 10
_MAX_JWKS_BYTES = 256 << 10
_MAX_KEYS = 64
_KEY_TYPES = {"RSA", "EC", "OKP"}


class _Garbage(Exception):
    """The issuer answered, but not with what OIDC discovery promises."""


class IssuerKeys:
    """The verification keys of one issuer (`https://gitlab.com`), as it publishes them now."""

    def __init__(
        self,
        issuer: str,
        ca_file: Path | None = None,
        clock: Callable[[], float] = time.time,
        ca_key: str = CA_KEY,
    ) -> None:
        """`ca_key`: the key that names this issuer's CA bundle, said when its certificate is
        not trusted."""
        self.issuer = issuer
        self.ca_key = ca_key
        self.clock = clock
        self._verify: ssl.SSLContext | bool = True
        if ca_file is not None:
            self._verify = ssl.create_default_context(cafile=str(ca_file))
        self._keys: KeySet | None = None
        self._fetched = float("-inf")  # when the keys held were fetched
        self._tried = float("-inf")  # when a fetch last started
        self._error: str | None = None  # why the last fetch failed; None once one succeeds
        self._pending: asyncio.Task[None] | None = None

    async def key(self, kid: str | None) -> Key | None:
        """The signing key `kid` names (without a kid: the issuer's only key); None when the
        issuer, asked afresh or less than a minute ago, does not list it. AuthUnavailable when
        the issuer cannot be asked and the keys held cannot decide."""
        found = self._find(kid)
        now = self.clock()
        due = now - self._tried >= MIN_INTERVAL
        if found is not None:
            if now - self._fetched >= REFRESH_AFTER and due and self._running() is None:
                self._start(now)  # in the background: the key held answers meanwhile
            return found
        if (running := self._running()) is not None:
            await asyncio.shield(running)
        elif due:
            await asyncio.shield(self._start(now))
        found = self._find(kid)
        if found is None and (self._keys is None or self._error is not None):
            raise AuthUnavailable(
                f"the signing keys of OIDC issuer {self.issuer} cannot be fetched now"
                f" ({self._error or 'not fetched yet'}); try again in a minute"
            )
        return found

    def close(self) -> None:
        """Stop a fetch under way (from any thread; once its event loop is gone, nothing is)."""
        task, self._pending = self._pending, None
        if task is not None and not task.done():
            # A closed event loop (RuntimeError) took the task with it.
            with contextlib.suppress(RuntimeError):
                task.get_loop().call_soon_threadsafe(task.cancel)

    def _find(self, kid: str | None) -> Key | None:
        if self._keys is None:
            return None
        if kid is None:
            return self._keys.keys[0] if len(self._keys.keys) == 1 else None
        return next((k for k in self._keys if k.kid == kid), None)

    def _running(self) -> asyncio.Task[None] | None:
        """The fetch under way on this event loop (one on another loop is not waited for)."""
        task = self._pending
        if task is None or task.done() or task.get_loop() is not asyncio.get_running_loop():
            return None
        return task

    def _start(self, now: float) -> asyncio.Task[None]:
        self._tried = now
        self._pending = asyncio.get_running_loop().create_task(self._refresh())
        return self._pending

    async def _refresh(self) -> None:
        try:
            keys = await self._fetch()
        except (httpx.HTTPError, _Garbage) as exc:
            reason = untrusted_certificate(exc)
            if reason is not None:
                url = _url_of(exc) or self.issuer
                self._error = untrusted_text(url, reason, self.ca_key, "the issuer")
            else:
                self._error = str(exc) or type(exc).__name__
            log.warning(
                "OIDC issuer %s: its signing keys were not fetched: %s", self.issuer, self._error
            )
            return
        kids = ", ".join(str(k.kid) for k in keys)
        if self._keys is None or {k.kid for k in keys} != {k.kid for k in self._keys}:
            log.info("OIDC issuer %s: signing keys %s", self.issuer, kids)
        self._keys, self._fetched, self._error = keys, self.clock(), None

    async def _fetch(self) -> KeySet:
        discovery = self.issuer.rstrip("/") + "/.well-known/openid-configuration"
        async with httpx.AsyncClient(verify=self._verify, timeout=_TIMEOUT) as client:
            config = await _json(client, discovery, _MAX_DISCOVERY_BYTES)
            if config.get("issuer") != self.issuer:
                raise _Garbage(
                    f"{discovery} names the issuer {_shown(config.get('issuer'))}, not"
                    f" {self.issuer!r}"
                )
            jwks_uri = config.get("jwks_uri")
            if not isinstance(jwks_uri, str) or not _is_https(jwks_uri):
                raise _Garbage(f"{discovery} gives no https:// jwks_uri")
            jwks = await _json(client, jwks_uri, _MAX_JWKS_BYTES)
        listed = jwks.get("keys")
        if not isinstance(listed, list) or not listed or len(listed) > _MAX_KEYS:
            raise _Garbage(f"{jwks_uri} lists no keys (or over {_MAX_KEYS})")
        # Public keys that sign: never a symmetric key (whoever holds it could sign), nor one
        # meant for encryption.
        signing = [
            k
            for k in listed
            if isinstance(k, dict) and k.get("kty") in _KEY_TYPES and k.get("use", "sig") == "sig"
        ]
        if not signing:
            raise _Garbage(f"{jwks_uri} lists no public signing key")
        try:
            return KeySet.import_key_set({"keys": signing})
        except (JoseError, ValueError, TypeError, KeyError) as exc:
            raise _Garbage(f"{jwks_uri} holds a key that cannot be read ({exc})") from exc


async def _json(client: httpx.AsyncClient, url: str, limit: int) -> dict[str, Any]:
    async with client.stream("GET", url, headers={"Accept": "application/json"}) as response:
        if response.status_code != 200:
            raise _Garbage(f"{url} answered {response.status_code}")
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > limit:
                raise _Garbage(f"{url} answered over {limit} bytes")
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):  # RecursionError: [[[[...
        value = None
    if not isinstance(value, dict):
        raise _Garbage(f"{url} did not answer a JSON object")
    return value


def _is_https(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme == "https" and bool(parts.hostname)


def _shown(value: object) -> str:
    """What an issuer sent, shortened for a message."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _url_of(exc: Exception) -> str | None:
    """The URL a failed request asked (the issuer's, or its jwks_uri on another host)."""
    try:
        return str(exc.request.url) if isinstance(exc, httpx.RequestError) else None
    except RuntimeError:  # an error raised without its request
        return None
