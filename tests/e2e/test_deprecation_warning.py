"""The real terraform init prints a provider deprecation served by gitreg, and installs the
deprecated version all the same."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitreg.catalog.settings import TlsFiles
from gitreg.process.tlscert import TlsMaterial
from tests.support.deprecated_catalog import PROVIDER_REASON, deprecated_catalog
from tests.support.servers import RegistryServer
from tests.support.terraform_cli import needs_terraform, require_provider, run_terraform

pytestmark = [pytest.mark.terraform, needs_terraform]


def test_terraform_init_prints_the_deprecation_and_installs(
    tmp_path: Path, tls: TlsMaterial
) -> None:
    catalog = deprecated_catalog(tmp_path / "registry")
    work = tmp_path / "work"
    work.mkdir()
    with RegistryServer(catalog, tls=TlsFiles(tls.certfile, tls.keyfile)) as server:
        host = f"127.0.0.1:{server.port}"
        require_provider(work, f"{host}/infra/widget", "0.9.0")
        done = run_terraform(work, tls.ca_cert, "init")
    said = " ".join((done.stdout + done.stderr).split())  # terraform wraps its lines
    assert done.returncode == 0, said
    assert "Warning: Additional provider information from registry" in said
    assert f"- Version 0.9.0 is deprecated: {PROVIDER_REASON}" in said
    assert 'version     = "0.9.0"' in (work / ".terraform.lock.hcl").read_text()
