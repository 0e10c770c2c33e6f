"""Browser sessions: what the cookie names, how long it lasts, and what ends it (its expiry, its
token changed or removed, a sign-out recorded in cache_dir for every gate that reads it)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import os
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import pytest

from gitreg.auth.gate import Gate
from gitreg.auth.principal import Principal
from gitreg.auth.sessions import SESSION_TTL, SessionSigner
from gitreg.auth.signed_urls import UrlSigner
from gitreg.catalog.auth_settings import AuthSettings, TokenSpec
from gitreg.catalog.namespace_scope import NamespaceScope
from gitreg.catalog.secrets import SecretRef
from gitreg.errors import AuthUnavailable
from gitreg.state.ended_sessions import EndedSessionFiles

NOW = 1_800_000_000.0
READER = Principal("reader", NamespaceScope(("secret",)))
TOKEN_DIGEST = hashlib.sha256(b"the-token").digest()
TOKENS = [(TOKEN_DIGEST, READER)]


def _principal(
    signer: SessionSigner, value: str, tokens: Iterable[tuple[bytes, Principal]], now: float
) -> Principal | None:
    found = signer.session(value, tokens, now=now)
    return found.principal if found is not None else None


def test_a_session_names_its_principal_until_it_expires() -> None:
    signer = SessionSigner([b"key"])
    value = signer.issue("reader", TOKEN_DIGEST, now=NOW)
    assert _principal(signer, value, TOKENS, now=NOW) == READER
    assert _principal(signer, value, TOKENS, now=NOW + SESSION_TTL - 1) == READER
    assert _principal(signer, value, TOKENS, now=NOW + SESSION_TTL + 1) is None


def test_the_cookie_holds_neither_the_token_nor_its_digest() -> None:
    value = SessionSigner([b"key"]).issue("reader", TOKEN_DIGEST, now=NOW)
    assert "the-token" not in value and TOKEN_DIGEST.hex() not in value


def test_each_sign_in_is_a_session_of_its_own() -> None:
    signer = SessionSigner([b"key"])
    first = signer.session(signer.issue("reader", TOKEN_DIGEST, now=NOW), TOKENS, now=NOW)
    second = signer.session(signer.issue("reader", TOKEN_DIGEST, now=NOW), TOKENS, now=NOW)
    assert first is not None and second is not None and first.id != second.id


def test_a_cookie_from_before_session_ids_signs_in_no_one() -> None:
    """An s1 cookie (name, expiry, signature) could not be signed out: its holder signs in
    again."""
    key = hashlib.sha256(b"key").digest()
    derived = hmac.new(key, b"gitreg browser session key", hashlib.sha256).digest()
    expires = int(NOW) + 60
    message = b"\n".join((b"reader", str(expires).encode(), TOKEN_DIGEST))
    mac = base64.urlsafe_b64encode(hmac.new(derived, message, hashlib.sha256).digest())
    old = f"s1.cmVhZGVy.{expires}.{mac.rstrip(b'=').decode()}"
    assert _principal(SessionSigner([key]), old, TOKENS, now=NOW) is None


def test_a_changed_token_ends_its_sessions() -> None:
    signer = SessionSigner([b"key"])
    value = signer.issue("reader", TOKEN_DIGEST, now=NOW)
    rotated = [(hashlib.sha256(b"a-new-token").digest(), READER)]
    assert _principal(signer, value, rotated, now=NOW) is None
    assert _principal(signer, value, [], now=NOW) is None  # removed


def test_keys_rotate_like_the_url_keys() -> None:
    old = SessionSigner([b"old"]).issue("reader", TOKEN_DIGEST, now=NOW)
    assert _principal(SessionSigner([b"new", b"old"]), old, TOKENS, now=NOW) == READER
    assert _principal(SessionSigner([b"new"]), old, TOKENS, now=NOW) is None


def test_a_session_key_signs_no_download_url() -> None:
    """Derived from the URL key, but not it: neither kind of signature passes for the other."""
    key = b"shared"
    query = UrlSigner([key], 600).query("/v1/archives/x", "reader", now=NOW)
    signature = dict(part.split("=", 1) for part in query.split("&"))["signature"]
    forged = f"s2.cmVhZGVy.{int(NOW) + 610}.{'A' * 22}.{signature}"
    assert _principal(SessionSigner([key]), forged, TOKENS, now=NOW) is None


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
        "s2.cmVhZGVy.1.x",
        "s2.cmVhZGVy.1.short.x",
        "s2.cmVhZGVy.1." + "/" * 22 + ".x",
        "s2.cmVhZGVy.1." + "A" * 22 + ".x.y",
    ],
)
def test_malformed_values_sign_in_no_one(value: str) -> None:
    assert _principal(SessionSigner([b"key"]), value, TOKENS, now=NOW) is None


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
    assert asyncio.run(gate.session_principal(value)) == principal
    assert counts[("reader", "signed_in")] == 1 and counts[("unknown", "bad_sign_in")] == 1
    # A gate built again (a restart, a reload) with the same keys honours the session.
    again = Gate.build(settings, tmp_path, Counter())
    assert asyncio.run(again.session_principal(value)) == principal


def test_a_sign_out_ends_the_session_for_every_gate_on_the_machine(tmp_path: Path) -> None:
    """Two gates on one cache_dir (two workers): one signs the session out, neither honours
    it after; another session of the same token lives on."""
    settings = AuthSettings(tokens=(TokenSpec("reader", sha256=TOKEN_DIGEST.hex()),))
    first, second = (
        Gate.build(settings, tmp_path, Counter()),
        Gate.build(settings, tmp_path, Counter()),
    )
    signed, other = asyncio.run(first.sign_in("the-token")), asyncio.run(first.sign_in("the-token"))
    assert signed is not None and other is not None
    assert asyncio.run(second.session_principal(signed[1])) is not None
    asyncio.run(second.sign_out(signed[1]))
    assert asyncio.run(first.session_principal(signed[1])) is None
    assert asyncio.run(second.session_principal(signed[1])) is None
    assert asyncio.run(first.session_principal(other[1])) is not None
    asyncio.run(first.sign_out("s2.forged.1." + "A" * 22 + ".x"))  # records nothing
    assert len(os.listdir(EndedSessionFiles(tmp_path).folder)) == 1


def test_ended_sessions_are_swept_once_their_cookie_has_expired(tmp_path: Path) -> None:
    ended = EndedSessionFiles(tmp_path)
    ended.end_session("A" * 22, int(NOW) - 1)
    ended.end_session("B" * 22, int(NOW) + SESSION_TTL)
    assert ended.sweep(now=NOW) == 1
    assert not ended.session_ended("A" * 22, int(NOW) - 1)
    assert ended.session_ended("B" * 22, int(NOW) + SESSION_TTL)
    with pytest.raises(ValueError):
        ended.session_ended("../../x", int(NOW))


def test_a_sign_out_that_cannot_be_recorded_says_so(tmp_path: Path) -> None:
    """cache_dir unwritable (here: a file where the folder goes): a 503 that says the session
    lives on, never a quiet success."""
    settings = AuthSettings(tokens=(TokenSpec("reader", sha256=TOKEN_DIGEST.hex()),))
    gate = Gate.build(settings, tmp_path, Counter())
    signed = asyncio.run(gate.sign_in("the-token"))
    assert signed is not None
    folder = EndedSessionFiles(tmp_path).folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.write_text("not a folder")
    with pytest.raises(AuthUnavailable, match="the session has not ended"):
        asyncio.run(gate.sign_out(signed[1]))
    assert asyncio.run(gate.session_principal(signed[1])) is not None
