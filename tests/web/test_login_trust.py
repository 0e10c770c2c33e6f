"""An OpenID provider whose certificate gitreg does not trust (a company's CA, no ca_file): said
as such, with the key to set, by `gitreg check` and on the sign-in page; never as the provider
being down. A real provider process over TLS, with the tests' CA, which gitreg is not given."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gitreg.catalog.load import load_catalog
from gitreg.process.tlscert import TlsMaterial
from tests.support.gitrepo import GitRepo, module_files
from tests.support.oidc_provider import Provider, oidc_provider
from tests.support.servers import free_port, run_gitreg
from tests.support.tls_clients import served_over_tls

UNTRUSTED = "is not trusted ("


@pytest.fixture(scope="module")
def provider(tls: TlsMaterial) -> Iterator[Provider]:
    with oidc_provider(tls) as running:
        yield running


def _catalog(root: Path, port: int, auth: str) -> Path:
    GitRepo(root / "repo").release("v1.0.0", module_files("1.0.0"))
    path = root / "registry.yaml"
    path.write_text(
        f"cache_dir: cache\nhostname: 127.0.0.1:{port}\npublic_url: https://127.0.0.1:{port}\n"
        f"listen: 127.0.0.1:{port}\nmirror: {{read_through: false}}\n"
        "modules:\n  - {namespace: platform, name: net, system: aws, repo: repo}\n"
        f"auth:\n{auth}"
    )
    return path


def _login(issuer: str) -> str:
    return (
        f"  login:\n    name: Acme SSO\n    issuer: {issuer}\n    client_id: gitreg\n"
        "    claims: [{match: {groups: platform}, read: [platform]}]\n"
    )


def test_check_says_the_providers_certificate_is_not_trusted(
    tmp_path: Path, provider: Provider
) -> None:
    done = run_gitreg(
        "check", "--config", str(_catalog(tmp_path, free_port(), _login(provider.url)))
    )
    assert done.returncode == 1, done.stdout + done.stderr
    [line] = [li for li in done.stdout.splitlines() if li.startswith("auth.login")]
    assert line.startswith(f"auth.login.issuer: the certificate of {provider.url} {UNTRUSTED}")
    assert line.endswith("): if your provider uses your company's CA, set auth.login.ca_file")
    assert "ConnectError" not in line


def test_check_says_an_oidc_issuers_certificate_is_not_trusted(
    tmp_path: Path, provider: Provider
) -> None:
    oidc = f"  oidc:\n    - {{name: ci, issuer: '{provider.url}', audience: gitreg, read: [platform]}}\n"
    done = run_gitreg("check", "--config", str(_catalog(tmp_path, free_port(), oidc)))
    assert done.returncode == 1, done.stdout + done.stderr
    [line] = [li for li in done.stdout.splitlines() if li.startswith("auth.oidc")]
    assert line.startswith("auth.oidc[0].issuer: the signing keys of OIDC issuer")
    assert f"the certificate of {provider.url} {UNTRUSTED}" in line
    assert "if the issuer uses your company's CA, set auth.oidc[0].ca_file" in line


def test_the_sign_in_page_says_the_providers_certificate_is_not_trusted(
    tmp_path: Path, tls: TlsMaterial, provider: Provider
) -> None:
    port = free_port()
    catalog = load_catalog(_catalog(tmp_path, port, _login(provider.url)))
    with served_over_tls(catalog, tls, port=port, timeout=15) as (server, browser):
        answer = browser.get(f"{server.url}/signin/provider")
    assert answer.status_code == 503, answer.text
    assert "Cannot sign in now" in answer.text
    assert f"the certificate of {provider.url} {UNTRUSTED}" in answer.text
    assert "set auth.login.ca_file" in answer.text
