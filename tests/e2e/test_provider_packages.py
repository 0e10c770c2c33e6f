"""The real terraform installs and locks a hosted provider whose download answers carry the
`packages` map (for OpenTofu 1.12) as it did without it: Terraform ignores the field. The lock
file holds what it held before: the installed platform's h1 and a zh for every SHA256SUMS line;
`terraform providers lock` adds each platform's h1; an init with that lock file passes."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from gitreg.catalog.load import load_catalog
from gitreg.process.tlscert import TlsMaterial
from gitreg.providers.hashes import zip_hashes
from tests.support.platform_releases import PLATFORMS, six_platform_registry
from tests.support.terraform_cli import needs_terraform, require_provider, run_terraform
from tests.support.tls_clients import served_over_tls

pytestmark = [pytest.mark.terraform, needs_terraform]


def _locked(work: Path) -> set[str]:
    return set(re.findall(r'"((?:h1|zh):[^"]+)"', (work / ".terraform.lock.hcl").read_text()))


def test_terraform_installs_and_locks_as_before(tmp_path: Path, tls: TlsMaterial) -> None:
    root = tmp_path / "registry"
    root.mkdir()
    catalog = load_catalog(six_platform_registry(root))
    work = tmp_path / "work"
    work.mkdir()
    with served_over_tls(catalog, tls) as (server, client):
        host = f"127.0.0.1:{server.port}"
        answer = client.get("/v1/providers/acme/widget/1.0.0/download/linux/amd64").json()
        assert set(answer["packages"]) == set(PLATFORMS)  # what Terraform is sent
        require_provider(work, f"{host}/acme/widget", "1.0.0")
        done = run_terraform(work, tls.ca_cert, "init")
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"- Installed {host}/acme/widget v1.0.0" in done.stdout
        zips = sorted((root / "widget" / "1.0.0").glob("*.zip"))
        zh = {f"zh:{zip_hashes(z).zh[3:]}" for z in zips}
        h1 = {z.name.split("_", 2)[2][:-4]: zip_hashes(z).h1 for z in zips}
        assert _locked(work) == zh | {h1["linux_amd64"]}  # as without `packages`

        platforms = [f"-platform={p}" for p in PLATFORMS]
        done = run_terraform(work, tls.ca_cert, "providers", "lock", *platforms)
        assert done.returncode == 0, done.stdout + done.stderr
        assert _locked(work) == zh | set(h1.values())

        shutil.rmtree(work / ".terraform")
        done = run_terraform(work, tls.ca_cert, "init")  # checked against the lock file
        assert done.returncode == 0, done.stdout + done.stderr
        assert _locked(work) == zh | set(h1.values())
