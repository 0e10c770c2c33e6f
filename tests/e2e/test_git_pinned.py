"""A tag moved at the Git server changes nothing the real terraform installs from a
`download: git` module: it clones the commit gitreg published (a repository served over smart
HTTP on 127.0.0.1), for a module at the root and one in a folder (`//folder`). A commit that
history rewriting left unreachable fails the install with Git's own error."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from gitreg.catalog.settings import TlsFiles
from gitreg.process.tlscert import TlsMaterial
from tests.support.gitrepo import GitRepo, git, module_files
from tests.support.servers import RegistryServer, bare_clone, git_http_server
from tests.support.terraform_cli import needs_terraform, run_terraform
from tests.support.tls_clients import trusting

pytestmark = [pytest.mark.terraform, needs_terraform]

TAGS = ("v1.0.0", "vpc/v1.0.0")


def _move_tags(work: GitRepo, bare: Path, rewrite: bool = False) -> None:
    """Both tags moved to a new commit whose modules say `moved`, force-pushed to the server;
    with `rewrite`, the new commit replaces the published one (amended): no ref reaches it."""
    files = {**module_files("moved"), **module_files("moved", "vpc")}
    if rewrite:
        work.write(files)
        git(work.path, "commit", "-q", "-a", "--amend", "-m", "release 1.0.0, rewritten")
    else:
        work.release("moved", files)
    for tag in TAGS:
        work.tag(tag, force=True)
    git(work.path, "push", "-q", "--force", str(bare), "main", *(f"refs/tags/{t}" for t in TAGS))


def _installed(workdir: Path, tls: TlsMaterial, host: str) -> dict[str, object]:
    """`terraform init` and `apply` of the root module and the folder one; their outputs."""
    done = _init(workdir, tls, host)
    assert done.returncode == 0, f"terraform init:\n{done.stdout}\n{done.stderr}"
    done = run_terraform(workdir, tls.ca_cert, "apply", "-auto-approve", "-input=false")
    assert done.returncode == 0, f"terraform apply:\n{done.stdout}\n{done.stderr}"
    out = run_terraform(workdir, tls.ca_cert, "output", "-json")
    return {name: value["value"] for name, value in json.loads(out.stdout).items()}


def _init(workdir: Path, tls: TlsMaterial, host: str) -> subprocess.CompletedProcess[str]:
    workdir.mkdir()
    (workdir / "cli.tfrc").write_text("")
    (workdir / "main.tf").write_text(
        "".join(
            f'module "{name}" {{\n  source  = "{host}/infra/{name}/generic"\n'
            f'  version = "1.0.0"\n}}\noutput "{name}" {{ value = module.{name}.version }}\n'
            for name in ("root", "vpc")
        )
    )
    return run_terraform(workdir, tls.ca_cert, "init", "-input=false")


@contextmanager
def _published(root: Path, tls: TlsMaterial) -> Iterator[tuple[GitRepo, Path, str, RegistryServer]]:
    """Version 1.0.0 of `infra/root/generic` and of `infra/vpc/generic` (folder `vpc`), in a
    repository served over smart HTTP, read by gitreg; its work tree, bare repository, URL
    and the registry."""
    work = GitRepo(root / "work")
    work.write({**module_files("1.0.0"), **module_files("vpc-1.0.0", "vpc")})
    work.commit("release 1.0.0")
    for tag in TAGS:
        work.tag(tag)
    bare = bare_clone(work.path, root / "server" / "infra" / "modules.git")
    with git_http_server(root / "server") as base:
        url = f"{base}/infra/modules.git"
        (root / "registry.yaml").write_text(
            "cache_dir: cache\nrefresh_interval: 1h\nmodules:\n"
            f"  - {{namespace: infra, name: root, system: generic, repo: '{url}',"
            " download: git}\n"
            f"  - {{namespace: infra, name: vpc, system: generic, repo: '{url}', path: vpc,"
            " tags: 'vpc/v{version}', download: git}\n"
        )
        catalog = load_catalog(root / "registry.yaml")
        with RegistryServer(catalog, TlsFiles(tls.certfile, tls.keyfile)) as server:
            yield work, bare, url, server


def _pinned(server: RegistryServer) -> None:
    """gitreg sees the tags moved, and keeps serving their published commit."""
    server.sync.refresh(mechanism="poll")
    for name in ("root", "vpc"):
        entry = server.sync.snapshot.index.get("infra", name, "generic")
        assert entry is not None and [c.action for c in entry.changes] == ["pinned"]


def test_a_tag_moved_at_the_git_server_installs_the_published_commit(
    tmp_path: Path, tls: TlsMaterial
) -> None:
    with _published(tmp_path, tls) as (work, bare, url, server):
        published = git(work.path, "rev-parse", "HEAD")
        _move_tags(work, bare)
        _pinned(server)
        host = f"127.0.0.1:{server.port}"
        asked = httpx.get(
            f"https://{host}/v1/modules/infra/vpc/generic/1.0.0/download",
            verify=trusting(tls.ca_cert),
        )
        assert asked.headers["x-terraform-get"] == f"git::{url}//vpc?ref={published}"
        outputs = _installed(tmp_path / "tf", tls, host)
    # A clone of the moved tag would say "moved": the clone checked out the published commit.
    assert outputs == {"root": "1.0.0", "vpc": "vpc-1.0.0"}


def test_a_published_commit_no_ref_reaches_fails_the_install_loudly(
    tmp_path: Path, tls: TlsMaterial
) -> None:
    """History rewritten at the Git server: a clone no longer holds the published commit, so
    terraform stops with Git's error; it never installs the rewritten code."""
    with _published(tmp_path, tls) as (work, bare, _, server):
        _move_tags(work, bare, rewrite=True)
        _pinned(server)
        done = _init(tmp_path / "tf", tls, f"127.0.0.1:{server.port}")
    assert done.returncode != 0
    assert "reference is not a tree" in done.stderr, done.stderr
