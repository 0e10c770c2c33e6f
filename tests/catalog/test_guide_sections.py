"""The registry.yaml sections the site's guide shows, read from its pages and loaded: each is
valid as written, and says what the page says it does. (The ones a user serves are run end to
end by tests/e2e: test_own_registry, test_private_registry, test_the_provider_recipe.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from gitreg.catalog.load import load_catalog
from gitreg.catalog.model import Catalog
from tests.support.site_snippets import claimed

# Every catalog needs something to serve; these sections then add to it.
SERVES = "cache_dir: cache\nmirror: {}\n"


def _load(folder: Path, section: str, head: str = SERVES) -> Catalog:
    (folder / "registry.yaml").write_text(head + section)
    return load_catalog(folder / "registry.yaml")


def _files(folder: Path, *names: str) -> None:
    for name in names:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("a file\n")


def test_the_guide_sections_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_TOKEN", "a Git token")
    monkeypatch.setenv("GITREG_DATABASE_URL", "postgresql://gitreg@127.0.0.1/gitreg")
    _files(tmp_path, "keys/id_ed25519", "keys/known_hosts", "tls/server.pem", "tls/server.key")

    with claimed("own-registry.md", "test_the_guide_sections_load") as page:
        catalog = _load(tmp_path, page.take("yaml", "credentials:"))
        https, ssh = catalog.credentials
        assert (https.url, https.token_env, https.token()) == (
            "https://git.example.com/",
            "GIT_TOKEN",
            "a Git token",
        )
        assert (ssh.ssh_key, ssh.known_hosts) == (
            tmp_path / "keys" / "id_ed25519",
            tmp_path / "keys" / "known_hosts",
        )

    with claimed("deploy.md", "test_the_guide_sections_load") as page:
        # The container's catalog, with its cache where this test may write.
        container = page.take("yaml", "cache_dir: /var/lib/gitreg")
        catalog = _load(tmp_path, container.replace("/var/lib/gitreg", str(tmp_path / "c")), "")
        server = catalog.server
        assert server.hostname == "registry.example.com"
        assert server.tls is not None and server.tls.certfile == tmp_path / "tls" / "server.pem"
        assert [str(m.address) for m in catalog.modules] == ["infra/vpc/aws"]

        catalog = _load(tmp_path, page.take("yaml", "state:"))
        assert catalog.state is not None and catalog.state.dsn.env == "GITREG_DATABASE_URL"

    with claimed("private.md", "test_the_guide_sections_load") as page:
        auth = _load(tmp_path, page.take("yaml", "git:")).auth
        assert auth is not None and auth.git is not None
        assert (auth.git.check, auth.git.username, auth.git.cache) == ("repo", "oauth2", 300.0)

    with claimed("new-tags.md", "test_the_guide_sections_load") as page:
        freshness = _load(tmp_path, page.take("yaml", "refresh_interval:")).freshness
        assert (freshness.refresh_interval, freshness.max_backoff, freshness.fresh_reads) == (
            300.0,
            900.0,
            5.0,
        )


def test_the_auth_section_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with claimed("private.md", "test_the_auth_section_loads") as page:
        section = page.take("yaml", "auth:\n  public:")
    monkeypatch.setenv("GITREG_URL_KEY", "a key")
    monkeypatch.setenv("GITREG_OLD_URL_KEY", "the key before")
    _files(tmp_path, "secrets/metrics-token")
    auth = _load(tmp_path, section).auth
    assert auth is not None
    assert auth.public == ("examples", "shared-*")
    assert [(t.name, t.read, t.mirror, t.ops) for t in auth.tokens] == [
        ("ci-platform", ("platform", "team-*"), True, False),
        ("prometheus", (), False, True),
    ]
    assert [k.env for k in auth.url_keys] == ["GITREG_URL_KEY", "GITREG_OLD_URL_KEY"]
    assert auth.download_ttl == 600


def test_the_oidc_example_loads(tmp_path: Path) -> None:
    with claimed("private.md", "test_the_oidc_example_loads") as page:
        section = page.take("yaml", "auth:\n  oidc:")
    _files(tmp_path, "certs/gitlab-ca.pem")
    auth = _load(tmp_path, section).auth
    assert auth is not None
    (issuer,) = auth.oidc
    assert (issuer.name, issuer.issuer, issuer.audience) == (
        "gitlab-ci",
        "https://gitlab.example.com",
        "https://registry.example.com",
    )
    assert issuer.claims == (("ref_protected", "true"),)
    assert issuer.read == ("{namespace_path}", "shared")


def test_the_login_example_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with claimed("private.md", "test_the_login_example_loads") as page:
        section = page.take("yaml", "auth:\n  login:")
    monkeypatch.setenv("GITREG_OIDC_SECRET", "a-client-secret")
    auth = _load(tmp_path, section).auth
    assert auth is not None and auth.login is not None
    login = auth.login
    assert (login.name, login.issuer, login.client_id) == (
        "Acme SSO",
        "https://sso.example.com/realms/acme",
        "gitreg",
    )
    assert login.scopes == ("openid", "profile", "email", "groups")
    assert [(g.claims, g.read) for g in login.grants] == [
        ((("groups", "platform"),), ("platform", "shared-*")),
        ((("groups", "*"),), ("shared-*",)),
    ]
    assert login.token_ttl == 90 * 86400
