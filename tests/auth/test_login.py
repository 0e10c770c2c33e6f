"""auth.login's checks that the HTTP tests cannot reach with an honest provider: an ID token with
a bad signature, issuer, audience, nonce or expiry (minted by the tests' own issuer), a code
that expired, a provider that is down; each refused saying which check failed, no token issued."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from gitreg.auth.issued import Identity, IssuedPrincipals
from gitreg.auth.login import CliRequest, Login, SignedIn, verified_email
from gitreg.auth.principal import Principal
from gitreg.catalog.auth_settings import LoginSettings, OidcIssuer
from gitreg.catalog.namespace_scope import NamespaceScope
from gitreg.errors import AuthUnavailable, LoginRefused
from gitreg.process.tlscert import TlsMaterial
from gitreg.state.issued_tokens import IssuedTokenFiles
from tests.support.oidc_issuer import AUDIENCE, Clock, Issuer, rsa_key
from tests.support.servers import free_port

NONCE = "the-nonce-of-this-sign-in"
CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"  # RFC 7636's example
VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"


def login_of(issuer: str, tls: TlsMaterial, clock: Clock, cache: Path) -> Login:
    settings = LoginSettings(
        name="test",
        issuer=issuer,
        client_id=AUDIENCE,
        grants=(OidcIssuer("test", issuer, AUDIENCE, (("groups", "platform"),), ("platform",)),),
        ca_file=tls.ca_cert,
    )
    issued = IssuedPrincipals(IssuedTokenFiles(cache), settings, clock)
    return Login(settings, "https://registry.test/oauth/callback", [b"k" * 32], issued, clock)


@pytest.fixture
def login(issuer: Issuer, tls: TlsMaterial, clock: Clock, tmp_path: Path) -> Login:
    return login_of(issuer.url, tls, clock, tmp_path)


def verify(login: Login, token: str, nonce: str = NONCE) -> tuple[Principal, dict[str, object]]:
    async def run() -> tuple[Principal, dict[str, object]]:
        try:
            return await login.verified(token, nonce)
        finally:
            login.close()

    return asyncio.run(run())


def test_a_good_id_token_opens_what_its_claims_match(login: Login, issuer: Issuer) -> None:
    principal, claims = verify(login, issuer.token(nonce=NONCE, groups=["dev", "platform"]))
    assert principal.read.covers("platform") and claims["nonce"] == NONCE


@pytest.mark.parametrize(
    ("claims", "says"),
    [
        ({"nonce": "another-sign-in"}, "nonce is not this sign-in's"),
        ({"nonce": None}, "nonce is not this sign-in's"),
        ({"aud": "someone-else"}, "is for the audience"),
        ({"exp": 1}, "expired"),
        ({"iss": "https://elsewhere.example"}, "is not from"),
    ],
)
def test_an_id_token_that_fails_a_check_is_refused(
    login: Login, issuer: Issuer, claims: dict[str, Any], says: str
) -> None:
    with pytest.raises(LoginRefused) as caught:
        verify(login, issuer.token(**{"nonce": NONCE, **claims}))
    assert says in str(caught.value)


def test_an_id_token_signed_by_another_key_is_refused(login: Login, issuer: Issuer) -> None:
    forged = issuer.token(key=rsa_key("rsa-1", whose="forger"), nonce=NONCE)
    with pytest.raises(LoginRefused) as caught:
        verify(login, forged)
    assert "signature does not verify" in str(caught.value)


def test_a_code_expires_after_a_minute(login: Login, clock: Clock) -> None:
    cli = CliRequest("http://localhost:10001/login", "s", CHALLENGE)
    who = Identity("alice-sub", login.settings.issuer, (("groups", ("platform",)),))
    signed = SignedIn(Principal("alice", NamespaceScope(("platform",))), cli, "/", who)
    code = login.code_redirect(signed).split("code=", 1)[1].split("&", 1)[0]
    form = {
        "grant_type": "authorization_code",
        "client_id": "terraform-cli",
        "code": code,
        "redirect_uri": cli.redirect_uri,
        "code_verifier": VERIFIER,
    }
    clock.now += 61
    with pytest.raises(LoginRefused) as caught:
        asyncio.run(login.exchange(form, "192.0.2.1"))
    assert caught.value.error == "invalid_grant" and "expired" in str(caught.value)
    clock.now -= 61
    token, lifetime = asyncio.run(login.exchange(form, "192.0.2.1"))
    assert token.startswith("gitreg_") and lifetime == 90 * 86400
    # The code carried who the provider named, and the claims the rules read, to the record.
    (record,) = login.issued.store.live_tokens()
    assert (record.subject, record.issuer, record.claims) == (
        "alice-sub",
        login.settings.issuer,
        (("groups", ("platform",)),),
    )


def test_a_provider_that_is_down_is_unavailable(
    tls: TlsMaterial, clock: Clock, tmp_path: Path
) -> None:
    login = login_of(f"https://127.0.0.1:{free_port()}", tls, clock, tmp_path)
    with pytest.raises(AuthUnavailable) as caught:
        asyncio.run(login.start("192.0.2.1", None, "/"))
    assert "cannot be read" in str(caught.value)


@pytest.mark.parametrize(
    ("claims", "verified"),
    [
        ({"email_verified": True}, True),
        ({"email_verified": "true"}, True),  # some providers send the text
        ({"email_verified": False}, False),
        ({"email_verified": "false"}, False),
        ({"email_verified": "True"}, False),
        ({"email_verified": 1}, False),
        ({}, False),
    ],
)
def test_an_email_is_verified_only_when_the_provider_says_true(
    claims: dict[str, object], verified: bool
) -> None:
    assert verified_email(claims) is verified
