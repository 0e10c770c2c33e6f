"""README.md's auth: examples are valid sections, and say what the loader reads from them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gitreg.catalog.load import load_catalog

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def _auth_blocks(first_key: str) -> list[str]:
    pattern = rf"^```yaml\n(auth:\n  {first_key}.*?)^```$"
    blocks = re.findall(pattern, README, re.MULTILINE | re.DOTALL)
    assert len(blocks) == 1
    return blocks


def test_the_readme_auth_section_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = _auth_blocks("public:")
    monkeypatch.setenv("GITREG_URL_KEY", "a key")
    monkeypatch.setenv("GITREG_OLD_URL_KEY", "the key before")
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "metrics-token").write_text("a token\n")
    (tmp_path / "registry.yaml").write_text(f"cache_dir: cache\nmirror: {{}}\n{blocks[0]}")
    auth = load_catalog(tmp_path / "registry.yaml").auth
    assert auth is not None
    assert auth.public == ("examples", "shared-*")
    assert [(t.name, t.read, t.mirror, t.ops) for t in auth.tokens] == [
        ("ci-platform", ("platform", "team-*"), True, False),
        ("prometheus", (), False, True),
    ]
    assert [k.env for k in auth.url_keys] == ["GITREG_URL_KEY", "GITREG_OLD_URL_KEY"]
    assert auth.download_ttl == 600


def test_the_readme_oidc_example_loads(tmp_path: Path) -> None:
    (block,) = _auth_blocks("oidc:")
    (tmp_path / "certs").mkdir()
    (tmp_path / "certs" / "gitlab-ca.pem").write_text("a CA\n")
    (tmp_path / "registry.yaml").write_text(f"cache_dir: cache\nmirror: {{}}\n{block}")
    auth = load_catalog(tmp_path / "registry.yaml").auth
    assert auth is not None
    (issuer,) = auth.oidc
    assert (issuer.name, issuer.issuer, issuer.audience) == (
        "gitlab-ci",
        "https://gitlab.example.com",
        "https://registry.example.com",
    )
    assert issuer.claims == (("ref_protected", "true"),)
    assert issuer.read == ("{namespace_path}", "shared")
