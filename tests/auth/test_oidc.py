"""CI identity tokens checked and mapped to namespaces, alone and through the gate."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from joserfc.jwk import ECKey, OKPKey

from gitreg.auth.gate import Gate, Target
from gitreg.auth.oidc import MAX_TOKEN, OidcVerifier
from gitreg.auth.principal import Principal, Refused
from gitreg.catalog.auth_settings import AuthSettings
from gitreg.catalog.namespace_scope import NamespaceScope
from gitreg.errors import AuthUnavailable, Forbidden
from gitreg.process.tlscert import TlsMaterial
from tests.auth.conftest import entries
from tests.support.oidc_issuer import (
    AUDIENCE,
    DISCOVERY,
    Clock,
    Issuer,
    b64,
    identify,
    refused,
    rsa_key,
)


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
        f"{b64([1])}.{b64({'iss': issuer.url})}.x",
        f"{b64({'alg': 'RS256'})}.{b64(['iss'])}.x",
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
    listed = f"{b64({'alg': ['RS256']})}.{issuer.unsigned().split('.')[1]}.c2ln"
    refused(verifier, listed, "bad_algorithm")


def test_signatures_and_keys(issuer: Issuer, verifier: OidcVerifier) -> None:
    stranger = rsa_key("rsa-1", "stranger")  # the issuer's kid
    error = refused(verifier, issuer.token(stranger), "bad_signature")
    assert "does not verify" in str(error)
    head, _, signature = issuer.token().split(".")
    forged = f"{head}.{b64({'iss': issuer.url, 'aud': AUDIENCE, 'exp': 2**40})}.{signature}"
    issuer.minted.append(forged)
    refused(verifier, forged, "bad_signature")
    error = refused(verifier, issuer.token(header={"kid": "x" * 500}), "unknown_key")
    assert "does not list" in str(error) and len(str(error)) < 300
    numbered = f"{b64({'alg': 'RS256', 'kid': 7})}.{issuer.token().split('.')[1]}.c2ln"
    refused(verifier, numbered, "malformed")
    crit = f"{b64({'alg': 'RS256', 'kid': 'rsa-1', 'crit': 3})}.{issuer.token().split('.')[1]}.c2ln"
    refused(verifier, crit, "malformed")
    deep = f"{b64({'alg': 'RS256'})}.{'W1tb' * 4000}.c2ln"  # [[[[... 12000 deep
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
