"""End to end: the real `terraform` verifies the archive a location names by its digest. It
installs a folder module through `….tar.gz//folder?checksum=sha256:…`; once the cached archive
is replaced on disk (no copy held in memory), `terraform init` fails with its own checksum
error and installs nothing, though the bytes it fetched are a valid module."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from gitreg.catalog.settings import TlsFiles
from gitreg.process.tlscert import TlsMaterial
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import RegistryServer
from tests.support.terraform_cli import needs_terraform, run_terraform
from tests.support.tls_clients import trusting

pytestmark = [pytest.mark.terraform, needs_terraform]


def _workdir(path: Path, host: str) -> Path:
    path.mkdir()
    (path / "cli.tfrc").write_text("")
    (path / "main.tf").write_text(
        f'module "net" {{\n  source  = "{host}/infra/net/generic"\n  version = "1.0.0"\n}}\n'
        'output "version" {\n  value = module.net.version\n}\n'
    )
    return path


def _tampered() -> bytes:
    """A valid .tar.gz of another module: what a changed cache or proxy could serve."""
    data = b'output "version" {\n  value = "tampered"\n}\n'
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        info = tarfile.TarInfo("modules/net/main.tf")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def test_a_replaced_cached_archive_is_refused_by_terraform_itself(
    tmp_path: Path, tls: TlsMaterial
) -> None:
    GitRepo(tmp_path / "repo").release("v1.0.0", module_files("1.0.0", "modules/net"))
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\narchives: {memory_budget: 0}\n"  # no copy held: each GET reads the file
        f"modules:\n  - {{namespace: infra, name: net, system: generic, repo: {tmp_path / 'repo'},"
        " path: modules/net}\n"
    )
    catalog = load_catalog(tmp_path / "registry.yaml")
    with RegistryServer(catalog, TlsFiles(tls.certfile, tls.keyfile)) as server:
        host = f"127.0.0.1:{server.port}"
        location = httpx.get(
            f"https://{host}/v1/modules/infra/net/generic/1.0.0/download",
            verify=trusting(tls.ca_cert),
        ).headers["x-terraform-get"]
        assert "//modules/net?checksum=sha256:" in location

        good = _workdir(tmp_path / "good", host)
        done = run_terraform(good, tls.ca_cert, "init", "-input=false")
        assert done.returncode == 0, done.stdout + done.stderr
        done = run_terraform(good, tls.ca_cert, "apply", "-auto-approve", "-input=false")
        assert done.returncode == 0 and 'version = "1.0.0"' in done.stdout, done.stdout
        # Fetched by go-getter with the checksum (verified before it unpacks), folder split off.
        log = (good / "tf.log").read_text()
        package = location.replace("//modules/net", "")
        assert f'net "https://{host}{package}" was downloaded' in log

        (cached,) = (tmp_path / "cache" / "archives").rglob("*.tar.gz")
        cached.write_bytes(_tampered())
        bad = _workdir(tmp_path / "bad", host)
        done = run_terraform(bad, tls.ca_cert, "init", "-input=false")
    assert done.returncode != 0
    assert "Checksums did not match" in done.stderr, done.stdout + done.stderr
    modules = bad / ".terraform" / "modules"
    assert not list(modules.rglob("*.tf")), "nothing of the tampered archive is installed"


def test_a_build_other_than_the_recorded_digest_is_a_503_terraform_installs_nothing(
    tmp_path: Path, tls: TlsMaterial
) -> None:
    """A replica whose build is not the bytes the ledger recorded (another zlib, a bug, a
    changed clone) answers 503 for them: terraform stops at the download, and installs nothing."""
    GitRepo(tmp_path / "repo").release("v1.0.0", module_files("1.0.0", "modules/net"))
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\narchives: {memory_budget: 0}\n"
        f"modules:\n  - {{namespace: infra, name: net, system: generic, repo: {tmp_path / 'repo'},"
        " path: modules/net}\n"
    )
    files = TlsFiles(tls.certfile, tls.keyfile)
    with RegistryServer(load_catalog(tmp_path / "registry.yaml"), files) as server:
        host = f"127.0.0.1:{server.port}"
        done = run_terraform(_workdir(tmp_path / "first", host), tls.ca_cert, "init")
        assert done.returncode == 0, done.stdout + done.stderr
    # Another build recorded first, as another replica would have: this one's bytes are not it.
    (digests,) = (tmp_path / "cache" / "ledgers").glob("*.digests.json")
    (name,) = json.loads(digests.read_text())
    digests.write_text(json.dumps({name: "0" * 64}))
    for built in (tmp_path / "cache" / "archives").rglob("*.tar.gz"):
        built.unlink()
    with RegistryServer(load_catalog(tmp_path / "registry.yaml"), files) as server:
        host = f"127.0.0.1:{server.port}"
        bad = _workdir(tmp_path / "bad", host)
        done = run_terraform(bad, tls.ca_cert, "init", "-input=false")
    assert done.returncode != 0
    assert "503" in done.stderr, done.stdout + done.stderr
    assert not list((bad / ".terraform" / "modules").rglob("*.tf")), "nothing is installed"
