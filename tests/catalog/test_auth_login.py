"""auth.login read from registry.yaml: its settings, and each mistake refused with key path and
line; the client secret never in a problem or a repr."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitreg.catalog.auth_settings import LoginSettings, OidcIssuer
from gitreg.catalog.secrets import SecretRef
from tests.conftest import WriteCatalog
from tests.support.refused_catalogs import assert_refused, refusal

ISSUER = "https://sso.example.com/realms/acme"


def test_login_is_read(
    write_catalog: WriteCatalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITREG_OIDC_SECRET", "the-client-secret")
    (tmp_path / "ca.pem").write_text("x")
    auth = write_catalog(
        f"""
        mirror: {{}}
        auth:
          login:
            issuer: {ISSUER}
            client_id: gitreg
            client_secret_env: GITREG_OIDC_SECRET
            scopes: [openid, profile, email, groups]
            claims:
              - {{match: {{groups: "platform"}}, read: ["platform", "shared-*"]}}
              - {{match: {{groups: "*"}}, read: ["shared-*"], mirror: true}}
            token_ttl: 90d
            ca_file: ca.pem
        """
    ).auth
    assert auth is not None and auth.login is not None
    ca = tmp_path / "ca.pem"
    assert auth.login == LoginSettings(
        name="sso.example.com",
        issuer=ISSUER,
        client_id="gitreg",
        client_secret=SecretRef(env="GITREG_OIDC_SECRET"),
        scopes=("openid", "profile", "email", "groups"),
        grants=(
            OidcIssuer(
                name="sso.example.com",
                issuer=ISSUER,
                audience="gitreg",
                claims=(("groups", "platform"),),
                read=("platform", "shared-*"),
                ca_file=ca,
            ),
            OidcIssuer(
                name="sso.example.com",
                issuer=ISSUER,
                audience="gitreg",
                claims=(("groups", "*"),),
                read=("shared-*",),
                mirror=True,
                ca_file=ca,
            ),
        ),
        token_ttl=90 * 86400.0,
        ca_file=ca,
    )
    assert "the-client-secret" not in repr(auth.login)


def test_a_public_client_has_no_secret_and_default_scopes(write_catalog: WriteCatalog) -> None:
    auth = write_catalog(
        f"""
        mirror: {{}}
        auth:
          login:
            name: Acme SSO
            issuer: {ISSUER}
            client_id: gitreg
            claims: [{{match: {{email: "*@acme.example"}}, read: ["*"]}}]
        """
    ).auth
    assert auth is not None and auth.login is not None
    assert auth.login.client_secret is None
    assert auth.login.name == "Acme SSO"
    assert auth.login.scopes == ("openid", "profile", "email")
    assert auth.login.token_ttl == 90 * 86400.0
    assert auth.login.name_claim is None


def test_the_claim_that_names_people_is_read(write_catalog: WriteCatalog) -> None:
    text = HEAD + GOOD + "    name_claim: preferred_username\nmirror: {}\n"
    auth = write_catalog(text).auth
    assert auth is not None and auth.login is not None
    assert auth.login.name_claim == "preferred_username"


HEAD = "modules: []\nauth:\n  login:\n"
GOOD = f"    issuer: {ISSUER}\n    client_id: gitreg\n    claims: [{{read: [x]}}]\n"


@pytest.mark.parametrize(
    ("text", "path", "line", "reason"),
    [
        (HEAD + "    client_id: gitreg\n", "auth.login.issuer", 5, "is required"),
        (HEAD + f"    issuer: {ISSUER}\n", "auth.login.client_id", 5, "is required"),
        (HEAD + GOOD.replace("https", "http"), "auth.login.issuer", 5, "https:// URL"),
        (HEAD + GOOD + "    colour: blue\n", "auth.login.colour", 8, "unknown key"),
        (HEAD + GOOD + "    token_ttl: 5m\n", "auth.login.token_ttl", 8, "from 1h to 366d"),
        (HEAD + GOOD + "    token_ttl: 400d\n", "auth.login.token_ttl", 8, "from 1h to 366d"),
        (HEAD + GOOD + "    token_ttl: 90\n", "auth.login.token_ttl", 8, "has no unit"),
        (HEAD + GOOD + "    scopes: [email]\n", "auth.login.scopes", 8, "must hold openid"),
        (HEAD + GOOD + "    scopes: ['a b']\n", "auth.login.scopes[0]", 8, "must be a scope"),
        (
            HEAD + GOOD + "    client_secret_env: GITREG_NOT_SET_ANYWHERE\n",
            "auth.login.client_secret_env",
            8,
            "GITREG_NOT_SET_ANYWHERE is not set",
        ),
        (
            HEAD + GOOD + "    client_secret_file: missing.txt\n",
            "auth.login.client_secret_file",
            8,
            "is not a readable file",
        ),
        (
            HEAD + f"    issuer: {ISSUER}\n    client_id: gitreg\n",
            "auth.login",
            5,
            "give claims",
        ),
        (
            HEAD + f"    issuer: {ISSUER}\n    client_id: gitreg\n    claims: [{{match: {{}}}}]\n",
            "auth.login.claims[0].read",
            7,
            "is required",
        ),
        (
            HEAD
            + f"    issuer: {ISSUER}\n    client_id: gitreg\n    claims: [{{read: ['a/b']}}]\n",
            "auth.login.claims[0].read[0]",
            7,
            "must be a namespace",
        ),
        (
            HEAD
            + f"    issuer: {ISSUER}\n    client_id: gitreg\n    claims: [{{read: [x], match: [1]}}]\n",
            "auth.login.claims[0].match",
            7,
            "mapping of claim: glob",
        ),
        (HEAD + "    client_id: 'a b'\n", "auth.login.client_id", 5, "without spaces"),
        (HEAD + GOOD + "    name_claim: 'a b'\n", "auth.login.name_claim", 8, "names a person"),
        (HEAD + GOOD + "    name_claim: aud\n", "auth.login.name_claim", 8, "names a person"),
        (HEAD + GOOD + "    name_claim: [email]\n", "auth.login.name_claim", 8, "must be"),
    ],
)
def test_login_problems(tmp_path: Path, text: str, path: str, line: int, reason: str) -> None:
    assert_refused(refusal(tmp_path, text), path, line, reason)
