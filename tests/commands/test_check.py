"""`gitreg check` as a new user meets it, run as a process: what it says of the address `serve`
would listen on, of namespaces nothing opens, and of the provenance key."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitreg.attestations.keys import registry_key
from gitreg.catalog.settings import ProvenanceSettings
from tests.support.gitrepo import GitRepo, git, module_files
from tests.support.provenance_keys import private_key_file
from tests.support.servers import free_port
from tests.support.servers import run_gitreg as gitreg


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    """One module of a repository with one release; listening where nothing is."""
    GitRepo(tmp_path / "vpc").release("v1.0.0", module_files("1.0.0"))
    path = tmp_path / "registry.yaml"
    path.write_text(
        f"hostname: registry.example.com\ncache_dir: cache\nlisten: 127.0.0.1:{free_port()}\n"
        "modules:\n  - {namespace: infra, name: vpc, system: aws, repo: vpc}\n"
    )
    return path


@pytest.fixture
def taken() -> Iterator[int]:
    """A port of 127.0.0.1 a listening socket holds, as a demo left running does."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield int(holder.getsockname()[1])


def _listening_on(catalog: Path, port: int) -> None:
    lines = catalog.read_text().splitlines(keepends=True)
    catalog.write_text(
        "".join(f"listen: 127.0.0.1:{port}\n" if li.startswith("listen:") else li for li in lines)
    )


def test_a_taken_listen_address_is_a_problem_naming_the_key(catalog: Path, taken: int) -> None:
    _listening_on(catalog, taken)
    done = gitreg("check", "--config", str(catalog))
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines()[0] == (
        f"listen: cannot listen on 127.0.0.1:{taken}: address already in use"
        " (is gitreg serve, or the demo, running there already?)"
    )
    assert "1 modules, 0 providers, 1 problems" in done.stdout


def test_two_checks_at_once_share_the_address_a_server_would_take(catalog: Path) -> None:
    """A check's probe shares the port with other checks (parallel CI jobs), not with a server."""
    from gitreg.catalog.settings import Listen
    from gitreg.commands.check import _listen_problems

    listen = Listen("127.0.0.1", free_port())
    with socket.socket() as other_check:  # another check's probe, bound and listening
        other_check.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        other_check.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        other_check.bind((listen.host, listen.port))
        other_check.listen()
        assert _listen_problems(listen, "listen") == []
    with socket.socket() as server:  # a server, as Hypercorn and `serve` bind
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind((listen.host, listen.port))
        server.listen()
        (problem,) = _listen_problems(listen, "listen")
        assert "address already in use" in problem


def test_a_taken_listen_flag_is_a_problem_naming_the_flag(catalog: Path, taken: int) -> None:
    done = gitreg("check", "--config", str(catalog), "--listen", f"127.0.0.1:{taken}")
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"--listen: cannot listen on 127.0.0.1:{taken}: address already in use" in done.stdout


def test_the_address_is_let_go_at_once(catalog: Path) -> None:
    port = free_port()
    _listening_on(catalog, port)
    done = gitreg("check", "--config", str(catalog))
    assert done.returncode == 0, done.stdout + done.stderr
    with socket.socket() as after:  # serve, started next, binds it as check did
        after.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        after.bind(("127.0.0.1", port))
        after.listen()


LOGIN = """auth:
  tokens: [{name: idle, token_sha256: "%s"}]
  oidc:
    - {name: ci, issuer: "https://127.0.0.1:9", audience: gitreg, read: ["ci-*"]}
  login:
    issuer: "https://127.0.0.1:9"
    client_id: gitreg
    claims: [{match: {groups: platform}, read: [infra]}]
""" % ("0" * 64)


def test_claim_rules_open_namespaces_as_tokens_do(catalog: Path) -> None:
    with catalog.open("a") as f:
        f.write("  - {namespace: ci-tools, name: vpc, system: aws, repo: vpc}\n")
        f.write("  - {namespace: nobody, name: vpc, system: aws, repo: vpc}\n")
        f.write(LOGIN)
    done = gitreg("check", "--config", str(catalog))
    warned = [line for line in done.stdout.splitlines() if "opens namespace" in line]
    assert warned == [
        "warning: auth: nothing opens namespace 'nobody': no token reads it, no claim rule of"
        " auth.oidc or auth.login does, and it is not public"
    ], done.stdout


def test_a_folder_missing_at_the_tags_commit_is_named(tmp_path: Path, catalog: Path) -> None:
    repo = GitRepo.existing(tmp_path / "vpc")
    first = git(repo.path, "rev-parse", "v1.0.0^{commit}")
    commit = repo.release("v1.1.0", module_files("1.1.0"))
    with catalog.open("a") as f:
        f.write("  - {namespace: infra, name: nope, system: aws, repo: vpc, path: modules/nope}\n")
    checked = gitreg("check", "--config", str(catalog))
    listed = gitreg("list", "--config", str(catalog))
    assert checked.returncode == 1, checked.stdout + checked.stderr
    reason = f"commit {commit[:12]} has no folder modules/nope"
    problem = [line for line in checked.stdout.splitlines() if line.startswith("modules[1]")]
    assert problem == [
        f"modules[1]: infra/nope/aws has no version: tag v1.0.0: commit {first[:12]} has no"
        f" folder modules/nope; tag v1.1.0: {reason}"
    ]
    assert f"  ignored tag v1.1.0: {reason}" in listed.stdout  # list says it the same way


def test_tags_that_fit_but_for_letter_case_are_named(tmp_path: Path, catalog: Path) -> None:
    repo = GitRepo.existing(tmp_path / "vpc")
    for version in ("2.0.0", "2.1.0", "2.2.0", "2.3.0"):
        repo.release(f"V{version}", module_files(version))
    repo.tag("nightly")
    checked = gitreg("check", "--config", str(catalog))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert (
        "warning: modules[0]: infra/vpc/aws: 4 tags fit v{version}, {version} but for letter"
        " case, and release nothing: V2.0.0, V2.1.0, V2.2.0 and 1 more"
    ) in checked.stdout
    listed = gitreg("list", "--config", str(catalog))
    assert (
        "  (5 other tags fit none of v{version}, {version}: V2.0.0, V2.1.0, V2.2.0 and 2 more)"
    ) in listed.stdout.splitlines()


def test_a_module_without_a_version_names_the_tags_that_fit_nothing(catalog: Path) -> None:
    text = catalog.read_text().replace("repo: vpc}", "repo: vpc, tags: 'release-{version}'}")
    catalog.write_text(text)
    checked = gitreg("check", "--config", str(catalog))
    assert checked.returncode == 1
    assert (
        "modules[0]: infra/vpc/aws has no version: no tag fits release-{version} (1 other tag"
        " fits none of release-{version}: v1.0.0)"
    ) in checked.stdout


def _folder_source(tmp_path: Path, glob: str = "") -> Path:
    """Repositories one level further down than the default glob `*` looks."""
    for team in ("net", "dns"):
        if not (repo := tmp_path / "srv" / team / f"terraform-aws-{team}").exists():
            GitRepo(repo).release("v1.0.0", module_files("1.0.0"))
    (tmp_path / "srv" / "README").write_text("not a folder\n")
    glob_key = f", glob: '{glob}'" if glob else ""
    path = tmp_path / "registry.yaml"
    path.write_text(
        f"cache_dir: cache\nlisten: 127.0.0.1:{free_port()}\nmodules: []\nsources:\n"
        f"  - folder: {{path: srv, namespace: local{glob_key}}}\n"
    )
    return path


def test_a_folder_source_that_finds_no_repository_is_a_problem(tmp_path: Path) -> None:
    done = gitreg("check", "--config", str(_folder_source(tmp_path)))
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines()[0] == (
        f"sources[0] (line 5): folder {tmp_path / 'srv'} holds no Git repository where glob '*'"
        " looks: it matched 2 directories, none a Git repository: for repositories further"
        " down, write a deeper glob (*/* or **/*.git)"
    )
    deeper = gitreg("check", "--config", str(_folder_source(tmp_path, "*/*")))
    assert deeper.returncode == 0, deeper.stdout + deeper.stderr
    assert "2 modules, 0 providers, 0 problems" in deeper.stdout


def test_check_says_provenance_is_signed_and_with_which_key(catalog: Path) -> None:
    key = private_key_file(catalog.parent / "provenance.pem")
    catalog.write_text(catalog.read_text() + f"provenance: {{key: {key}}}\n")
    done = gitreg("check", "--config", str(catalog))
    assert done.returncode == 0, done.stdout + done.stderr
    (line,) = [x for x in done.stdout.splitlines() if x.startswith("provenance.key:")]
    keyid = registry_key(ProvenanceSettings(key)).keyid
    assert line == (
        f"provenance.key: each version's provenance is signed (ed25519, key id {keyid};"
        " its public key at /v1/provenance/key.pem)"
    )
