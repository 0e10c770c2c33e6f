"""An issuer's keys: fetched through discovery, kept, refetched on rotation but not hammered,
used while the issuer is down, and never believed when its answers are garbage."""

from __future__ import annotations

import asyncio

import pytest

from gitreg.auth.jwks import MIN_INTERVAL, REFRESH_AFTER
from gitreg.auth.oidc import OidcVerifier
from gitreg.auth.principal import Principal
from gitreg.catalog.auth_settings import OidcIssuer
from gitreg.process.tlscert import TlsMaterial
from tests.support.oidc_issuer import (
    AUDIENCE,
    DISCOVERY,
    Clock,
    Issuer,
    b64,
    identify,
    refused,
    rsa_key,
    unavailable,
)
from tests.support.origin_server import Answer
from tests.support.servers import free_port


def test_a_rotated_key_is_fetched_but_not_more_than_once_a_minute(
    issuer: Issuer, verifier: OidcVerifier, clock: Clock
) -> None:
    assert identify(verifier, issuer.token()) is not None
    assert issuer.origin.asked["/jwks"] == 1
    rotated = rsa_key("rsa-2")
    issuer.serve(rotated)
    for kid in ("rsa-2", "made-up-1", "made-up-2", "made-up-3"):
        refused(verifier, issuer.token(rotated, header={"kid": kid}), "unknown_key")
    assert issuer.origin.asked["/jwks"] == 1  # a flood of unknown kids asks nothing more
    clock.now += MIN_INTERVAL
    assert identify(verifier, issuer.token(rotated)) is not None
    assert issuer.origin.asked["/jwks"] == 2
    refused(verifier, issuer.token(), "unknown_key")  # the issuer no longer lists the old key


def test_keys_are_fetched_again_after_an_hour(
    issuer: Issuer, verifier: OidcVerifier, clock: Clock
) -> None:
    assert identify(verifier, issuer.token()) is not None
    clock.now += REFRESH_AFTER
    rotated = rsa_key("rsa-2")
    issuer.serve(rotated)
    # The key held answers at once; the new list is fetched meanwhile, and the old key goes.
    assert identify(verifier, issuer.token()) is not None
    assert issuer.origin.asked["/jwks"] == 2
    clock.now += MIN_INTERVAL
    refused(verifier, issuer.token(), "unknown_key")
    assert identify(verifier, issuer.token(rotated)) is not None


def test_cached_keys_verify_while_the_issuer_is_down(
    issuer: Issuer, verifier: OidcVerifier, clock: Clock
) -> None:
    assert identify(verifier, issuer.token()) is not None
    issuer.origin.down = True
    clock.now += REFRESH_AFTER + 1
    for _ in range(3):
        assert identify(verifier, issuer.token()) is not None
    # A key it cannot look up is not refused for good: the issuer may have rotated it.
    clock.now += MIN_INTERVAL
    error = unavailable(verifier, issuer.token(header={"kid": "rsa-2"}))
    assert "answered 503" in str(error)


def test_an_issuer_that_is_down_is_asked_once_a_minute(
    issuer: Issuer, verifier: OidcVerifier, clock: Clock
) -> None:
    issuer.origin.down = True
    error = unavailable(verifier, issuer.token())
    assert "cannot be fetched now" in str(error) and "answered 503" in str(error)
    for _ in range(5):
        unavailable(verifier, issuer.token())
    assert issuer.origin.asked[DISCOVERY] == 1
    issuer.origin.down = False
    clock.now += MIN_INTERVAL
    assert identify(verifier, issuer.token()) is not None


def test_an_issuer_that_cannot_be_reached(tls: TlsMaterial, clock: Clock) -> None:
    url = f"https://127.0.0.1:{free_port()}"
    verifier = OidcVerifier([OidcIssuer("ci", url, AUDIENCE, ca_file=tls.ca_cert)], clock)
    token = f"{b64({'alg': 'RS256', 'kid': 'k'})}.{b64({'iss': url})}.c2ln"
    assert "cannot be fetched now" in str(unavailable(verifier, token))
    verifier.close()


def test_an_issuer_whose_certificate_is_not_trusted(issuer: Issuer, clock: Clock) -> None:
    verifier = OidcVerifier(
        [OidcIssuer("ci", issuer.url, AUDIENCE)], clock, ["auth.oidc[0].ca_file"]
    )
    said = str(unavailable(verifier, issuer.token()))
    assert f"the certificate of {issuer.url} is not trusted (" in said
    assert "if the issuer uses your company's CA, set auth.oidc[0].ca_file" in said
    verifier.close()


@pytest.mark.parametrize(
    ("path", "answer", "said"),
    [
        (DISCOVERY, Answer(200, b"[]"), "did not answer a JSON object"),
        (DISCOVERY, Answer(200, b"{not json"), "did not answer a JSON object"),
        (DISCOVERY, Answer(404, b"{}"), "answered 404"),
        (DISCOVERY, Answer(200, b'{"issuer": "https://evil.example"}'), "names the issuer"),
        (DISCOVERY, Answer(200, b" " * (65 << 10)), "answered over"),
        (DISCOVERY, Answer(200, b"[" * 50000), "did not answer a JSON object"),
        ("/jwks", Answer(200, b'{"keys": []}'), "lists no keys"),
        ("/jwks", Answer(200, b'{"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}'), "no public"),
        ("/jwks", Answer(200, b'{"keys": [{"kty": "RSA", "n": "AQAB"}]}'), "cannot be read"),
        ("/jwks", Answer(200, b'{"keys": [{"kty": "RSA", "use": "enc"}]}'), "no public"),
    ],
)
def test_an_issuer_that_answers_garbage(
    issuer: Issuer, verifier: OidcVerifier, path: str, answer: Answer, said: str
) -> None:
    issuer.origin.answers[path] = answer
    assert said in str(unavailable(verifier, issuer.token()))


@pytest.mark.parametrize("jwks_uri", ["http://127.0.0.1/jwks", "/jwks", 3])
def test_the_jwks_must_be_fetched_over_https(
    issuer: Issuer, verifier: OidcVerifier, jwks_uri: object
) -> None:
    issuer.origin.json(DISCOVERY, {"issuer": issuer.url, "jwks_uri": jwks_uri})
    assert "no https:// jwks_uri" in str(unavailable(verifier, issuer.token()))


def test_requests_at_once_share_one_fetch(issuer: Issuer, verifier: OidcVerifier) -> None:
    tokens = [issuer.token(project_id=str(n)) for n in range(20)]

    async def all_at_once() -> list[Principal | None]:
        return await asyncio.gather(*(verifier.identify(t) for t in tokens))

    found = asyncio.run(all_at_once())
    assert [p.read.patterns[-1] for p in found if p] == [f"ci-{n}" for n in range(20)]
    assert issuer.origin.asked[DISCOVERY] == 1 and issuer.origin.asked["/jwks"] == 1
