from __future__ import annotations

from pathlib import Path

import pytest

from gitreg.catalog.auth_settings import OidcIssuer
from tests.conftest import WriteCatalog
from tests.support.refused_catalogs import assert_refused, refusal


def test_oidc_issuers_are_read(write_catalog: WriteCatalog, tmp_path: Path) -> None:
    (tmp_path / "ca.pem").write_text("x")
    auth = write_catalog(
        """
        mirror: {}
        auth:
          tokens:
            - {name: ci, token_sha256: "%s", read: ["*"]}
          oidc:
            - issuer: https://gitlab.example.com
              audience: https://registry.example.com
              claims: {namespace_path: "platform*", ref_protected: true}
              read: ["{namespace_path}", "shared"]
              mirror: true
              ca_file: ca.pem
            - name: github-deploy
              issuer: https://token.actions.githubusercontent.com/
              audience: gitreg
              read: ["team-{repository_owner}-*"]
              ops: true
        """
        % ("a" * 64)
    ).auth
    assert auth is not None
    assert auth.oidc == (
        OidcIssuer(
            name="gitlab.example.com",
            issuer="https://gitlab.example.com",
            audience="https://registry.example.com",
            claims=(("namespace_path", "platform*"), ("ref_protected", "true")),
            read=("{namespace_path}", "shared"),
            mirror=True,
            ca_file=tmp_path / "ca.pem",
        ),
        OidcIssuer(
            name="github-deploy",
            issuer="https://token.actions.githubusercontent.com/",
            audience="gitreg",
            read=("team-{repository_owner}-*",),
            ops=True,
        ),
    )


def test_no_oidc_is_no_issuer(write_catalog: WriteCatalog) -> None:
    auth = write_catalog("mirror: {}\nauth: {public: ['*']}\n").auth
    assert auth is not None and auth.oidc == ()


ONE = "modules: []\nauth:\n  oidc:\n    - "


@pytest.mark.parametrize(
    ("text", "path", "line", "reason"),
    [
        (ONE + "{audience: a}\n", "auth.oidc[0].issuer", 5, "is required"),
        (ONE + "{issuer: 'https://a.example'}\n", "auth.oidc[0].audience", 5, "is required"),
        (
            ONE + "{issuer: 'https://a.example', audience: ''}\n",
            "auth.oidc[0].audience",
            5,
            "empty",
        ),
        (
            ONE + "{issuer: 'http://a.example', audience: a}\n",
            "auth.oidc[0].issuer",
            5,
            "must be an https:// URL",
        ),
        (ONE + "{issuer: 'https://', audience: a}\n", "auth.oidc[0].issuer", 5, "https:// URL"),
        (ONE + "{issuer: 'gitlab.com', audience: a}\n", "auth.oidc[0].issuer", 5, "https:// URL"),
        (
            ONE + "{issuer: 'https://a.example/?x=1', audience: a}\n",
            "auth.oidc[0].issuer",
            5,
            "without user, query or fragment",
        ),
        (
            ONE + "{issuer: 'https://a.example/#top', audience: a}\n",
            "auth.oidc[0].issuer",
            5,
            "without user, query or fragment",
        ),
        (
            ONE + "{issuer: 'https://u@a.example', audience: a}\n",
            "auth.oidc[0].issuer",
            5,
            "without user, query or fragment",
        ),
        (
            ONE + "{issuer: 'https://a.example:99999', audience: a}\n",
            "auth.oidc[0].issuer",
            5,
            "https:// URL",
        ),
        (
            ONE + "{issuer: 'https://a.example', audience: a, colour: b}\n",
            "auth.oidc[0].colour",
            5,
            "unknown key",
        ),
        (
            ONE + "{issuer: 'https://a.example', audience: a, name: 'a b'}\n",
            "auth.oidc[0].name",
            5,
            "must be 1 to 64 letters",
        ),
        (
            ONE + "{issuer: 'https://[::1]', audience: a}\n",
            "auth.oidc[0].name",
            5,
            "must be 1 to 64 letters",
        ),
        (
            ONE
            + "{issuer: 'https://a.example', audience: a}\n    - {issuer: 'https://a.example', audience: b}\n",
            "auth.oidc[1]",
            6,
            "'a.example' is already listed at auth.oidc[0]",
        ),
        (
            "modules: []\nauth:\n  tokens: [{name: ci, token_sha256: '%s'}]\n  oidc:\n"
            "    - {name: ci, issuer: 'https://a.example', audience: a}\n" % ("0" * 64),
            "auth.oidc[0]",
            6,
            "'ci' is already listed at auth.tokens[0]",
        ),
        (
            "modules: []\nauth:\n  tokens:\n    - {name: ci, token_sha256: '" + "0" * 64 + "'}\n"
            "    - {name: ci, token_sha256: '" + "1" * 64 + "'}\n",
            "auth.tokens[1]",
            6,
            "'ci' is already listed at auth.tokens[0]",
        ),
        (
            ONE + "{issuer: 'https://a.example', audience: a, read: ['{namespace.path}']}\n",
            "auth.oidc[0].read[0]",
            5,
            "{namespace.path} must name one claim",
        ),
        (
            ONE + "{issuer: 'https://a.example', audience: a, read: ['{}']}\n",
            "auth.oidc[0].read[0]",
            5,
            "{} must name one claim",
        ),
        (
            ONE + "{issuer: 'https://a.example', audience: a, read: ['{a']}\n",
            "auth.oidc[0].read[0]",
            5,
            "must be a namespace or a pattern",
        ),
        (
            ONE + "{issuer: 'https://a.example', audience: a, read: ['team/x']}\n",
            "auth.oidc[0].read[0]",
            5,
            "must be a namespace or a pattern",
        ),
        (
            ONE + "{issuer: 'https://a.example', audience: a, read: [3]}\n",
            "auth.oidc[0].read[0]",
            5,
            "must be a namespace or a pattern",
        ),
        (
            ONE + "{issuer: 'https://a.example', audience: a, read: 'x'}\n",
            "auth.oidc[0].read",
            5,
            "must be a list",
        ),
        (
            ONE + "{issuer: 'https://a.example', audience: a, claims: [x]}\n",
            "auth.oidc[0].claims",
            5,
            "must be a mapping of claim: glob",
        ),
        (
            ONE + "{issuer: 'https://a.example', audience: a, claims: {ref: [main]}}\n",
            "auth.oidc[0].claims.ref",
            5,
            "must be a glob",
        ),
        (
            ONE + "{issuer: 'https://a.example', audience: a, claims: {ref: ''}}\n",
            "auth.oidc[0].claims.ref",
            5,
            "must be a glob",
        ),
        (
            ONE + "{issuer: 'https://a.example', audience: a, mirror: yes please}\n",
            "auth.oidc[0].mirror",
            5,
            "must be true or false",
        ),
        (
            ONE + "{issuer: 'https://a.example', audience: a, ca_file: nowhere.pem}\n",
            "auth.oidc[0].ca_file",
            5,
            "not a readable file",
        ),
        ("modules: []\nauth:\n  oidc: {issuer: x}\n", "auth.oidc", 4, "must be a list"),
        (
            "modules: []\nauth:\n  oidc: [https://a.example]\n",
            "auth.oidc[0]",
            4,
            "must be a mapping",
        ),
    ],
)
def test_oidc_problems(tmp_path: Path, text: str, path: str, line: int, reason: str) -> None:
    assert_refused(refusal(tmp_path, text), path, line, reason)
