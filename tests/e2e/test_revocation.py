"""End to end: the real `terraform init` against a version revoked after one token installed it.
That token still installs `version = "1.0.0"`; a token that never did is told no version matches,
and `~> 1.0` picks 1.1.0 for it; a revoked provider version is in init's warnings."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from gitreg.catalog.load import load_catalog
from gitreg.catalog.settings import TlsFiles
from gitreg.process.tlscert import TlsMaterial
from tests.support.revoked_registry import EARLY, LATE, REASON, write_revoked_registry
from tests.support.servers import RegistryServer
from tests.support.terraform_cli import needs_terraform, run_terraform

pytestmark = [pytest.mark.terraform, needs_terraform]


def init(
    workdir: Path, tls: TlsMaterial, host: str, token: str, version: str, provider: str = ""
) -> subprocess.CompletedProcess[str]:
    """`terraform init` of `team/vpc/aws` at `version` (and `provider`'s `team/widget` when
    given), in a new `workdir`, with `token`."""
    workdir.mkdir()
    (workdir / "cli.tfrc").write_text(f'credentials "{host}" {{\n  token = "{token}"\n}}\n')
    required = (
        "terraform {\n  required_providers {\n"
        f'    widget = {{ source = "{host}/team/widget", version = "{provider}" }}\n  }}\n}}\n'
        if provider
        else ""
    )
    (workdir / "main.tf").write_text(
        f'{required}module "vpc" {{\n  source  = "{host}/team/vpc/aws"\n'
        f'  version = "{version}"\n}}\n'
    )
    return run_terraform(workdir, tls.ca_cert, "init", "-input=false")


def installed(workdir: Path) -> str:
    modules = json.loads((workdir / ".terraform" / "modules" / "modules.json").read_text())
    return next(str(m["Version"]) for m in modules["Modules"] if m["Key"] == "vpc")


def test_a_revoked_version_installs_only_where_it_was_installed(
    tmp_path: Path, tls: TlsMaterial
) -> None:
    root = tmp_path / "registry"
    catalog = load_catalog(write_revoked_registry(root, revoked=False))
    with RegistryServer(catalog, TlsFiles(tls.certfile, tls.keyfile)) as server:
        host = f"127.0.0.1:{server.port}"
        before = init(tmp_path / "before", tls, host, EARLY, "1.0.0")
        assert before.returncode == 0, before.stdout + before.stderr
        write_revoked_registry(root, revoked=True)
        assert server.reload()

        again = init(tmp_path / "again", tls, host, EARLY, "1.0.0")
        assert again.returncode == 0, again.stdout + again.stderr
        assert installed(tmp_path / "again") == "1.0.0"

        refused = init(tmp_path / "refused", tls, host, LATE, "1.0.0")
        said = " ".join((refused.stdout + refused.stderr).split())  # terraform wraps its lines
        assert refused.returncode != 0
        assert "Unresolvable module version constraint" in said, said
        assert "which matches the given version constraint" in said

        later = init(tmp_path / "later", tls, host, LATE, "~> 1.0", provider="~> 1.0")
        said = " ".join((later.stdout + later.stderr).split())
        assert later.returncode == 0, said
        assert installed(tmp_path / "later") == "1.1.0"
        assert f"- Version 1.0.0 is revoked: {REASON}" in said
        assert 'version     = "1.1.0"' in (tmp_path / "later" / ".terraform.lock.hcl").read_text()
