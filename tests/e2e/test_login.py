"""End to end: the real `terraform login` against gitreg over TLS, its browser step played by a
stand-in `xdg-open` on PATH (it returns at once and follows the URL in the background: through
gitreg to the real OpenID provider process, signed in there, and back to Terraform's listener),
then `terraform init` installing a private module with the token Terraform stored; a person
outside the groups gets a token too, and a 403 at `init`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from gitreg.process.tlscert import TlsMaterial
from tests.support.login_registry import login_registry
from tests.support.oidc_provider import oidc_provider
from tests.support.site_snippets import claimed
from tests.support.terraform_cli import needs_terraform
from tests.support.tls_clients import trusting
from tests.web.test_login import CATALOG

pytestmark = [pytest.mark.terraform, needs_terraform]

# The browser: back at once (terraform reads the callback's code only after its launcher
# returned), the sign-in followed in the background with a deadline of its own.
XDG_OPEN = """#!/bin/sh
"$LOGIN_PYTHON" "$LOGIN_DRIVER" "$1" >"$LOGIN_DRIVER_LOG" 2>&1 &
exit 0
"""
DRIVER = """
import os, ssl, sys
import httpx
from tests.support.oidc_provider import sign_in_as

verify = ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
with httpx.Client(verify=verify, timeout=20) as browser:
    journey = sign_in_as(browser, sys.argv[1], os.environ["LOGIN_SUB"])
    print("led to", (journey.leads_to or "nowhere").split("?")[0], journey.last.status_code)
    if journey.leads_to:
        # Terraform's listener is on 127.0.0.1 alone, whatever its redirect_uri's name says.
        listener = journey.leads_to.replace("http://localhost:", "http://127.0.0.1:", 1)
        print("listener answered", httpx.get(listener, timeout=20).status_code)
"""


@dataclass
class Served:
    host: str  # 127.0.0.1:PORT
    tls: TlsMaterial
    root: Path


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, tls: TlsMaterial) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("login-e2e")
    with oidc_provider(tls) as provider:
        provider.person(
            "alice", email="alice@acme.example", email_verified=True, groups=["platform"]
        )
        provider.person("eve", email="eve@elsewhere.example", email_verified=True)
        provider.person("ci", groups=["platform"])  # named by its sub: a token's name
        with login_registry(root, provider.url, tls, CATALOG) as (server, _):
            yield Served(f"127.0.0.1:{server.port}", tls, root)


def terraform(
    home: Path, served: Served, *args: str, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """terraform as a person runs it: their HOME (credentials.tfrc.json lands there, and no
    TF_CLI_CONFIG_FILE unless `env` sets it: with it, terraform reads no credentials.tfrc.json
    at all, so `init` would not find what `login` stored), the stand-in browser first on PATH,
    the test CA trusted, no checkpoint calls, a trace in HOME/tf.log; `env` on top."""
    bin_dir = home / "bin"
    if not bin_dir.exists():
        bin_dir.mkdir(parents=True)
        (bin_dir / "xdg-open").write_text(XDG_OPEN)
        (bin_dir / "xdg-open").chmod(0o755)
        (home / "driver.py").write_text(DRIVER)
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("TF_")}
    chosen = {
        **inherited,
        "HOME": str(home),
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "SSL_CERT_FILE": str(served.tls.ca_cert),
        "CHECKPOINT_DISABLE": "1",
        "TF_LOG": "trace",
        "TF_LOG_PATH": str(home / "tf.log"),
        "LOGIN_PYTHON": sys.executable,
        "LOGIN_DRIVER": str(home / "driver.py"),
        "LOGIN_DRIVER_LOG": str(home / "driver.log"),
        "PYTHONPATH": str(Path(__file__).parents[2]),
        **(env or {}),
    }
    return subprocess.run(
        ["terraform", *args, "-no-color"] if args[0] != "login" else ["terraform", *args],
        cwd=home,
        env=chosen,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def login(home: Path, served: Served, command: str = "terraform login registry.example.com") -> str:
    """`terraform login` as the person LOGIN_SUB names (the driver reads it): the token stored."""
    (home / ".terraform.d").mkdir(exist_ok=True)  # where terraform keeps credentials
    args = command.replace("registry.example.com", served.host).split()
    assert args[:2] == ["terraform", "login"], command
    done = terraform(home, served, *args[1:], stdin="yes\n")
    driver = (home / "driver.log").read_text() if (home / "driver.log").exists() else ""
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}\ndriver: {driver}"
    assert "Success!" in done.stdout
    stored = json.loads((home / ".terraform.d" / "credentials.tfrc.json").read_text())
    token: str = stored["credentials"][served.host]["token"]
    return token


def init(home: Path, served: Served, module: str) -> subprocess.CompletedProcess[str]:
    (home / "main.tf").write_text(
        f'module "net" {{\n  source  = "{served.host}/{module}"\n  version = "1.0.0"\n}}\n'
        'output "version" {\n  value = module.net.version\n}\n'
    )
    return terraform(home, served, "init")


def test_terraform_login_then_init_installs_a_private_module(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOGIN_SUB", "alice")
    with claimed("private.md", "test_terraform_login_then_init_installs_a_private_module") as page:
        commands = page.take("sh", "terraform login").splitlines()
    assert commands[1] == "terraform init"
    token = login(tmp_path, served, commands[0])
    assert token.startswith("gitreg_")
    verify = trusting(served.tls.ca_cert)
    listed = httpx.get(
        f"https://{served.host}/v1/modules/platform/net/aws/versions",
        headers={"Authorization": f"Bearer {token}"},
        verify=verify,
    )
    assert listed.status_code == 200, listed.text
    done = init(tmp_path, served, "platform/net/aws")
    assert done.returncode == 0, done.stdout + done.stderr
    applied = terraform(tmp_path, served, "apply", "-auto-approve")
    assert applied.returncode == 0 and 'version = "1.0.0"' in applied.stdout, applied.stderr


def test_a_person_outside_the_groups_gets_403_at_init(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOGIN_SUB", "eve")
    login(tmp_path, served)
    done = init(tmp_path, served, "platform/net/aws")
    assert done.returncode != 0
    said = " ".join((done.stdout + done.stderr).split())
    assert "403" in said, said


def test_a_refused_sign_in_ends_terraform_login_with_the_reason(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Refused once the provider sent the person back (here: their name is a client token's),
    the sign-in still reaches Terraform's listener, with a code whose exchange is refused:
    Terraform stops waiting (its 120 s bound would fail the test) and prints why."""
    monkeypatch.setenv("LOGIN_SUB", "ci")
    (tmp_path / ".terraform.d").mkdir()
    done = terraform(tmp_path, served, "login", served.host, stdin="yes\n")
    said = " ".join((done.stdout + done.stderr).split())
    assert done.returncode != 0, said
    assert "is the name of a client token or issuer" in said, said
    assert not (tmp_path / ".terraform.d" / "credentials.tfrc.json").exists()
