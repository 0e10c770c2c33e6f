"""A consumer's committed `.terraform/modules/modules.json`, as the real `terraform init` wrote
it against gitreg, decides the version its call is counted at: the deprecated 1.0.0 it
installed, not the 1.1.0 its constraint `~> 1.0` would pick today."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from gitreg.catalog.settings import TlsFiles
from gitreg.process.tlscert import TlsMaterial
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import RegistryServer, free_port, wait_until
from tests.support.terraform_cli import needs_terraform, run_terraform
from tests.support.tls_clients import trusting

pytestmark = [pytest.mark.terraform, needs_terraform]


def test_the_version_terraform_init_recorded_is_the_one_counted(
    tmp_path: Path, tls: TlsMaterial
) -> None:
    port = free_port()
    host = f"127.0.0.1:{port}"
    vpc = GitRepo(tmp_path / "vpc")
    vpc.release("v1.0.0", module_files("1.0.0"))
    live = GitRepo(tmp_path / "live")
    source = f"{host}/infra/vpc/generic"
    live.write(
        {"prod/main.tf": f'module "vpc" {{\n  source  = "{source}"\n  version = "1.0.0"\n}}\n'}
    )
    live.commit("first")
    (tmp_path / "registry.yaml").write_text(f"""
hostname: "{host}"
cache_dir: cache
mirror: {{read_through: false}}
modules:
  - {{namespace: infra, name: vpc, system: generic, repo: {vpc.path},
      deprecated: [{{versions: "< 1.1.0", reason: "take 1.1"}}]}}
consumers:
  - {{repo: {live.path}, namespace: infra, interval: 1s}}
""")
    catalog = load_catalog(tmp_path / "registry.yaml")
    with RegistryServer(catalog, tls=TlsFiles(tls.certfile, tls.keyfile), port=port) as server:
        done = run_terraform(live.path / "prod", tls.ca_cert, "init")
        assert done.returncode == 0, done.stdout + done.stderr
        recorded = live.path / "prod/.terraform/modules/modules.json"
        assert '"Version":"1.0.0"' in recorded.read_text().replace(" ", "")
        # Then 1.1.0 is released, and the constraint widened, without a new init.
        vpc.release("v1.1.0", module_files("1.1.0"))
        server.sync.refresh(fetch=True, mechanism="poll")
        live.write(
            {"prod/main.tf": f'module "vpc" {{\n  source  = "{source}"\n  version = "~> 1.0"\n}}\n'}
        )
        live.commit("widened, with what init recorded")
        with httpx.Client(base_url=server.url, verify=trusting(tls.ca_cert), timeout=20) as client:

            def counted() -> list[tuple[str, str, str]]:
                body = client.get("/v1/modules/infra/vpc/generic/dependents").json()
                return [(d["constraint"], d["via"], d["resolves_to"]) for d in body["dependents"]]

            wait_until(lambda: counted() == [("~> 1.0", "modules.json", "1.0.0")], 60)
            body = client.get("/v1/modules/infra/vpc/generic/dependents").json()
            assert body["dependents"][0]["deprecated"] == "take 1.1" and body["on_deprecated"] == 1
