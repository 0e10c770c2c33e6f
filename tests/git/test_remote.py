"""Fetching from real Git servers on 127.0.0.1: git daemon (git://) and smart HTTP (git http-backend)."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import tarfile
from pathlib import Path

import pytest

from gitreg.git.git_command import CREDENTIALS_WANTED
from gitreg.modules.archive_cache import ArchiveCache, ArchiveKey
from gitreg.modules.sync import ModuleSync
from gitreg.process.tlscert import TlsMaterial
from tests.conftest import WriteCatalog, require
from tests.support.gitrepo import GitRepo, git, module_files
from tests.support.servers import (
    bare_clone,
    git_daemon,
    git_http_server,
    ssh_server,
    sshd_available,
)


@pytest.fixture
def served_root(tmp_path: Path) -> tuple[GitRepo, Path]:
    """A work repository and the server-side root holding its bare copy as infra/mono.git."""
    work = GitRepo(tmp_path / "work")
    work.write(module_files("naming", "modules/naming"))
    work.release("vpc/v1.0.0", module_files("vpc-1.0.0", "modules/vpc"))
    work.release("vpc/v1.1.0", module_files("vpc-1.1.0", "modules/vpc"), annotated=True)
    root = tmp_path / "server"
    bare_clone(work.path, root / "infra" / "mono.git")
    return work, root


def _module(url: str) -> str:
    return f'  - {{namespace: infra, name: vpc, system: aws, repo: "{url}", path: modules/vpc, tags: "vpc/v{{version}}"}}\n'


def _versions(sync: ModuleSync) -> list[str]:
    entry = sync.snapshot.index.get("infra", "vpc", "aws")
    assert entry is not None
    return [r.version for r in entry.versions.releases]


def test_git_daemon(served_root: tuple[GitRepo, Path], write_catalog: WriteCatalog) -> None:
    require("git")
    work, root = served_root
    with git_daemon(root) as base:
        sync = ModuleSync(write_catalog(f"modules:\n{_module(f'{base}/infra/mono.git')}"))
        sync.refresh()
        assert _versions(sync) == ["1.1.0", "1.0.0"]
        # A tag pushed to the server appears on the next refresh.
        work.release("vpc/v1.2.0", module_files("vpc-1.2.0", "modules/vpc"))
        git(work.path, "push", "-q", str(root / "infra" / "mono.git"), "--tags")
        sync.refresh()
        assert _versions(sync) == ["1.2.0", "1.1.0", "1.0.0"]
    entry = sync.snapshot.index.get("infra", "vpc", "aws")
    assert entry is not None
    release = entry.by_version["1.2.0"]
    path = asyncio.run(
        ArchiveCache(sync.snapshot.catalog.cache_dir).get(
            entry.clone_path, ArchiveKey(release.commit)
        )
    )
    with tarfile.open(path, "r:gz") as tar:
        main = tar.extractfile("modules/vpc/main.tf")
        assert main is not None and b"vpc-1.2.0" in main.read()
        assert "modules/naming/main.tf" in tar.getnames()


def test_smart_http_with_token(
    served_root: tuple[GitRepo, Path],
    write_catalog: WriteCatalog,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    _, root = served_root
    secret = "s3cret-t0ken-value"
    with git_http_server(root, token=secret) as base:
        text = f'credentials:\n  - {{url: "{base}/", token_env: GITREG_TEST_GIT_TOKEN}}\nmodules:\n{_module(f"{base}/infra/mono.git")}'
        monkeypatch.setenv("GITREG_TEST_GIT_TOKEN", secret)
        sync = ModuleSync(write_catalog(text))
        sync.refresh()
        assert _versions(sync) == ["1.1.0", "1.0.0"]

        monkeypatch.setenv("GITREG_TEST_GIT_TOKEN", "wrong-token")
        caplog.set_level(logging.DEBUG)
        sync.refresh()
        assert _versions(sync) == ["1.1.0", "1.0.0"]  # the last good versions keep serving
        status = sync.status[next(iter(sync.snapshot.clones))]
        assert status.last_error and "fetch from" in status.last_error
        assert CREDENTIALS_WANTED in status.last_error  # not git's "could not read Username"
        assert "wrong-token" not in caplog.text and secret not in caplog.text
        assert "wrong-token" not in status.last_error


def test_smart_http_without_credentials_is_refused(
    served_root: tuple[GitRepo, Path], write_catalog: WriteCatalog
) -> None:
    _, root = served_root
    with git_http_server(root, token="needed") as base:
        sync = ModuleSync(write_catalog(f"modules:\n{_module(f'{base}/infra/mono.git')}"))
        sync.refresh()
    assert _versions(sync) == []
    status = sync.status[next(iter(sync.snapshot.clones))]
    assert status.last_error and "fetch from" in status.last_error
    assert CREDENTIALS_WANTED in status.last_error


def test_server_going_away_keeps_versions(
    served_root: tuple[GitRepo, Path], write_catalog: WriteCatalog
) -> None:
    _, root = served_root
    with git_http_server(root) as base:
        sync = ModuleSync(
            write_catalog(f"fetch_timeout: 20s\nmodules:\n{_module(f'{base}/infra/mono.git')}")
        )
        sync.refresh()
    sync.refresh()  # the server is gone now
    assert _versions(sync) == ["1.1.0", "1.0.0"]
    assert sync.status[next(iter(sync.snapshot.clones))].last_error


def test_ls_remote_reaches_the_server(
    served_root: tuple[GitRepo, Path], write_catalog: WriteCatalog
) -> None:
    _, root = served_root
    with git_daemon(root) as base:
        sync = ModuleSync(write_catalog(f"modules:\n{_module(f'{base}/infra/mono.git')}"))
        tags = next(iter(sync.snapshot.clones.values())).remote_tags()
    assert {"refs/tags/vpc/v1.0.0", "refs/tags/vpc/v1.1.0", "refs/tags/vpc/v1.1.0^{}"} <= set(tags)


@pytest.mark.skipif(
    not sshd_available(), reason="needs OpenSSH's sshd (Debian: openssh-server) and root to run it"
)
def test_ssh_with_key_and_known_hosts(
    served_root: tuple[GitRepo, Path], write_catalog: WriteCatalog, tmp_path: Path
) -> None:
    _, root = served_root
    with ssh_server(tmp_path / "ssh") as ssh:
        url = f"{ssh.url}{root}/infra/mono.git"
        credentials = f'credentials:\n  - {{url: "{ssh.url}/", ssh_key: {ssh.client_key}, known_hosts: {ssh.known_hosts}}}\n'
        sync = ModuleSync(write_catalog(f"{credentials}modules:\n{_module(url)}"))
        sync.refresh()
        assert _versions(sync) == ["1.1.0", "1.0.0"]

        # A host key that does not match known_hosts is refused, as it must be.
        other = tmp_path / "other_host_key"
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True
        )
        kind, key = other.with_suffix(".pub").read_text().split()[:2]
        ssh.known_hosts.write_text(f"[127.0.0.1]:{url.split(':')[2].split('/')[0]} {kind} {key}\n")
        sync.refresh()
        status = sync.status[next(iter(sync.snapshot.clones))]
        assert status.last_error and "fetch from" in status.last_error
        assert _versions(sync) == ["1.1.0", "1.0.0"]  # still the last good versions


def test_https_with_token_and_ca_file(
    served_root: tuple[GitRepo, Path],
    write_catalog: WriteCatalog,
    monkeypatch: pytest.MonkeyPatch,
    tls: TlsMaterial,
) -> None:
    _, root = served_root
    monkeypatch.setenv("GITREG_TEST_GIT_TOKEN", "https-token")
    with git_http_server(root, token="https-token", tls=tls) as base:
        assert base.startswith("https://")
        module = _module(f"{base}/infra/mono.git")
        trusted = f'credentials:\n  - {{url: "{base}/", token_env: GITREG_TEST_GIT_TOKEN, ca_file: {tls.ca_cert}}}\n'
        sync = ModuleSync(write_catalog(f"{trusted}modules:\n{module}"))
        sync.refresh()
        assert _versions(sync) == ["1.1.0", "1.0.0"]
        # Without the CA, the server's certificate is not trusted and nothing is fetched.
        untrusted = ModuleSync(
            write_catalog(
                f"cache_dir: other\n{trusted.replace(f', ca_file: {tls.ca_cert}', '')}modules:\n{module}"
            )
        )
        untrusted.refresh()
        assert _versions(untrusted) == []
        error = untrusted.status[next(iter(untrusted.snapshot.clones))].last_error or ""
        assert "certificate" in error.lower() or "ssl" in error.lower(), error
