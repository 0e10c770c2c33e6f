"""End to end: `gitreg serve` of a catalog that lists no module, only the page's GitLab source
(docs/sources.md, "Git servers"): a stand-in GitLab over HTTPS lists the group's projects, a real
`git http-backend` over HTTPS serves their clones to the token of the page's `credentials`
entry, and the real `terraform` installs, as archives, a module discovered by its name and one
a monorepo declares in its `.gitreg.yaml` (the page's own).

What the test changes in the page's block: the URLs and the CA's path, and a second
`credentials` entry that trusts the test CA for the forge's API, since the stand-in forge and
its Git server are two servers here where GitLab is one."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from gitreg.process.tlscert import TlsMaterial
from tests.support.forge_git import forge_git
from tests.support.forges import StandInForge
from tests.support.gitrepo import module_files
from tests.support.servers import GitHttpTap, answers, free_port, start_serve, wait_until
from tests.support.site_snippets import block, claimed
from tests.support.terraform_cli import needs_terraform, run_terraform
from tests.support.tls_clients import trusting

pytestmark = [pytest.mark.terraform, needs_terraform]

TOKEN = "glpat-e2e-s3cret"
PAGE = "sources.md"


def _catalog(page_block: str, forge_url: str, git_url: str, ca_file: Path) -> str:
    """The page's block, pointed at the stand-in forge and its Git server."""
    lines = []
    for line in page_block.splitlines():
        if line.strip().startswith("- {url: https://gitlab.example.com"):
            line = line.replace("https://gitlab.example.com", git_url)
            line = line.replace("/etc/gitreg/gitlab-ca.pem", str(ca_file))
            lines += [line, f"  - {{url: '{forge_url}', ca_file: '{ca_file}'}}"]
        elif line.strip().startswith("- gitlab:"):
            # Its clones on another server than its API: a forge serves both from one address.
            served = f", clone_hosts: ['{urlsplit(git_url).netloc}']}}"
            line = line.replace("https://gitlab.example.com", forge_url)
            lines.append(line.removesuffix("}") + served)
        else:
            lines.append(line.replace("https://gitlab.example.com", forge_url))
    return "\n".join(lines) + "\n"


def test_terraform_installs_modules_discovered_on_a_forge(
    tls: TlsMaterial, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITLAB_TOKEN", TOKEN)  # gitreg serve inherits it
    declaration = block(PAGE, "yaml", "name: network")  # the page's monorepo
    monorepo = {
        ".gitreg.yaml": declaration,
        **module_files("network-1.4.0", "modules/network"),
        **module_files("dns-0.1.0", "modules/dns"),
    }
    tap = GitHttpTap()
    with (
        claimed(PAGE, "test_terraform_installs_modules_discovered_on_a_forge") as page,
        forge_git(tmp_path, TOKEN, tls, tap) as served,
    ):
        listed = [
            served.publish(
                "platform/terraform/terraform-aws-vpc", [("v1.2.0", module_files("1.2.0"))]
            ),
            served.publish("platform/terraform/modules", [("network/v1.4.0", monorepo)]),
        ]
        with StandInForge("gitlab", listed, token=TOKEN, tls=tls) as forge:
            catalog = _catalog(page.take("yaml", "gitlab:"), forge.url, served.url, tls.ca_cert)
            assert "modules:" not in catalog
            (tmp_path / "registry.yaml").write_text("cache_dir: cache\n" + catalog)
            port = free_port()
            base = f"https://127.0.0.1:{port}"
            context = trusting(tls.ca_cert)
            with (tmp_path / "gitreg.log").open("w") as log:
                process = start_serve(tmp_path / "registry.yaml", port, tls, log)
                try:
                    wait_until(
                        lambda: process.poll() is not None or answers(f"{base}/healthz", context),
                        60,
                        "gitreg serving",
                    )
                    assert process.poll() is None, (tmp_path / "gitreg.log").read_text()

                    def served_module(address: str) -> bool:
                        url = f"{base}/v1/modules/{address}/versions"
                        return httpx.get(url, verify=context).status_code == 200

                    wait_until(
                        lambda: (
                            served_module("terraform/vpc/aws")
                            and served_module("terraform/network/aws")
                        ),
                        60,
                        "the discovered modules served",
                    )
                    workdir = tmp_path / "tf"
                    workdir.mkdir()
                    (workdir / "cli.tfrc").write_text("")
                    host = f"127.0.0.1:{port}"
                    (workdir / "main.tf").write_text(
                        f'module "vpc" {{\n  source  = "{host}/terraform/vpc/aws"\n'
                        '  version = "1.2.0"\n}\n'
                        f'module "network" {{\n  source  = "{host}/terraform/network/aws"\n'
                        '  version = "~> 1.4"\n}\n'
                        'output "vpc" { value = module.vpc.version }\n'
                        'output "network" { value = module.network.version }\n'
                    )
                    for command in (
                        ("init", "-input=false"),
                        ("apply", "-auto-approve", "-input=false"),
                    ):
                        done = run_terraform(workdir, tls.ca_cert, *command)
                        assert done.returncode == 0, (
                            f"terraform {command[0]}:\n{done.stdout}\n{done.stderr}"
                        )
                    out = run_terraform(workdir, tls.ca_cert, "output", "-json")
                    outputs = {name: o["value"] for name, o in json.loads(out.stdout).items()}
                    assert outputs == {"vpc": "1.2.0", "network": "network-1.4.0"}
                finally:
                    process.terminate()
                    assert process.wait(timeout=15) == 0, (tmp_path / "gitreg.log").read_text()
    # Archives gitreg built: terraform asked the Git server for nothing, only gitreg did.
    trace = (workdir / "tf.log").read_text()
    assert served.url not in trace
    for address in ("terraform/vpc/aws", "terraform/network/aws"):
        assert f"{base}/v1/archives/{address}/" in trace
    cloned = {r.split()[1].split(".git/")[0] for r in tap.requests}
    assert cloned == {"/platform/terraform/terraform-aws-vpc", "/platform/terraform/modules"}
    assert TOKEN not in (tmp_path / "gitreg.log").read_text()
