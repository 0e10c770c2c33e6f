"""End to end: the real `terraform init` against gitreg over TLS, each install counted once,
under the principal its token names (anonymous without one) and `terraform 1.11.4`."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitreg.catalog.load import load_catalog
from gitreg.catalog.settings import TlsFiles
from gitreg.process.tlscert import TlsMaterial
from gitreg.state.download_counts import PrincipalCount, today
from tests.support.counted_registry import READER, write_counted_registry
from tests.support.servers import RegistryServer
from tests.support.terraform_cli import needs_terraform, run_terraform

pytestmark = [pytest.mark.terraform, needs_terraform]


def init(workdir: Path, tls: TlsMaterial, source: str, cli_config: str = "") -> None:
    workdir.mkdir()
    (workdir / "cli.tfrc").write_text(cli_config)
    (workdir / "main.tf").write_text(
        f'module "m" {{\n  source  = "{source}"\n  version = "1.0.0"\n}}\n'
        'output "version" {\n  value = module.m.version\n}\n'
    )
    done = run_terraform(workdir, tls.ca_cert, "init", "-input=false")
    assert done.returncode == 0, done.stdout + done.stderr


def test_each_terraform_init_is_counted_once(tmp_path: Path, tls: TlsMaterial) -> None:
    catalog = load_catalog(write_counted_registry(tmp_path / "registry"))
    with RegistryServer(catalog, TlsFiles(tls.certfile, tls.keyfile)) as server:
        host = f"127.0.0.1:{server.port}"
        init(tmp_path / "first", tls, f"{host}/open/single/generic")
        init(tmp_path / "second", tls, f"{host}/open/single/generic")
        token = f'credentials "{host}" {{\n  token = "{READER}"\n}}\n'
        init(tmp_path / "private", tls, f"{host}/secret/single/generic", token)
        server.state.downloads.write()
        store = server.state.downloads.store
        day = today()
        assert store.principals("module", "open/single/generic") == [
            PrincipalCount("anonymous", "1.0.0", "terraform", "1.11.4", 2, day)
        ]
        assert store.principals("module", "secret/single/generic") == [
            PrincipalCount("reader", "1.0.0", "terraform", "1.11.4", 1, day)
        ]
