"""Signed download URLs: what verifies, and every way one does not (with the reason), including
a URL whose token, issuer or auth.git is no longer configured."""

from __future__ import annotations

import hashlib
import multiprocessing
from collections import Counter
from dataclasses import replace
from pathlib import Path
from urllib.parse import parse_qsl

import pytest

from gitreg.auth.gate import Gate
from gitreg.auth.principal import Principal
from gitreg.auth.signed_urls import EXPIRY_STEP, UrlSigner, generated_key
from gitreg.catalog.auth_settings import AuthSettings, GitCheck, OidcIssuer, TokenSpec
from gitreg.errors import Forbidden

PATH = "/v1/archives/platform/net/aws/" + "a" * 40 + ".tar.gz"
NOW = 1_800_000_000.0


def signed(signer: UrlSigner, path: str = PATH, by: str = "ci") -> dict[str, str]:
    return dict(parse_qsl(signer.query(path, by, now=NOW)))


def test_a_signed_url_names_who_it_was_given_to() -> None:
    signer = UrlSigner([b"key"], ttl=600)
    assert signer.check(PATH, signed(signer), now=NOW + 599) == "ci"


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"signature": "x" * 43}, "does not verify"),
        ({"by": "someone-else"}, "does not verify"),
        ({"expires": str(int(NOW) + 10**6)}, "does not verify"),
        ({"expires": "soon"}, "not a time"),
        ({"expires": "9" * 40}, "not a time"),
    ],
)
def test_a_tampered_url_is_refused(change: dict[str, str], reason: str) -> None:
    signer = UrlSigner([b"key"], ttl=600)
    with pytest.raises(Forbidden, match=reason):
        signer.check(PATH, {**signed(signer), **change}, now=NOW)


def test_an_expired_url_is_refused() -> None:
    signer = UrlSigner([b"key"], ttl=600)
    with pytest.raises(Forbidden, match="expired"):
        signer.check(PATH, signed(signer), now=NOW + 601)


def test_a_url_for_another_path_is_refused() -> None:
    signer = UrlSigner([b"key"], ttl=600)
    with pytest.raises(Forbidden, match="does not verify"):
        signer.check(PATH.replace("net", "dns"), signed(signer), now=NOW)


def test_a_missing_signature_says_how_to_get_one() -> None:
    with pytest.raises(Forbidden, match="signed URL"):
        UrlSigner([b"key"], ttl=600).check(PATH, {}, now=NOW)


def test_keys_rotate_by_listing_the_previous_one() -> None:
    old = UrlSigner([b"old"], ttl=600)
    given = signed(old)
    assert UrlSigner([b"new", b"old"], ttl=600).check(PATH, given, now=NOW) == "ci"
    with pytest.raises(Forbidden, match="does not verify"):
        UrlSigner([b"new"], ttl=600).check(PATH, given, now=NOW)


def test_a_percent_encoded_path_is_signed_as_it_is_served() -> None:
    signer = UrlSigner([b"key"], ttl=600)
    query = dict(
        parse_qsl(signer.query("/v1/provider-files/a/b/1.0.0%2Bmeta/x.zip", "ci", now=NOW))
    )
    assert signer.check("/v1/provider-files/a/b/1.0.0+meta/x.zip", query, now=NOW) == "ci"


def test_the_generated_key_is_made_once_and_kept_private(tmp_path: Path) -> None:
    first = generated_key(tmp_path)
    assert generated_key(tmp_path) == first and len(first) == 64
    assert (tmp_path / "auth" / "url-signing.key").stat().st_mode & 0o777 == 0o600


def test_the_same_download_asked_again_within_the_step_gets_the_same_url() -> None:
    signer = UrlSigner([b"key"], ttl=600)
    first = signer.query(PATH, "ci", now=NOW + 1)
    assert signer.query(PATH, "ci", now=NOW + 2) == first  # signed once, kept
    assert signer.query(PATH, "other", now=NOW + 2) != first
    expires = int(dict(parse_qsl(first))["expires"])
    assert expires % EXPIRY_STEP == 0 and NOW + 601 <= expires < NOW + 601 + EXPIRY_STEP


def test_processes_making_the_key_at_once_all_get_the_same_one(tmp_path: Path) -> None:
    """Workers start together: every one must sign with the key the others verify with."""
    with multiprocessing.get_context("fork").Pool(6) as pool:
        keys = pool.map(generated_key, [tmp_path] * 24)
    assert len(set(keys)) == 1
    assert keys[0] == (tmp_path / "auth" / "url-signing.key").read_bytes()
    assert [p.name for p in (tmp_path / "auth").iterdir()] == ["url-signing.key"]


def test_a_url_is_bound_to_what_its_name_stands_for() -> None:
    signer = UrlSigner([b"key"], ttl=600)
    given = dict(parse_qsl(signer.query(PATH, "ci", now=NOW, binding="token:aa")))
    assert signer.check(PATH, given, now=NOW, binding_of=lambda name: "token:aa") == "ci"
    with pytest.raises(Forbidden, match="for a token changed since"):
        signer.check(PATH, given, now=NOW, binding_of=lambda name: "token:bb")
    with pytest.raises(Forbidden, match=r"\('ci'\) is no longer configured"):
        signer.check(PATH, given, now=NOW, binding_of=lambda name: None)


def test_the_gate_binds_urls_to_tokens_issuers_and_auth_git(tmp_path: Path) -> None:
    """A client token's URL lives while its token is unchanged; an issuer's while the issuer is
    listed (its identity tokens expire within minutes, and cannot be checked again); auth.git's
    while auth.git is on."""
    token = TokenSpec("reader", sha256=hashlib.sha256(b"t").hexdigest(), read=("secret",))
    issuer = OidcIssuer("ci", "https://issuer.example.test", "gitreg", read=("secret",))
    full = AuthSettings(tokens=(token,), oidc=(issuer,), git=GitCheck())
    gate = Gate.build(full, tmp_path, Counter())
    urls = {
        name: dict(parse_qsl(gate.sign(PATH, Principal(name)))) for name in ("reader", "ci", "git")
    }
    for name, query in urls.items():
        assert gate.signed_url_principal(PATH, query, "read", "secret") == name
    emptied = Gate.build(AuthSettings(), tmp_path, Counter())  # the same key, from cache_dir
    for query in urls.values():
        with pytest.raises(Forbidden, match="no longer configured"):
            emptied.signed_url_principal(PATH, query, "read", "secret")
    narrowed = Gate.build(
        replace(full, tokens=(replace(token, read=("elsewhere",)),)), tmp_path, Counter()
    )
    with pytest.raises(Forbidden, match="no longer opens it"):
        narrowed.signed_url_principal(PATH, urls["reader"], "read", "secret")
    gate.close()
    narrowed.close()
