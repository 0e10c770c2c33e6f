"""End to end, private: `gitreg serve` over TLS with an auth: section, and the real `terraform`
installing private modules (a monorepo folder too) and a private hosted provider with a token,
through the network mirror with a mirror token, and failing, saying why, without one."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from gitreg.process.tlscert import TlsMaterial
from tests.support.gitrepo import GitRepo, module_files
from tests.support.provider_releases import new_key, write_key, write_release
from tests.support.servers import (
    answers,
    free_port,
    run_gitreg,
    start_serve,
    wait_until,
)
from tests.support.terraform_cli import needs_terraform
from tests.support.tls_clients import trusting

pytestmark = [pytest.mark.terraform, needs_terraform]

OTHER = "other-namespace-token"  # reads a namespace this registry does not serve
# May use the network mirror, and reads `secret`: the mirror opens none of the registry's own
# hosted provider namespaces that providers.v1 keeps closed to the same token.
MIRROR = "mirror-token"
OPS = "ops-token"  # may read /v1/status


@dataclass
class Private:
    host: str  # 127.0.0.1:PORT, what module and provider addresses name
    tls: TlsMaterial
    root: Path
    reader: str  # made by `gitreg token new reader --read secret`
    client: httpx.Client  # without a token

    def auth_counts(self) -> dict[tuple[str, str], int]:
        body = self.client.get("/v1/status", headers=_bearer(OPS)).json()
        return {(r["principal"], r["outcome"]): r["count"] for r in body["auth"]["requests"]}


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _sha256(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@pytest.fixture(scope="module")
def private(tmp_path_factory: pytest.TempPathFactory, tls: TlsMaterial) -> Iterator[Private]:
    root = tmp_path_factory.mktemp("private")
    single = GitRepo(root / "single")
    single.release("v1.0.0", module_files("1.0.0"))
    mono = GitRepo(root / "mono")
    mono.write({"modules/naming/main.tf": 'variable "env" {}\noutput "name" { value = var.env }\n'})
    sibling = 'module "naming" {\n  source = "../naming"\n  env    = "prod"\n}\noutput "name" { value = module.naming.name }\n'
    mono.release("vpc/v1.0.0", module_files("vpc-1.0.0", "modules/vpc", sibling))
    key = new_key("gitreg")
    write_key(key, root / "gitreg.asc")
    write_release(root / "releases" / "1.0.0", "widget", "1.0.0", ("linux_amd64",), signer=key)

    made = run_gitreg("token", "new", "reader", "--read", "secret")
    assert made.returncode == 0, made.stderr
    reader = made.stdout.split("\n", 1)[0].removeprefix("token: ")
    # The lines it prints go under `tokens:` as they are.
    entry = made.stdout.split("registry.yaml can be shared):\n", 1)[1]
    (root / "registry.yaml").write_text(
        f"""
hostname: registry.example.test
cache_dir: cache
modules:
  - {{namespace: secret, name: single, system: generic, repo: {single.path}}}
  - {{namespace: secret, name: vpc, system: generic, repo: {mono.path}, path: modules/vpc,
      tags: "vpc/v{{version}}"}}
  - {{namespace: open, name: single, system: generic, repo: {single.path}}}
signing: {{keys: [gitreg.asc]}}
providers:
  - {{namespace: secret, type: widget, artifacts: releases}}
mirror: {{read_through: false}}
auth:
  public: [open]
  tokens:
{entry}
  - {{name: other, token_sha256: "{_sha256(OTHER)}", read: [elsewhere]}}
  - {{name: mirror, token_sha256: "{_sha256(MIRROR)}", mirror: true, read: [secret]}}
  - {{name: ops, token_sha256: "{_sha256(OPS)}", ops: true}}
"""
    )
    port = free_port()
    with (root / "gitreg.log").open("w") as log:
        process = start_serve(root / "registry.yaml", port, tls, log)
    base = f"https://127.0.0.1:{port}"
    context = trusting(tls.ca_cert)
    try:
        wait_until(
            lambda: process.poll() is not None or answers(f"{base}/readyz", context),
            60,
            "gitreg to be ready",
        )
        assert process.poll() is None, (root / "gitreg.log").read_text()
        with httpx.Client(base_url=base, verify=context) as client:
            yield Private(f"127.0.0.1:{port}", tls, root, reader, client)
    finally:
        process.terminate()
        assert process.wait(timeout=15) == 0, (root / "gitreg.log").read_text()
    log_text = (root / "gitreg.log").read_text()
    for token in (reader, OTHER, MIRROR, OPS):
        assert token not in log_text  # a secret never reaches a log line


def _terraform(
    private: Private,
    workdir: Path,
    main_tf: str,
    cli: str = "",
    env: Mapping[str, str] | None = None,
    apply: bool = False,
) -> subprocess.CompletedProcess[str]:
    """`terraform init` (then `apply` with `apply`) in `workdir`; the last run's result."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "main.tf").write_text(main_tf)
    (workdir / "cli.tfrc").write_text(cli)
    full_env = {
        **os.environ,
        "SSL_CERT_FILE": str(private.tls.ca_cert),
        "TF_CLI_CONFIG_FILE": str(workdir / "cli.tfrc"),
        "CHECKPOINT_DISABLE": "1",
        "TF_IN_AUTOMATION": "1",
        "TF_LOG": "trace",
        "TF_LOG_PATH": str(workdir / "tf.log"),
        **(env or {}),
    }
    commands = [["init", "-input=false"], *([["apply", "-auto-approve"]] if apply else [])]
    for command in commands:
        done = subprocess.run(
            ["terraform", *command, "-no-color"],
            cwd=workdir,
            env=full_env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode != 0:
            break
    return done


def _outputs(workdir: Path) -> dict[str, object]:
    shown = json.loads((workdir / "terraform.tfstate").read_text())["outputs"]
    return {name: value["value"] for name, value in shown.items()}


def _modules(private: Private, *names: str) -> str:
    """One module block (and an output) per `namespace/name`, each at version 1.0.0."""
    blocks = []
    for address in names:
        label = address.replace("/", "_")
        source = f"{private.host}/{address}/generic"
        blocks.append(f'module "{label}" {{\n  source  = "{source}"\n  version = "1.0.0"\n}}\n')
        blocks.append(f'output "{label}" {{\n  value = module.{label}\n}}\n')
    return "".join(blocks)


def _credentials(private: Private, token: str) -> str:
    return f'credentials "{private.host}" {{\n  token = "{token}"\n}}\n'


def _failure(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode != 0, done.stdout
    return " ".join((done.stdout + done.stderr).split())  # terraform wraps its messages


def test_private_modules_install_with_a_credentials_block(private: Private, tmp_path: Path) -> None:
    before = private.auth_counts().get(("reader", "signed_url"), 0)
    main_tf = _modules(private, "secret/single", "secret/vpc")
    done = _terraform(private, tmp_path, main_tf, _credentials(private, private.reader), apply=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _outputs(tmp_path) == {
        "secret_single": {"version": "1.0.0"},
        "secret_vpc": {"version": "vpc-1.0.0", "name": "prod"},  # the folder, and its sibling
    }
    # Both archives were fetched through their signed URLs: Terraform sends no token to them.
    log = (tmp_path / "tf.log").read_text()
    assert log.count("&by=reader&signature=") >= 2
    assert private.auth_counts()[("reader", "signed_url")] >= before + 2


def test_private_and_public_modules_install_with_a_tf_token_variable(
    private: Private, tmp_path: Path
) -> None:
    # The variable's name is the host with its dots as underscores, and the port as it is, ':'
    # included: TF_TOKEN_127_0_0_1:PORT (no shell can `export` it; `env` and CI systems set it).
    # TF_TOKEN_127_0_0_1_PORT is not read (401).
    variable = "TF_TOKEN_" + private.host.replace(".", "_")
    main_tf = _modules(private, "secret/vpc", "open/single")
    done = _terraform(private, tmp_path, main_tf, env={variable: private.reader}, apply=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _outputs(tmp_path) == {
        "secret_vpc": {"version": "vpc-1.0.0", "name": "prod"},
        "open_single": {"version": "1.0.0"},
    }


def test_a_public_module_installs_without_a_token(private: Private, tmp_path: Path) -> None:
    done = _terraform(private, tmp_path, _modules(private, "open/single"), apply=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _outputs(tmp_path) == {"open_single": {"version": "1.0.0"}}
    # A public archive needs no signature: its location is plain.
    assert "signature=" not in (tmp_path / "tf.log").read_text()


def test_without_a_token_init_fails_with_401(private: Private, tmp_path: Path) -> None:
    said = _failure(_terraform(private, tmp_path, _modules(private, "secret/single")))
    # Terraform prints the status only, not the registry's message.
    assert (
        f'Failed to retrieve available versions for module "secret_single" (main.tf:1) from'
        f" {private.host}: error looking up module versions: 401 Unauthorized." in said
    ), said
    response = private.client.get("/v1/modules/secret/single/generic/versions")
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == 'Bearer realm="gitreg"'
    assert "this registry is private: send a token" in response.json()["errors"][0]


def test_a_token_for_another_namespace_fails_with_403(private: Private, tmp_path: Path) -> None:
    main_tf = _modules(private, "secret/single")
    said = _failure(_terraform(private, tmp_path, main_tf, _credentials(private, OTHER)))
    assert (
        f'Failed to retrieve available versions for module "secret_single" (main.tf:1) from'
        f" {private.host}: error looking up module versions: 403 Forbidden." in said
    ), said
    # The registry's message, the same whether the module exists or not.
    for name in ("single", "nosuch"):
        response = private.client.get(
            f"/v1/modules/secret/{name}/generic/versions", headers=_bearer(OTHER)
        )
        assert response.status_code == 403
        assert response.json()["errors"] == [
            f"token 'other' may not read module secret/{name}/generic (it reads elsewhere)"
        ]


def _providers(source: str) -> str:
    return (
        "terraform {\n  required_providers {\n"
        f'    widget = {{ source = "{source}", version = "1.0.0" }}\n'
        "  }\n}\n"
    )


def test_a_private_hosted_provider_installs_through_signed_urls(
    private: Private, tmp_path: Path
) -> None:
    before = private.auth_counts().get(("reader", "signed_url"), 0)
    main_tf = _providers(f"{private.host}/secret/widget")
    done = _terraform(private, tmp_path, main_tf, _credentials(private, private.reader))
    assert done.returncode == 0, done.stdout + done.stderr
    lock = (tmp_path / ".terraform.lock.hcl").read_text()
    assert f'provider "{private.host}/secret/widget"' in lock
    assert 'version     = "1.0.0"' in lock
    # The zip, SHA256SUMS and its .sig, each through its signed URL, without a token.
    assert private.auth_counts()[("reader", "signed_url")] >= before + 3


def test_a_private_provider_without_a_token_fails(private: Private, tmp_path: Path) -> None:
    said = _failure(_terraform(private, tmp_path, _providers(f"{private.host}/secret/widget")))
    assert (
        f"Could not retrieve the list of available versions for provider {private.host}/secret/"
        f"widget: host {private.host} requires authentication credentials" in said
    ), said


def _mirror(private: Private, token: str) -> str:
    return (
        "provider_installation {\n"
        f'  network_mirror {{ url = "https://{private.host}/v1/mirror/" }}\n'
        "}\n" + _credentials(private, token)
    )


def test_the_network_mirror_installs_with_a_mirror_token(private: Private, tmp_path: Path) -> None:
    before = private.auth_counts().get(("mirror", "signed_url"), 0)
    main_tf = _providers("registry.example.test/secret/widget")
    done = _terraform(private, tmp_path, main_tf, _mirror(private, MIRROR))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "- Installed registry.example.test/secret/widget v1.0.0" in done.stdout
    assert private.auth_counts()[("mirror", "signed_url")] >= before + 1  # the zip


def test_the_network_mirror_refuses_a_token_without_mirror_access(
    private: Private, tmp_path: Path
) -> None:
    main_tf = _providers("registry.example.test/secret/widget")
    said = _failure(_terraform(private, tmp_path, main_tf, _mirror(private, private.reader)))
    assert (
        "Could not retrieve the list of available versions for provider registry.example.test/"
        f"secret/widget: host {private.host} rejected the given authentication credentials" in said
    ), said
    response = private.client.get(
        "/v1/mirror/registry.example.test/secret/widget/index.json",
        headers=_bearer(private.reader),
    )
    assert response.status_code == 403
    assert response.json()["errors"] == [
        "token 'reader' may not use the network mirror (it needs mirror: true)"
    ]
