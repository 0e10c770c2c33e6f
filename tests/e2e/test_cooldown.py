"""The real terraform, against a registry whose newest version is pending under
`publish_when: {min_age}`: `init` installs the version before it; once the clock passes its
due time (no push), or once `gitreg approve` has approved it in approvals.yaml and the registry
read the file, `init -upgrade` installs the new one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitreg.catalog.load import load_catalog
from gitreg.catalog.settings import TlsFiles
from gitreg.process.tlscert import TlsMaterial
from tests.support.clock import Clock
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import RegistryServer, run_gitreg, wait_until
from tests.support.terraform_cli import needs_terraform, run_terraform

pytestmark = [pytest.mark.terraform, needs_terraform]

TAGGED = 1_700_000_000.0  # the tagger date of the helper's annotated tags
DAY = 86400.0


def _installed(work: Path, ca: Path, *init: str) -> str:
    for command in (("init", *init), ("apply", "-auto-approve")):
        done = run_terraform(work, ca, *command, "-input=false")
        assert done.returncode == 0, done.stdout + done.stderr
    output = run_terraform(work, ca, "output", "-json")
    return str(json.loads(output.stdout)["version"]["value"])


def _registry(tmp_path: Path) -> Path:
    repo = GitRepo(tmp_path / "vpc")
    repo.release("v1.0.0", module_files("1.0.0"))  # lightweight: first seen long ago
    repo.release("v1.1.0", module_files("1.1.0"), annotated=True)  # tagged at TAGGED
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\nmodules:\n"
        f"  - {{namespace: infra, name: vpc, system: aws, repo: {repo.path},\n"
        "     publish_when: {min_age: 2d}}\n"
    )
    return tmp_path / "registry.yaml"


def _module(work: Path, server: RegistryServer) -> None:
    work.mkdir()
    source = f"127.0.0.1:{server.port}/infra/vpc/aws"
    (work / "main.tf").write_text(
        f'module "vpc" {{\n  source  = "{source}"\n  version = ">= 1.0.0"\n}}\n'
        'output "version" {\n  value = module.vpc.version\n}\n'
    )


def _pending(server: RegistryServer) -> bool:
    entry = server.sync.snapshot.index.get("infra", "vpc", "aws")
    return entry is None or bool(entry.pending)


def test_terraform_installs_the_pending_version_only_once_due(
    tmp_path: Path, tls: TlsMaterial
) -> None:
    path = _registry(tmp_path)
    clock = Clock(TAGGED - 3 * DAY)
    catalog = load_catalog(path)
    tls_files = TlsFiles(tls.certfile, tls.keyfile)
    server = RegistryServer(catalog, tls=tls_files, refresh=True, clock=clock)
    server.state.background.cooldown_every = 0.05  # the timer's bound: the clock jumps
    clock.now = TAGGED + DAY  # v1.1.0 is a day old: pending for another day
    server.sync.refresh()
    work = tmp_path / "work"
    with server:
        _module(work, server)
        assert _installed(work, tls.ca_cert) == "1.0.0"
        entry = server.sync.snapshot.index.get("infra", "vpc", "aws")
        assert entry is not None and entry.pending[0].due == TAGGED + 2 * DAY
        clock.now = TAGGED + 2 * DAY
        wait_until(lambda: not _pending(server), what="v1.1.0 published by the timer")
        assert _installed(work, tls.ca_cert, "-upgrade") == "1.1.0"


def test_terraform_installs_an_approved_version_before_its_time(
    tmp_path: Path, tls: TlsMaterial
) -> None:
    path = _registry(tmp_path)
    clock = Clock(TAGGED - 3 * DAY)
    tls_files = TlsFiles(tls.certfile, tls.keyfile)
    server = RegistryServer(load_catalog(path), tls=tls_files, clock=clock)
    clock.now = TAGGED + DAY  # v1.1.0 pending for another day, and the clock stays here
    server.sync.refresh()
    work = tmp_path / "work"
    with server:
        _module(work, server)
        assert _installed(work, tls.ca_cert) == "1.0.0"
        done = run_gitreg("approve", "--config", str(path), "infra/vpc/aws", "1.1.0")
        assert done.returncode == 0, done.stderr
        assert server.reload()  # as the watcher or SIGHUP does once the file is deployed
        assert _installed(work, tls.ca_cert, "-upgrade") == "1.1.0"
