"""The OpenID provider people sign in at (auth.login), with gitreg as its client.

It covers its discovery document (read with authlib's metadata checks, kept an hour), the address
a person is sent to (the code flow with PKCE S256 and a nonce), and the code it returns exchanged
for an ID token, with the client secret when there is one. Each fault is said in gitreg's words:
the provider refusing is a LoginRefused, the provider down or answering nonsense an
AuthUnavailable. Neither ever holds the client secret, a code or a token. See docs/private.md."""

from __future__ import annotations

import asyncio
import json
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx
from authlib.oidc.discovery import OpenIDProviderMetadata

from gitreg.auth.certificate_trust import untrusted_certificate, untrusted_text
from gitreg.catalog.auth_settings import LoginSettings
from gitreg.errors import AuthUnavailable, LoginRefused

KEEP = 3600.0  # seconds a discovery document is kept
RETRY = 10.0  # seconds before a failed discovery is tried again
_TIMEOUT = httpx.Timeout(10.0)
_MAX_BYTES = 256 << 10
_ERROR_CODE = frozenset("abcdefghijklmnopqrstuvwxyz_")


@dataclass(frozen=True)
class Endpoints:
    authorization: str
    token: str


class OpenIdProvider:
    def __init__(self, settings: LoginSettings, clock: Callable[[], float] = time.monotonic):
        self.settings = settings
        self.clock = clock
        self._verify: ssl.SSLContext | bool = True
        if settings.ca_file is not None:
            self._verify = ssl.create_default_context(cafile=str(settings.ca_file))
        self._found: tuple[float, Endpoints] | None = None
        self._failed: tuple[float, str] | None = None
        self._lock = asyncio.Lock()

    @property
    def discovery_url(self) -> str:
        return self.settings.issuer.rstrip("/") + "/.well-known/openid-configuration"

    async def endpoints(self) -> Endpoints:
        """The provider's authorization and token endpoints; AuthUnavailable when its discovery
        document cannot be read (asked again after RETRY seconds, not at every sign-in)."""
        async with self._lock:
            now = self.clock()
            if self._found is not None and now - self._found[0] < KEEP:
                return self._found[1]
            if self._failed is not None and now - self._failed[0] < RETRY:
                raise AuthUnavailable(self._failed[1])
            try:
                found = await self._discover()
            except AuthUnavailable as exc:
                self._failed = (now, str(exc))
                raise
            self._found, self._failed = (now, found), None
            return found

    def authorization_url(
        self, endpoints: Endpoints, redirect_uri: str, state: str, nonce: str, challenge: str
    ) -> str:
        query = {
            "response_type": "code",
            "client_id": self.settings.client_id,
            "redirect_uri": redirect_uri,
            "scope": " ".join(self.settings.scopes),
            "state": state,
            "nonce": nonce,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        }
        joiner = "&" if urlsplit(endpoints.authorization).query else "?"
        return endpoints.authorization + joiner + urlencode(query)

    async def id_token(self, code: str, verifier: str, redirect_uri: str) -> str:
        """The ID token the provider gives for `code`."""
        endpoints = await self.endpoints()
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": verifier,
        }
        secret = self.settings.client_secret.value() if self.settings.client_secret else None
        auth: httpx.Auth = httpx.Auth()  # none: a public client names itself in the form
        if secret is None:
            form["client_id"] = self.settings.client_id
        else:
            auth = httpx.BasicAuth(self.settings.client_id, secret)  # client_secret_basic
        try:
            async with httpx.AsyncClient(verify=self._verify, timeout=_TIMEOUT) as client:
                response = await client.post(
                    endpoints.token, data=form, auth=auth, headers={"Accept": "application/json"}
                )
        except httpx.HTTPError as exc:
            self._untrusted(endpoints.token, exc)
            raise AuthUnavailable(
                f"the OpenID provider {self.settings.name} cannot be reached"
                f" ({type(exc).__name__}): try again in a minute"
            ) from None
        body = _json(response.content)
        if 400 <= response.status_code < 500:
            raise LoginRefused(
                f"the OpenID provider {self.settings.name} refused the sign-in"
                f" ({_error_code(body)}): sign in again"
            )
        token = body.get("id_token") if body is not None else None
        if response.status_code != 200 or not isinstance(token, str) or not token:
            raise AuthUnavailable(
                f"the OpenID provider {self.settings.name} answered {response.status_code}"
                " without an ID token: try again in a minute"
            )
        return token

    async def _discover(self) -> Endpoints:
        url = self.discovery_url
        try:
            async with httpx.AsyncClient(verify=self._verify, timeout=_TIMEOUT) as client:
                response = await client.get(url, headers={"Accept": "application/json"})
        except httpx.HTTPError as exc:
            self._untrusted(url, exc)
            raise AuthUnavailable(
                f"the OpenID provider's discovery document {url} cannot be read"
                f" ({type(exc).__name__})"
            ) from None
        body = _json(response.content) if response.status_code == 200 else None
        if body is None:
            raise AuthUnavailable(
                f"the OpenID provider's discovery document {url} answered"
                f" {response.status_code}, not a JSON object"
            )
        metadata = OpenIDProviderMetadata(body)
        try:
            metadata.validate_issuer()
            metadata.validate_authorization_endpoint()
            metadata.validate_token_endpoint()
        except ValueError as exc:
            raise AuthUnavailable(f"{url}: {exc}") from None
        if metadata.get("issuer") != self.settings.issuer:
            raise AuthUnavailable(
                f"{url} names the issuer {str(metadata.get('issuer'))[:80]!r}, not"
                f" {self.settings.issuer!r}"
            )
        return Endpoints(metadata["authorization_endpoint"], metadata["token_endpoint"])

    def _untrusted(self, url: str, exc: httpx.HTTPError) -> None:
        """AuthUnavailable saying so when `exc` is the provider's certificate not trusted: a
        company's CA, most often, which no retry mends and auth.login.ca_file does."""
        reason = untrusted_certificate(exc)
        if reason is None:
            return
        ca_file = self.settings.ca_file
        key = "auth.login.ca_file" if ca_file is None else f"auth.login.ca_file (now {ca_file})"
        raise AuthUnavailable(untrusted_text(url, reason, key)) from None


def _json(content: bytes) -> dict[str, Any] | None:
    if len(content) > _MAX_BYTES:
        return None
    try:
        value = json.loads(content)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _error_code(body: dict[str, Any] | None) -> str:
    """The provider's error code (invalid_grant), if it is one: never its description, which
    could echo what was sent."""
    code = body.get("error") if body is not None else None
    if isinstance(code, str) and 0 < len(code) <= 64 and set(code) <= _ERROR_CODE:
        return code
    return "no error code"
