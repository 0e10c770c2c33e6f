"""Browser sessions: what the cookie names, how long it lasts, and what ends it."""

from __future__ import annotations

import asyncio
import hashlib
from collections import Counter
from pathlib import Path

import pytest

from gitreg.auth.gate import Gate
from gitreg.auth.principal import NamespaceScope, Principal
from gitreg.auth.sessions import SESSION_TTL, SessionSigner
from gitreg.auth.signed_urls import UrlSigner
from gitreg.catalog.model import AuthSettings, SecretRef, TokenSpec

NOW = 1_800_000_000.0
READER = Principal("reader", NamespaceScope(("secret",)))
TOKEN_DIGEST = hashlib.sha256(b"the-token").digest()
TOKENS = [(TOKEN_DIGEST, READER)]


def test_a_session_names_its_principal_until_it_expires() -> None:
    signer = SessionSigner([b"key"])
    value = signer.issue("reader", TOKEN_DIGEST, now=NOW)
    assert signer.principal(value, TOKENS, now=NOW) == READER
    assert signer.principal(value, TOKENS, now=NOW + SESSION_TTL - 1) == READER
    assert signer.principal(value, TOKENS, now=NOW + SESSION_TTL + 1) is None


def test_the_cookie_holds_neither_the_token_nor_its_digest() -> None:
    value = SessionSigner([b"key"]).issue("reader", TOKEN_DIGEST, now=NOW)
    assert "the-token" not in value and TOKEN_DIGEST.hex() not in value


def test_a_changed_token_ends_its_sessions() -> None:
    signer = SessionSigner([b"key"])
    value = signer.issue("reader", TOKEN_DIGEST, now=NOW)
    rotated = [(hashlib.sha256(b"a-new-token").digest(), READER)]
    assert signer.principal(value, rotated, now=NOW) is None
    assert signer.principal(value, [], now=NOW) is None  # removed


def test_keys_rotate_like_the_url_keys() -> None:
    old = SessionSigner([b"old"]).issue("reader", TOKEN_DIGEST, now=NOW)
    assert SessionSigner([b"new", b"old"]).principal(old, TOKENS, now=NOW) == READER
    assert SessionSigner([b"new"]).principal(old, TOKENS, now=NOW) is None


def test_a_session_key_signs_no_download_url() -> None:
    """Derived from the URL key, but not it: neither kind of signature passes for the other."""
    key = b"shared"
    query = UrlSigner([key], 600).query("/v1/archives/x", "reader", now=NOW)
    signature = dict(part.split("=", 1) for part in query.split("&"))["signature"]
    forged = f"s1.cmVhZGVy.{int(NOW) + 610}.{signature}"
    assert SessionSigner([key]).principal(forged, TOKENS, now=NOW) is None


@pytest.mark.parametrize(
    "value",
    [
        "",
        "s1",
        "s1...",
        "s2.cmVhZGVy.1.x",
        "s1.!!!.1.x",
        "s1.cmVhZGVy.-1.x",
        "s1.cmVhZGVy.1.é",
        "s1.cmVhZGVy.\uff11.x",  # a fullwidth digit one
        "s1.//8.1.x",
        "s1.cmVhZGVy." + "9" * 20 + ".x",
    ],
)
def test_malformed_values_sign_in_no_one(value: str) -> None:
    assert SessionSigner([b"key"]).principal(value, TOKENS, now=NOW) is None


def test_the_gate_signs_in_client_tokens_only(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("the-token\n")
    settings = AuthSettings(
        tokens=(TokenSpec("reader", source=SecretRef(file=token_file), read=("secret",)),)
    )
    counts: Counter[tuple[str, str]] = Counter()
    gate = Gate.build(settings, tmp_path, counts)
    assert asyncio.run(gate.sign_in("not-a-token")) is None
    signed = asyncio.run(gate.sign_in("the-token"))
    assert signed is not None
    principal, value = signed
    assert principal.name == "reader"
    assert gate.session_principal(value) == principal
    assert counts[("reader", "signed_in")] == 1 and counts[("unknown", "bad_sign_in")] == 1
    # A gate built again (a restart, a reload) with the same keys honours the session.
    assert Gate.build(settings, tmp_path, Counter()).session_principal(value) == principal
