"""The real terraform installs, under `require_signed_tags`, the newest version whose tag's
signature verified: a newer tag signed by an unlisted key, or not signed, is no version."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitreg.catalog.load import load_catalog
from gitreg.catalog.settings import TlsFiles
from gitreg.process.tlscert import TlsMaterial
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import RegistryServer
from tests.support.tag_signing import allowed_signers, ssh_signer
from tests.support.terraform_cli import needs_terraform, run_terraform

pytestmark = [pytest.mark.terraform, needs_terraform]


def test_terraform_installs_the_newest_verified_version(tmp_path: Path, tls: TlsMaterial) -> None:
    alice, mallory = (
        ssh_signer(tmp_path / "ssh", "alice@example.com"),
        ssh_signer(tmp_path / "ssh", "m@x"),
    )
    repo = GitRepo(tmp_path / "vpc")
    for version, signer in (("1.0.0", alice), ("1.1.0", mallory), ("1.2.0", None)):
        repo.write(module_files(version)).commit()
        signer.sign(repo, f"v{version}") if signer else repo.tag(f"v{version}", annotated=True)
    allowed_signers(tmp_path / "allowed_signers", alice)
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\nmodules:\n"
        f"  - {{namespace: infra, name: vpc, system: aws, repo: {repo.path},\n"
        "     require_signed_tags: {allowed_signers: allowed_signers}}\n"
    )
    work = tmp_path / "work"
    work.mkdir()
    catalog = load_catalog(tmp_path / "registry.yaml")
    with RegistryServer(catalog, tls=TlsFiles(tls.certfile, tls.keyfile)) as server:
        source = f"127.0.0.1:{server.port}/infra/vpc/aws"
        (work / "cli.tfrc").write_text("")
        (work / "main.tf").write_text(
            f'module "vpc" {{\n  source  = "{source}"\n  version = ">= 1.0.0"\n}}\n'
            'output "version" {\n  value = module.vpc.version\n}\n'
        )
        for command in (("init",), ("apply", "-auto-approve")):
            done = run_terraform(work, tls.ca_cert, *command, "-input=false")
            assert done.returncode == 0, done.stdout + done.stderr
    output = run_terraform(work, tls.ca_cert, "output", "-json")
    assert json.loads(output.stdout)["version"]["value"] == "1.0.0"
