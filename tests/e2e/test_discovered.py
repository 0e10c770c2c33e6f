"""End to end: `gitreg serve` of a catalog that lists no module, only a folder source; the real
`terraform` installs a module it discovered by name, and one a monorepo declares in its
`.gitreg.yaml`."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from gitreg.process.tlscert import TlsMaterial
from tests.support.gitrepo import GitRepo, git, module_files
from tests.support.servers import answers, free_port, start_serve, wait_until
from tests.support.terraform_cli import needs_terraform, run_terraform
from tests.support.tls_clients import trusting

pytestmark = [pytest.mark.terraform, needs_terraform]


def test_terraform_installs_discovered_modules(tmp_path: Path, tls: TlsMaterial) -> None:
    srv = tmp_path / "srv"
    named = GitRepo(tmp_path / "work" / "terraform-aws-vpc-peering")
    named.release("v1.2.0", module_files("1.2.0"))
    git(
        tmp_path,
        "clone",
        "-q",
        "--bare",
        str(named.path),
        str(srv / "terraform-aws-vpc-peering.git"),
    )
    mono = GitRepo(srv / "platform")
    mono.write({".gitreg.yaml": "modules:\n  - {name: dns, system: generic, path: modules/dns}\n"})
    mono.release("v0.3.0", module_files("dns-0.3.0", "modules/dns"))
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\nsources:\n  - folder: {path: srv, namespace: acme, interval: 1s}\n"
    )
    port = free_port()
    with (tmp_path / "gitreg.log").open("w") as log:
        process = start_serve(tmp_path / "registry.yaml", port, tls, log)
        try:
            base = f"https://127.0.0.1:{port}"
            context = trusting(tls.ca_cert)
            wait_until(
                lambda: process.poll() is not None or answers(f"{base}/healthz", context), 60
            )
            assert process.poll() is None, (tmp_path / "gitreg.log").read_text()

            def served(address: str) -> bool:
                answer = httpx.get(f"{base}/v1/modules/{address}/versions", verify=context)
                return answer.status_code == 200

            wait_until(lambda: served("acme/vpc-peering/aws") and served("acme/dns/generic"), 60)
            work = tmp_path / "tf"
            work.mkdir()
            (work / "cli.tfrc").write_text("")
            host = f"127.0.0.1:{port}"
            (work / "main.tf").write_text(
                f'module "peering" {{\n  source  = "{host}/acme/vpc-peering/aws"\n'
                '  version = "1.2.0"\n}\n'
                f'module "dns" {{\n  source  = "{host}/acme/dns/generic"\n  version = "~> 0.3"\n}}\n'
                'output "peering" { value = module.peering.version }\n'
                'output "dns" { value = module.dns.version }\n'
            )
            for command in (("init", "-input=false"), ("apply", "-auto-approve", "-input=false")):
                done = run_terraform(work, tls.ca_cert, *command)
                assert done.returncode == 0, (
                    f"terraform {command[0]}:\n{done.stdout}\n{done.stderr}"
                )
            out = run_terraform(work, tls.ca_cert, "output", "-json")
            outputs = {name: o["value"] for name, o in json.loads(out.stdout).items()}
            assert outputs == {"peering": "1.2.0", "dns": "dns-0.3.0"}
        finally:
            process.terminate()
            assert process.wait(timeout=15) == 0, (tmp_path / "gitreg.log").read_text()
