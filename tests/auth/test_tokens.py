"""Client tokens held as digests, and the namespaces they open."""

from __future__ import annotations

import hashlib

import pytest

from gitreg.auth.principal import Principal
from gitreg.auth.tokens import StaticTokens, digest, new_token
from gitreg.catalog.model import SecretRef, TokenSpec
from gitreg.catalog.namespace_scope import NamespaceScope


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
