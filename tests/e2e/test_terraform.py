"""End to end: `gitreg serve` over TLS, and the real `terraform init` and `apply` against it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from gitreg.catalog.settings import TlsFiles
from gitreg.process.tlscert import TlsMaterial
from tests.support.gitrepo import GitRepo, git, module_files
from tests.support.servers import (
    RegistryServer,
    answers,
    bare_clone,
    free_port,
    git_daemon,
    start_gitreg,
    start_serve,
    wait_until,
)
from tests.support.terraform_cli import needs_terraform
from tests.support.tls_clients import trusting

pytestmark = [pytest.mark.terraform, needs_terraform]


@dataclass
class Registry:
    host: str  # what module sources name: 127.0.0.1:PORT
    tls: TlsMaterial
    root: Path


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory, tls: TlsMaterial) -> Iterator[Registry]:
    root = tmp_path_factory.mktemp("e2e")
    single = GitRepo(root / "single")
    for version in ("1.0.0", "1.1.0", "1.1.3", "1.2.0", "2.0.0"):
        single.release(f"v{version}", module_files(version))
    single.release("v1.3.0-rc.1", module_files("1.3.0-rc.1"))

    mono = GitRepo(root / "mono")
    mono.write(
        {
            "modules/naming/main.tf": 'variable "env" {}\noutput "name" { value = "${var.env}-vpc" }\n',
        }
    )
    sibling = 'module "naming" {\n  source = "../naming"\n  env    = "prod"\n}\noutput "name" { value = module.naming.name }\n'
    mono.release("vpc/v0.9.0", module_files("vpc-0.9.0", "modules/vpc", sibling))
    mono.release("vpc/v1.0.0", module_files("vpc-1.0.0", "modules/vpc", sibling), annotated=True)
    mono.release("dns/v1.0.0", module_files("dns-1.0.0", "modules/dns"))

    served = root / "git-server"
    bare_clone(mono.path, served / "infra" / "mono.git")
    with git_daemon(served) as git_base:
        (root / "registry.yaml").write_text(f"""
hostname: registry.example.test
cache_dir: cache
refresh_interval: 1s
modules:
  - {{namespace: infra, name: single, system: generic, repo: {single.path}}}
  - {{namespace: infra, name: vpc, system: generic, repo: "{git_base}/infra/mono.git",
      path: modules/vpc, tags: "vpc/v{{version}}"}}
  - {{namespace: infra, name: dns, system: generic, repo: {mono.path}, path: modules/dns,
      tags: "dns/v{{version}}", download: git, git_url: "{git_base}/infra/mono.git"}}
  - {{namespace: infra, name: vpcgit, system: generic, repo: {mono.path}, path: modules/vpc,
      tags: "vpc/v{{version}}", download: git, git_url: "{git_base}/infra/mono.git"}}
""")
        port = free_port()
        log = (root / "gitreg.log").open("w")
        process = start_serve(root / "registry.yaml", port, tls, log)
        try:
            _wait_ready(f"https://127.0.0.1:{port}/readyz", tls, process)
            yield Registry(f"127.0.0.1:{port}", tls, root)
        finally:
            process.terminate()
            assert process.wait(timeout=15) == 0, (root / "gitreg.log").read_text()
            log.close()


def _wait_ready(url: str, tls: TlsMaterial, process: subprocess.Popen[str]) -> None:
    context = trusting(tls.ca_cert)
    wait_until(
        lambda: process.poll() is not None or answers(url, context), 60, f"an answer on {url}"
    )
    if process.poll() is not None:
        raise RuntimeError(f"gitreg exited with {process.returncode}")


def terraform(
    registry: Registry, workdir: Path, modules: dict[str, tuple[str, str]], cli_config: str = ""
) -> dict[str, Any]:
    """Write one module block per entry (name → (source, version)), init, apply, return outputs."""
    blocks = []
    for name, (source, version) in modules.items():
        blocks.append(f'module "{name}" {{\n  source  = "{source}"\n  version = "{version}"\n}}\n')
        blocks.append(f'output "{name}" {{\n  value = module.{name}\n}}\n')
    workdir.mkdir(parents=True)
    (workdir / "main.tf").write_text("".join(blocks))
    (workdir / "cli.tfrc").write_text(cli_config)
    env = {
        **os.environ,
        "SSL_CERT_FILE": str(registry.tls.ca_cert),
        "TF_CLI_CONFIG_FILE": str(workdir / "cli.tfrc"),
        "CHECKPOINT_DISABLE": "1",
        "TF_IN_AUTOMATION": "1",
        "TF_LOG": "trace",
        "TF_LOG_PATH": str(workdir / "terraform.log"),
    }
    for command in (
        ["init", "-input=false", "-no-color"],
        ["apply", "-auto-approve", "-input=false", "-no-color"],
    ):
        done = subprocess.run(
            ["terraform", *command],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert done.returncode == 0, f"terraform {command[0]} failed:\n{done.stdout}\n{done.stderr}"
    out = subprocess.run(
        ["terraform", "output", "-json"],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return {name: value["value"] for name, value in json.loads(out.stdout).items()}


def test_single_module_repository_through_an_archive(registry: Registry, tmp_path: Path) -> None:
    outputs = terraform(
        registry, tmp_path / "tf", {"m": (f"{registry.host}/infra/single/generic", "1.1.0")}
    )
    assert outputs["m"] == {"version": "1.1.0"}
    log = (tmp_path / "tf" / "terraform.log").read_text()
    assert "/v1/archives/infra/single/generic/" in log  # it came through gitreg's archive


def test_monorepo_module_with_a_sibling_through_an_archive(
    registry: Registry, tmp_path: Path
) -> None:
    outputs = terraform(
        registry, tmp_path / "tf", {"vpc": (f"{registry.host}/infra/vpc/generic", "1.0.0")}
    )
    assert outputs["vpc"] == {"version": "vpc-1.0.0", "name": "prod-vpc"}


def test_modules_in_git_mode(registry: Registry, tmp_path: Path) -> None:
    outputs = terraform(
        registry,
        tmp_path / "tf",
        {
            "dns": (f"{registry.host}/infra/dns/generic", "1.0.0"),
            "vpc": (
                f"{registry.host}/infra/vpcgit/generic",
                "0.9.0",
            ),  # with ../naming, from a git clone
        },
    )
    assert outputs["dns"] == {"version": "dns-1.0.0"}
    assert outputs["vpc"] == {"version": "vpc-0.9.0", "name": "prod-vpc"}
    assert "git::git://127.0.0.1" in (tmp_path / "tf" / "terraform.log").read_text()


def test_pessimistic_constraint_picks_the_newest_match(registry: Registry, tmp_path: Path) -> None:
    outputs = terraform(
        registry,
        tmp_path / "tf",
        {
            "minor": (f"{registry.host}/infra/single/generic", "~> 1.1"),
            "patch": (f"{registry.host}/infra/single/generic", "~> 1.1.0"),
        },
    )
    # ~> 1.1 is >= 1.1, < 2.0: 1.2.0, not 2.0.0 and not the prerelease 1.3.0-rc.1.
    assert outputs == {"minor": {"version": "1.2.0"}, "patch": {"version": "1.1.3"}}


def test_prerelease_chosen_by_exact_version(registry: Registry, tmp_path: Path) -> None:
    outputs = terraform(
        registry, tmp_path / "tf", {"rc": (f"{registry.host}/infra/single/generic", "1.3.0-rc.1")}
    )
    assert outputs["rc"] == {"version": "1.3.0-rc.1"}


def test_friendly_hostname_through_cli_config(registry: Registry, tmp_path: Path) -> None:
    cli = f'host "registry.example.test" {{\n  services = {{ "modules.v1" = "https://{registry.host}/v1/modules/" }}\n}}\n'
    outputs = terraform(
        registry,
        tmp_path / "tf",
        {"m": ("registry.example.test/infra/single/generic", "2.0.0")},
        cli,
    )
    assert outputs["m"] == {"version": "2.0.0"}


def test_pushed_tag_is_installable_after_a_refresh(registry: Registry, tmp_path: Path) -> None:
    single = GitRepo.existing(registry.root / "single")
    single.release("v2.1.0", module_files("2.1.0"))
    context = trusting(registry.tls.ca_cert)
    url = f"https://{registry.host}/v1/modules/infra/single/generic/versions"
    wait_until(  # refresh_interval is 1s here
        lambda: (
            {"version": "2.1.0"} in httpx.get(url, verify=context).json()["modules"][0]["versions"]
        ),
        60,
        "version 2.1.0 to be listed",
    )
    outputs = terraform(
        registry, tmp_path / "tf", {"m": (f"{registry.host}/infra/single/generic", "~> 2.0")}
    )
    assert outputs["m"] == {"version": "2.1.0"}


def test_an_exact_pin_on_a_just_pushed_tag_installs(tmp_path: Path, tls: TlsMaterial) -> None:
    """No webhook, no poll, no watch: `versions`, which Terraform asks first, checks the tags."""
    work = GitRepo(tmp_path / "work")
    work.release("v1.0.0", module_files("1.0.0"))
    bare = bare_clone(work.path, tmp_path / "server" / "org" / "repo.git")
    with git_daemon(tmp_path / "server") as base:
        (tmp_path / "registry.yaml").write_text(
            "cache_dir: cache\nrefresh_interval: 1h\nmodules:\n"
            f"  - {{namespace: org, name: repo, system: x, repo: '{base}/org/repo.git'}}\n"
        )
        catalog = load_catalog(tmp_path / "registry.yaml")
        # A longer wait for the check than the default 2 s, for a loaded test machine; still
        # under the 10 s after which Terraform gives up on a registry.
        server = RegistryServer(catalog, TlsFiles(tls.certfile, tls.keyfile), fresh_wait=8.0)
        with server:
            work.release("v1.1.0", module_files("1.1.0"))
            git(work.path, "push", "-q", str(bare), "refs/tags/v1.1.0")
            host = f"127.0.0.1:{server.port}"
            outputs = terraform(
                Registry(host, tls, tmp_path),
                tmp_path / "tf",
                {"m": (f"{host}/org/repo/x", "1.1.0")},
            )
    assert outputs["m"] == {"version": "1.1.0"}


def test_unknown_version_fails_init_cleanly(registry: Registry, tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="There is no available version of module"):
        terraform(
            registry, tmp_path / "tf", {"m": (f"{registry.host}/infra/single/generic", "9.0.0")}
        )


def test_the_readme_demo(tmp_path: Path) -> None:
    """`gitreg demo` on the bundled catalog serves the examples, and terraform installs them."""
    top = Path(__file__).resolve().parents[2]
    shutil.copy(top / "registry.yaml", tmp_path / "registry.yaml")
    shutil.copytree(top / "examples", tmp_path / "examples")
    port = free_port()
    process = start_gitreg(
        "demo", "--config", str(tmp_path / "registry.yaml"), "--listen", f"127.0.0.1:{port}"
    )
    try:
        ca = tmp_path / ".gitreg" / "demo-tls" / "ca.pem"
        wait_until(lambda: ca.exists() or process.poll() is not None, 60, "the demo's certificate")
        tls = TlsMaterial(ca, ca.with_name("server.pem"), ca.with_name("server.key"))
        _wait_ready(f"https://127.0.0.1:{port}/readyz", tls, process)
        outputs = terraform(
            Registry(f"127.0.0.1:{port}", tls, tmp_path),
            tmp_path / "tf",
            {
                "network": (f"127.0.0.1:{port}/examples/network/generic", "~> 1.0"),
                "greeting": (f"127.0.0.1:{port}/examples/greeting/generic", "~> 1.0"),
            },
        )
    finally:
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=30)
    assert outputs["network"] == {
        "version": "1.1.0",
        "vpc_name": "dev-vpc",
        "cidr_block": "10.0.0.0/16",
    }
    assert outputs["greeting"] == {"version": "1.1.0", "greeting": "Hello, world!"}
    assert f"export SSL_CERT_FILE={ca}" in output
    assert process.returncode == 0, output


def test_pinned_version_installs_the_same_code_after_its_tag_moves(
    registry: Registry, tmp_path: Path
) -> None:
    before = terraform(
        registry, tmp_path / "before", {"m": (f"{registry.host}/infra/single/generic", "1.0.0")}
    )
    assert before["m"] == {"version": "1.0.0"}
    context = trusting(registry.tls.ca_cert)
    location = httpx.get(
        f"https://{registry.host}/v1/modules/infra/single/generic/1.0.0/download", verify=context
    ).json()["location"]
    archive = httpx.get(f"https://{registry.host}{location}", verify=context).content

    single = GitRepo.existing(registry.root / "single")
    single.write(module_files("moved-under-users"))
    single.commit("rewrite history")
    single.tag("v1.0.0", force=True)

    def pinned() -> bool:
        report = httpx.get(f"https://{registry.host}/v1/status", verify=context).json()[
            "repositories"
        ]
        return any(
            c["tag"] == "v1.0.0" and c["action"] == "pinned"
            for r in report
            for c in r["tag_changes"]
        )

    wait_until(pinned, 60, "the moved tag to be noticed", step=0.2)
    after = terraform(
        registry, tmp_path / "after", {"m": (f"{registry.host}/infra/single/generic", "1.0.0")}
    )
    assert after["m"] == {"version": "1.0.0"}  # the published code, not the moved tag's
    again = httpx.get(
        f"https://{registry.host}/v1/modules/infra/single/generic/1.0.0/download", verify=context
    ).json()["location"]
    assert again == location
    assert httpx.get(f"https://{registry.host}{again}", verify=context).content == archive
