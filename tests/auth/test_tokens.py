"""Client tokens held as digests, and the namespaces they open."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import pytest

from gitreg.auth import tokens
from gitreg.auth.principal import Principal
from gitreg.auth.tokens import StaticTokens, digest, new_token
from gitreg.catalog.auth_settings import TokenSpec
from gitreg.catalog.namespace_scope import NamespaceScope
from gitreg.catalog.secrets import SecretRef


@pytest.mark.parametrize(
    ("patterns", "namespace", "covered"),
    [
        (("platform",), "platform", True),
        (("platform",), "Platform", True),
        (("platform",), "platform-x", False),
        (("team-*",), "team-a", True),
        (("team-*",), "team", False),
        (("*",), "anything", True),
        ((), "anything", False),
        (("a", "b?"), "bc", True),
    ],
)
def test_namespace_patterns(patterns: tuple[str, ...], namespace: str, covered: bool) -> None:
    assert NamespaceScope(patterns).covers(namespace) is covered


def test_tokens_are_found_by_digest_and_name_their_principal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GITREG_TEST_TOKEN", "from-env")
    specs = (
        TokenSpec("a", sha256=hashlib.sha256(b"secret-a").hexdigest(), read=("x",)),
        TokenSpec("b", source=SecretRef(env="GITREG_TEST_TOKEN"), mirror=True),
    )
    table = StaticTokens(specs)
    assert table.principal("secret-a") == Principal("a", NamespaceScope(("x",)))
    found = table.principal("from-env")
    assert found is not None and found.name == "b" and found.mirror
    assert table.principal("secret-b") is None
    assert table.principal("") is None


def test_a_new_token_is_random_and_long() -> None:
    first, second = new_token(), new_token()
    assert first != second and len(first) > 40
    assert digest(first) == hashlib.sha256(first.encode()).digest()


def test_an_authorization_that_opened_opens_until_its_token_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tokens, "RECHECK_FILES", 0.0)
    token_file = tmp_path / "token"
    token_file.write_text("first-token-0123456789\n")
    table = StaticTokens((TokenSpec("ci", source=SecretRef(file=token_file), read=("x",)),))
    sent = "Bearer first-token-0123456789"
    for _ in range(2):  # the second time from what was remembered
        found = table.principal_sent(sent)
        assert found is not None and found.name == "ci"
    token_file.write_text("second-token-0123456789\n")
    assert table.principal_sent(sent) is None
    again = table.principal_sent("bearer second-token-0123456789")
    assert again is not None and again.name == "ci"


def test_only_values_that_opened_are_remembered_and_so_many_at_most(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(tokens, "SENT_MOST", 2)
    table = StaticTokens((TokenSpec("a", sha256=hashlib.sha256(b"secret-a").hexdigest()),))
    for wrong in ("Bearer secret-b", "Bearer", "Basic !!", "secret-a"):
        assert table.principal_sent(wrong) is None
    basic = [base64.b64encode(f"{user}:secret-a".encode()).decode() for user in "xyz"]
    for value in ["Bearer secret-a", *(f"Basic {b}" for b in basic)]:
        found = table.principal_sent(value)
        assert found is not None and found.name == "a"
    assert len(table._sent[1]) == 2
