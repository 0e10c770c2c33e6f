"""An OIDC issuer over TLS on 127.0.0.1 (a discovery document, a JWKS) and the CI identity
tokens it signs, with keys made here; and the helpers that run a verifier against it."""

from __future__ import annotations

import asyncio
import base64
import functools
import hashlib
import hmac
import json
import time
import warnings
from typing import Any

import pytest
from joserfc import jwt
from joserfc.errors import SecurityWarning
from joserfc.jwk import Key, RSAKey

from gitreg.auth.oidc import OidcVerifier
from gitreg.auth.principal import Principal, Refused
from gitreg.errors import AuthUnavailable
from tests.support.origin_server import ScriptedOrigin

AUDIENCE = "https://registry.test"
DISCOVERY = "/.well-known/openid-configuration"


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


class Issuer:
    """An OIDC issuer: a discovery document, a JWKS, and tokens signed with its keys."""

    def __init__(self, origin: ScriptedOrigin, clock: Clock) -> None:
        self.origin = origin
        self.clock = clock
        self.url = origin.url.rstrip("/")
        self.minted: list[str] = []
        self.rsa = rsa_key("rsa-1")
        self.origin.json(DISCOVERY, {"issuer": self.url, "jwks_uri": f"{self.url}/jwks"})
        self.serve(self.rsa)

    def serve(self, *keys: Key) -> None:
        self.origin.json("/jwks", {"keys": [k.as_dict(private=False) for k in keys]})

    def token(
        self, key: Key | None = None, header: dict[str, Any] | None = None, **claims: Any
    ) -> str:
        key = key or self.rsa
        alg = {"RSA": "RS256", "EC": "ES256", "OKP": "EdDSA", "oct": "HS256"}[key.key_type]
        now = int(self.clock.now)
        body = {
            "iss": self.url,
            "aud": AUDIENCE,
            "iat": now,
            "nbf": now,
            "exp": now + 300,
            "sub": "project_path:platform/app:ref_type:branch:ref:main",
            "namespace_path": "platform",
            "ref_protected": "true",
        }
        body.update(claims)
        for name in [n for n, v in body.items() if v is None]:
            del body[name]
        head = {"alg": alg, "kid": key.kid, **(header or {})}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SecurityWarning)  # EdDSA, the name RFC 9864 retires
            minted = jwt.encode(head, body, key, algorithms=[head["alg"]])
        self.minted.append(minted)
        return minted

    def hmac(self, secret: bytes) -> str:
        """HS256 by hand: joserfc will not take a public key as a shared secret."""
        now = int(self.clock.now)
        body = {"iss": self.url, "aud": AUDIENCE, "exp": now + 300}
        signing_input = f"{b64({'alg': 'HS256', 'kid': 'rsa-1'})}.{b64(body)}"
        mac = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
        minted = f"{signing_input}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"
        self.minted.append(minted)
        return minted

    def unsigned(self, **claims: Any) -> str:
        """`alg: none`: what joserfc will not make, made by hand."""
        now = int(self.clock.now)
        body = {"iss": self.url, "aud": AUDIENCE, "exp": now + 300, **claims}
        minted = f"{b64({'alg': 'none', 'typ': 'JWT'})}.{b64(body)}."
        self.minted.append(minted)
        return minted


@functools.cache
def rsa_key(kid: str, whose: str = "issuer") -> RSAKey:
    """One key per kid (and owner) for the whole run: making RSA keys takes a while."""
    return RSAKey.generate_key(2048, parameters={"kid": kid})


def b64(value: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()


def identify(verifier: OidcVerifier, token: str) -> Principal | None:
    """What the verifier says, once a fetch it started in the background is over."""

    async def settled() -> Principal | None:
        try:
            return await verifier.identify(token)
        finally:
            others = asyncio.all_tasks() - {asyncio.current_task()}
            await asyncio.gather(*others)

    return asyncio.run(settled())


def refused(verifier: OidcVerifier, token: str, reason: str) -> Refused:
    with pytest.raises(Refused) as caught:
        identify(verifier, token)
    assert caught.value.reason == reason, caught.value
    assert token not in str(caught.value) and token.split(".")[1] not in str(caught.value)
    return caught.value


def unavailable(verifier: OidcVerifier, token: str) -> AuthUnavailable:
    with pytest.raises(AuthUnavailable) as caught:
        identify(verifier, token)
    assert token not in str(caught.value)
    return caught.value
