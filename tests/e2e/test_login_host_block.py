"""End to end: the real `terraform login` for a hostname that leads nowhere yet, through the CLI
config `host` block a page prints for it (which names `login.v1` when sign-in is on: a host
block replaces discovery), then `terraform init` with the token it stored. The block goes where
Terraform also reads the token from (`~/.terraformrc`); with TF_CLI_CONFIG_FILE instead, login
succeeds and init is refused until TF_TOKEN_<host> gives the token, as the docs say."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from gitreg.process.tlscert import TlsMaterial
from gitreg.terraform_services import host_block
from tests.e2e.test_login import Served, terraform
from tests.support.login_registry import login_registry
from tests.support.oidc_provider import oidc_provider
from tests.support.site_snippets import claimed, on_port
from tests.support.terraform_cli import needs_terraform
from tests.web.test_login import CATALOG

pytestmark = [pytest.mark.terraform, needs_terraform]

NAME = "registry.example.com"  # what people write in `source`, before DNS leads it here


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, tls: TlsMaterial) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("login-host-block")
    # The registry's own name is NAME, and the browser opens it at 127.0.0.1:PORT.
    catalog = replace(CATALOG, hostname=NAME)
    with oidc_provider(tls) as provider:
        provider.person("alice", email="alice@acme.example", groups=["platform"])
        with login_registry(root, provider.url, tls, catalog) as (server, _):
            yield Served(f"127.0.0.1:{server.port}", tls, root)


def stored_token(home: Path) -> str:
    stored = json.loads((home / ".terraform.d" / "credentials.tfrc.json").read_text())
    token: str = stored["credentials"][NAME]["token"]
    return token


def test_terraform_login_through_a_host_block_then_init(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOGIN_SUB", "alice")
    test = "test_terraform_login_through_a_host_block_then_init"
    with claimed("private.md", test) as page:
        documented = page.take("hcl", f'host "{NAME}"')
    block = host_block(NAME, f"https://{served.host}", login=True)
    port = int(served.host.rsplit(":", 1)[1])
    assert on_port(documented, port) == block + "\n"  # what the pages and the demo print
    (tmp_path / ".terraformrc").write_text(block + "\n")
    (tmp_path / ".terraform.d").mkdir()
    done = terraform(tmp_path, served, "login", NAME, stdin="yes\n")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success!" in done.stdout
    assert stored_token(tmp_path).startswith("gitreg_")
    (tmp_path / "main.tf").write_text(
        f'module "net" {{\n  source  = "{NAME}/platform/net/aws"\n  version = "1.0.0"\n}}\n'
    )
    installed = terraform(tmp_path, served, "init")
    assert installed.returncode == 0, installed.stdout + installed.stderr


def test_without_login_v1_in_the_block_terraform_login_fails(
    served: Served, tmp_path: Path
) -> None:
    (tmp_path / ".terraformrc").write_text(host_block(NAME, f"https://{served.host}") + "\n")
    done = terraform(tmp_path, served, "login", NAME, stdin="yes\n")
    assert done.returncode != 0
    assert "does not support" in " ".join((done.stdout + done.stderr).split())


def test_with_tf_cli_config_file_the_token_is_given_by_the_environment(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Terraform reads no credentials.tfrc.json when TF_CLI_CONFIG_FILE names the config: login
    stores the token there all the same, and init is refused until TF_TOKEN_<host> gives it."""
    monkeypatch.setenv("LOGIN_SUB", "alice")
    config = tmp_path / "cli.tfrc"
    config.write_text(host_block(NAME, f"https://{served.host}", login=True) + "\n")
    chosen = {"TF_CLI_CONFIG_FILE": str(config)}
    (tmp_path / ".terraform.d").mkdir()
    done = terraform(tmp_path, served, "login", NAME, stdin="yes\n", env=chosen)
    assert done.returncode == 0 and "Success!" in done.stdout, done.stdout + done.stderr
    (tmp_path / "main.tf").write_text(
        f'module "net" {{\n  source  = "{NAME}/platform/net/aws"\n  version = "1.0.0"\n}}\n'
    )
    refused = terraform(tmp_path, served, "init", env=chosen)
    assert refused.returncode != 0 and "401" in refused.stdout + refused.stderr
    given = {**chosen, "TF_TOKEN_registry_example_com": stored_token(tmp_path)}
    installed = terraform(tmp_path, served, "init", env=given)
    assert installed.returncode == 0, installed.stdout + installed.stderr
