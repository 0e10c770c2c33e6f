"""CI identity tokens against an OIDC issuer served over real TLS on 127.0.0.1."""

from __future__ import annotations

import asyncio
import base64
import functools
import hashlib
import hmac
import json
import time
import warnings
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from joserfc import jwt
from joserfc.errors import SecurityWarning
from joserfc.jwk import ECKey, Key, OKPKey, RSAKey

from gitreg.auth.gate import Gate, Target
from gitreg.auth.jwks import MIN_INTERVAL, REFRESH_AFTER
from gitreg.auth.oidc import MAX_TOKEN, OidcVerifier
from gitreg.auth.principal import NamespaceScope, Principal, Refused
from gitreg.catalog.model import AuthSettings, OidcIssuer
from gitreg.errors import AuthUnavailable, Forbidden
from gitreg.tlscert import TlsMaterial
from tests.support.origin_server import Answer, ScriptedOrigin
from tests.support.servers import free_port

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
        signing_input = f"{_b64({'alg': 'HS256', 'kid': 'rsa-1'})}.{_b64(body)}"
        mac = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
        minted = f"{signing_input}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"
        self.minted.append(minted)
        return minted

    def unsigned(self, **claims: Any) -> str:
        """`alg: none`: what joserfc will not make, made by hand."""
        now = int(self.clock.now)
        body = {"iss": self.url, "aud": AUDIENCE, "exp": now + 300, **claims}
        minted = f"{_b64({'alg': 'none', 'typ': 'JWT'})}.{_b64(body)}."
        self.minted.append(minted)
        return minted


@functools.cache
def rsa_key(kid: str, whose: str = "issuer") -> RSAKey:
    """One key per kid (and owner) for the whole run: making RSA keys takes a while."""
    return RSAKey.generate_key(2048, parameters={"kid": kid})


def _b64(value: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def issuer(tls: TlsMaterial, clock: Clock, caplog: pytest.LogCaptureFixture) -> Iterator[Issuer]:
    caplog.set_level("DEBUG")
    with ScriptedOrigin(tls) as origin:
        made = Issuer(origin, clock)
        yield made
    for token in made.minted:  # no token, nor its signature, is ever logged
        signature = token.split(".")[2]
        assert token not in caplog.text and (not signature or signature not in caplog.text)


def entries(issuer: Issuer, tls: TlsMaterial) -> tuple[OidcIssuer, ...]:
    return (
        OidcIssuer(
            name="deploy",
            issuer=issuer.url,
            audience=AUDIENCE,
            claims=(("namespace_path", "platform"), ("ref_protected", "true")),
            read=("shared-*",),
            mirror=True,
            ca_file=tls.ca_cert,
        ),
        OidcIssuer(
            name="ci",
            issuer=issuer.url,
            audience=AUDIENCE,
            read=("{namespace_path}", "ci-{project_id}"),
            ca_file=tls.ca_cert,
        ),
        OidcIssuer(
            name="other-audience",
            issuer=issuer.url,
            audience="other",
            read=("*",),
            ops=True,
            ca_file=tls.ca_cert,
        ),
    )


@pytest.fixture
def verifier(issuer: Issuer, tls: TlsMaterial, clock: Clock) -> Iterator[OidcVerifier]:
    made = OidcVerifier(entries(issuer, tls), clock)
    yield made
    made.close()


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


def test_claims_map_to_namespaces(issuer: Issuer, verifier: OidcVerifier) -> None:
    principal = identify(verifier, issuer.token(project_id="42"))
    assert principal == Principal(
        "deploy", NamespaceScope(("shared-*", "platform", "ci-42")), mirror=True
    )
    assert principal.may("read", "Shared-things") and principal.may("read", "platform")
    assert not principal.may("read", "other") and not principal.may("ops")


def test_an_unprotected_ref_gets_only_its_own_namespace(
    issuer: Issuer, verifier: OidcVerifier
) -> None:
    principal = identify(verifier, issuer.token(ref_protected="false", namespace_path="team-a"))
    assert principal == Principal("ci", NamespaceScope(("team-a",)))


def test_a_claim_that_is_no_namespace_fills_nothing(issuer: Issuer, verifier: OidcVerifier) -> None:
    # group/sub would be no namespace; `*` must not widen the pattern to every namespace.
    for value in ("group/sub", "*", "", None, 7):
        principal = identify(verifier, issuer.token(namespace_path=value, project_id="*"))
        assert principal == Principal("ci", NamespaceScope()), value


def test_several_audiences_and_a_list_of_them(issuer: Issuer, verifier: OidcVerifier) -> None:
    principal = identify(verifier, issuer.token(aud=["nope", "other"]))
    assert principal == Principal("other-audience", NamespaceScope(("*",)), ops=True)
    both = identify(verifier, issuer.token(aud=[AUDIENCE, "other"], project_id="1"))
    assert both is not None and both.name == "deploy" and both.ops and both.mirror
    assert both.read.patterns == ("shared-*", "platform", "ci-1", "*")


def test_tokens_not_for_this_verifier_are_left_to_others(
    issuer: Issuer, verifier: OidcVerifier
) -> None:
    for token in (
        "gitreg_abcdef",
        "a.b",
        "a.b.c.d",
        "not base64!.x.y",
        f"{_b64([1])}.{_b64({'iss': issuer.url})}.x",
        f"{_b64({'alg': 'RS256'})}.{_b64(['iss'])}.x",
        issuer.token(iss="https://elsewhere.example"),
        issuer.token(iss=None),
    ):
        assert identify(verifier, token) is None, token
    assert issuer.origin.asked[DISCOVERY] == 0  # the issuer was not asked about them


@pytest.mark.parametrize(
    ("claims", "reason", "said"),
    [
        ({"aud": "someone-else"}, "wrong_audience", "is for the audience ['someone-else']"),
        ({"aud": None}, "wrong_audience", "not 'https://registry.test' or 'other'"),
        ({"exp": -120}, "expired", "expired at"),
        ({"exp": None}, "malformed", "no expiry"),
        ({"exp": float("nan")}, "malformed", "no expiry"),
        ({"exp": "soon"}, "malformed", "no expiry"),
        ({"nbf": 120}, "not_yet_valid", "valid from"),
        ({"nbf": "later"}, "malformed", "nbf is not a time"),
    ],
)
def test_claims_that_refuse(
    issuer: Issuer,
    verifier: OidcVerifier,
    clock: Clock,
    claims: dict[str, Any],
    reason: str,
    said: str,
) -> None:
    relative: dict[str, Any] = {
        k: clock.now + v if k in ("exp", "nbf") and isinstance(v, int) else v
        for k, v in claims.items()
    }
    error = refused(verifier, issuer.token(**relative), reason)
    assert said in str(error) and error.name == "deploy"


def test_clock_skew_is_forgiven(issuer: Issuer, verifier: OidcVerifier, clock: Clock) -> None:
    late = issuer.token(exp=int(clock.now) - 30, nbf=int(clock.now) + 30)
    assert identify(verifier, late) is not None


def test_only_asymmetric_algorithms(issuer: Issuer, verifier: OidcVerifier) -> None:
    error = refused(verifier, issuer.unsigned(), "bad_algorithm")
    assert "signed with 'none'" in str(error)
    # HS256 with the issuer's public key as the secret: the classic confusion.
    error = refused(verifier, issuer.hmac(issuer.rsa.as_pem(private=False)), "bad_algorithm")
    assert "signed with 'HS256'" in str(error)
    listed = f"{_b64({'alg': ['RS256']})}.{issuer.unsigned().split('.')[1]}.c2ln"
    refused(verifier, listed, "bad_algorithm")


def test_signatures_and_keys(issuer: Issuer, verifier: OidcVerifier) -> None:
    stranger = rsa_key("rsa-1", "stranger")  # the issuer's kid
    error = refused(verifier, issuer.token(stranger), "bad_signature")
    assert "does not verify" in str(error)
    head, _, signature = issuer.token().split(".")
    forged = f"{head}.{_b64({'iss': issuer.url, 'aud': AUDIENCE, 'exp': 2**40})}.{signature}"
    issuer.minted.append(forged)
    refused(verifier, forged, "bad_signature")
    error = refused(verifier, issuer.token(header={"kid": "x" * 500}), "unknown_key")
    assert "does not list" in str(error) and len(str(error)) < 300
    numbered = f"{_b64({'alg': 'RS256', 'kid': 7})}.{issuer.token().split('.')[1]}.c2ln"
    refused(verifier, numbered, "malformed")
    crit = (
        f"{_b64({'alg': 'RS256', 'kid': 'rsa-1', 'crit': 3})}.{issuer.token().split('.')[1]}.c2ln"
    )
    refused(verifier, crit, "malformed")
    deep = f"{_b64({'alg': 'RS256'})}.{'W1tb' * 4000}.c2ln"  # [[[[... 12000 deep
    assert identify(verifier, deep) is None
    too_large = issuer.token(padding="x" * MAX_TOKEN)
    refused(verifier, too_large, "malformed")


def test_ec_and_ed25519_keys(issuer: Issuer, verifier: OidcVerifier, clock: Clock) -> None:
    ec = ECKey.generate_key("P-256", parameters={"kid": "ec-1"})
    ed = OKPKey.generate_key("Ed25519", parameters={"kid": "ed-1"})
    issuer.serve(issuer.rsa, ec, ed)
    assert identify(verifier, issuer.token(ec)) is not None
    assert identify(verifier, issuer.token(ed)) is not None
    assert identify(verifier, issuer.token(ed, header={"alg": "Ed25519"})) is not None


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
    token = f"{_b64({'alg': 'RS256', 'kid': 'k'})}.{_b64({'iss': url})}.c2ln"
    assert "cannot be fetched now" in str(unavailable(verifier, token))
    verifier.close()


def test_an_issuer_whose_certificate_is_not_trusted(issuer: Issuer, clock: Clock) -> None:
    verifier = OidcVerifier([OidcIssuer("ci", issuer.url, AUDIENCE)], clock)
    assert "CERTIFICATE_VERIFY_FAILED" in str(unavailable(verifier, issuer.token()))
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


def test_through_the_gate(issuer: Issuer, tls: TlsMaterial, tmp_path: Path) -> None:
    counts: Counter[tuple[str, str]] = Counter()
    only_deploy = entries(issuer, tls)[:1]
    gate = Gate.build(AuthSettings(oidc=only_deploy), tmp_path, counts)
    try:
        platform = Target("read", "module shared-net/vpc/aws", "shared-net")

        def admit(token: str, target: Target = platform) -> Principal:
            return asyncio.run(gate.admit(f"Bearer {token}", target))

        assert admit(issuer.token()).name == "deploy"
        assert admit(issuer.token(), Target("mirror", "the network mirror")).mirror
        with pytest.raises(Forbidden, match="may not read module other/vpc/aws"):
            admit(issuer.token(), Target("read", "module other/vpc/aws", "other"))
        with pytest.raises(Forbidden, match=r"it reads no namespace"):
            admit(issuer.token(namespace_path="team-a"))
        with pytest.raises(Refused, match="expired"):
            admit(issuer.token(exp=int(time.time()) - 3600))
        with pytest.raises(Refused, match="not one this registry knows"):
            admit(issuer.token(iss="https://elsewhere.example"))
        assert counts == Counter(
            {
                ("deploy", "allowed"): 2,
                ("deploy", "refused"): 2,
                ("deploy", "expired"): 1,
                ("unknown", "unknown_token"): 1,
            }
        )
        issuer.origin.down = True
        gate_down = Gate.build(AuthSettings(oidc=only_deploy), tmp_path, counts)
        with pytest.raises(AuthUnavailable):
            asyncio.run(gate_down.admit(f"Bearer {issuer.token()}", platform))
        gate_down.close()
    finally:
        gate.close()


def test_requests_at_once_share_one_fetch(issuer: Issuer, verifier: OidcVerifier) -> None:
    tokens = [issuer.token(project_id=str(n)) for n in range(20)]

    async def all_at_once() -> list[Principal | None]:
        return await asyncio.gather(*(verifier.identify(t) for t in tokens))

    found = asyncio.run(all_at_once())
    assert [p.read.patterns[-1] for p in found if p] == [f"ci-{n}" for n in range(20)]
    assert issuer.origin.asked[DISCOVERY] == 1 and issuer.origin.asked["/jwks"] == 1
