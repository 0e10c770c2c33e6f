"""deploy/Containerfile, built here on a Debian base made by mmdebstrap and run with buildah's
chroot isolation: gitreg serves as its non-root user from the image's command, the real
`terraform init` installs a module through it, its health check answers, and SIGTERM stops it
with exit 0."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gitreg.process.tlscert import TlsMaterial
from tests.support import container_images as images
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import answers, bare_clone, free_port, git_daemon, wait_until
from tests.support.terraform_cli import needs_terraform, run_terraform
from tests.support.tls_clients import trusting

pytestmark = pytest.mark.container

REPO = Path(__file__).resolve().parents[2]
UID = 10001  # the image's gitreg user (deploy/Containerfile)


@pytest.fixture(scope="module")
def image() -> Iterator[str]:
    reason = images.unavailable()
    if reason:
        pytest.skip(reason)
    name = images.build_image(REPO, images.base_image(), images.wheelhouse(REPO))
    try:
        yield name
    finally:
        subprocess.run(["buildah", "rmi", name], capture_output=True, check=False)


@pytest.fixture(scope="module")
def config(image: str) -> dict[str, Any]:
    return images.image_config(image)


def test_the_image_runs_gitreg_serve_as_a_non_root_user(config: dict[str, Any]) -> None:
    assert config["User"] == "gitreg:gitreg"
    assert config["Entrypoint"] == ["/opt/gitreg/bin/gitreg"]
    assert config["Cmd"] == [
        "serve",
        "--config",
        "/etc/gitreg/registry.yaml",
        "--listen",
        "0.0.0.0:8443",
    ]
    assert config["StopSignal"] == "SIGTERM"
    assert list(config["ExposedPorts"]) == ["8443/tcp"]
    assert list(config["Volumes"]) == ["/var/lib/gitreg"]
    assert config["Healthcheck"]["Test"][0] == "CMD"  # exec form: no shell needed


def test_the_image_holds_git_and_ssh_and_its_user_owns_the_cache(image: str) -> None:
    script = "command -v git && command -v ssh && id -u && id -g && stat -c %u:%a /var/lib/gitreg"
    with images.working_container(image) as container:
        done = subprocess.run(
            images.run_command(container, ["sh", "-c", script]),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    git, ssh, uid, gid, cache = done.stdout.split()
    assert (git, ssh) == ("/usr/bin/git", "/usr/bin/ssh")
    assert (uid, gid, cache) == (str(UID), str(UID), f"{UID}:750")


def test_the_health_check_fails_when_nothing_answers(image: str, config: dict[str, Any]) -> None:
    url = f"http://127.0.0.1:{free_port()}/healthz"
    with images.working_container(image) as container:
        done = subprocess.run(
            images.run_command(
                container, config["Healthcheck"]["Test"][1:], env=(f"GITREG_HEALTHCHECK_URL={url}",)
            ),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 1
    assert "Connection refused" in done.stderr


@needs_terraform
def test_terraform_installs_a_module_from_the_container_which_stops_on_sigterm(
    image: str, config: dict[str, Any], tls: TlsMaterial, tmp_path: Path
) -> None:
    repo = GitRepo(tmp_path / "vpc")
    repo.release("v1.0.0", module_files("1.0.0"))
    repo.release("v1.1.0", module_files("1.1.0"))
    bare_clone(repo.path, tmp_path / "git-server" / "infra" / "vpc.git")

    # What a deployment mounts: the catalog, TLS files readable by the image's user (the key
    # only by it), and a cache volume it owns.
    etc = tmp_path / "etc"
    (etc / "tls").mkdir(parents=True)
    for source, name in ((tls.certfile, "server.pem"), (tls.keyfile, "server.key")):
        shutil.copyfile(source, etc / "tls" / name)
        os.chown(etc / "tls" / name, UID, UID)
    (etc / "tls" / "server.key").chmod(0o600)
    cache = tmp_path / "cache"
    cache.mkdir()
    os.chown(cache, UID, UID)
    port = free_port()

    with git_daemon(tmp_path / "git-server") as git_base:
        # tls/...: relative to the catalog's folder, /etc/gitreg (deploy/README.md).
        (etc / "registry.yaml").write_text(f"""
cache_dir: /var/lib/gitreg
tls: {{certfile: tls/server.pem, keyfile: tls/server.key}}
modules:
  - {{namespace: infra, name: vpc, system: generic, repo: "{git_base}/infra/vpc.git"}}
""")
        # The image's own command, on 127.0.0.1 rather than every address of this host.
        command = config["Entrypoint"] + config["Cmd"]
        command[command.index("--listen") + 1] = f"127.0.0.1:{port}"
        volumes = (
            f"{etc / 'registry.yaml'}:/etc/gitreg/registry.yaml:ro",
            f"{etc / 'tls'}:/etc/gitreg/tls:ro",
            f"{cache}:/var/lib/gitreg",
        )
        log_path = tmp_path / "gitreg.log"
        with (
            images.working_container(image) as container,
            log_path.open("w") as log,
        ):
            images.bind_instead_of_volume(container, "/var/lib/gitreg")
            process = subprocess.Popen(
                images.run_command(container, command, volumes),
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            try:
                _serve_and_install(process, port, tls, tmp_path, container, config)
                gitreg = _gitreg_process(process.pid, config["Entrypoint"][0])
                assert images.real_uid(gitreg) == UID
                os.kill(gitreg, signal.SIGTERM)
                assert process.wait(timeout=30) == 0, log_path.read_text()
            finally:
                if process.poll() is None:
                    process.kill()
                    process.wait(timeout=30)
    output = log_path.read_text()
    assert "serving on https://127.0.0.1" in output
    assert "gitreg.server: stopped" in output  # SIGTERM's way out (a poll may be cut after it)
    # What gitreg wrote in its volume is its user's.
    assert {path.stat().st_uid for path in cache.rglob("*")} == {UID}


def _serve_and_install(
    process: subprocess.Popen[bytes],
    port: int,
    tls: TlsMaterial,
    tmp_path: Path,
    container: str,
    config: dict[str, Any],
) -> None:
    context = trusting(tls.ca_cert)
    ready = f"https://127.0.0.1:{port}/readyz"
    wait_until(
        lambda: process.poll() is not None or answers(ready, context), 90, f"an answer on {ready}"
    )
    assert process.poll() is None, f"gitreg exited with {process.returncode}"

    # The image's health check, run in the container beside the server: plain HTTP fails on a
    # TLS port, then HTTPS answers.
    urls = f"http://127.0.0.1:{port}/healthz https://127.0.0.1:{port}/healthz"
    health = subprocess.run(
        images.run_command(
            container, config["Healthcheck"]["Test"][1:], env=(f"GITREG_HEALTHCHECK_URL={urls}",)
        ),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert health.returncode == 0, health.stderr

    workdir = tmp_path / "tf"
    workdir.mkdir()
    (workdir / "cli.tfrc").write_text("")
    (workdir / "main.tf").write_text(
        f'module "vpc" {{\n  source  = "127.0.0.1:{port}/infra/vpc/generic"\n'
        '  version = "~> 1.0"\n}\n'
        'output "version" {\n  value = module.vpc.version\n}\n'
    )
    for args in (("init", "-input=false"), ("apply", "-auto-approve", "-input=false")):
        done = run_terraform(workdir, tls.ca_cert, *args)
        assert done.returncode == 0, f"terraform {args[0]}:\n{done.stdout}\n{done.stderr}"
    assert 'version = "1.1.0"' in done.stdout
    assert "/v1/archives/infra/vpc/generic/" in (workdir / "tf.log").read_text()


def _gitreg_process(buildah_run: int, entrypoint: str) -> int:
    """The gitreg process that `buildah run` started (under its chroot helpers)."""
    found = []
    for pid in images.descendants(buildah_run):
        argv = images.command_line(pid)
        # python3 ENTRYPOINT ..., under buildah-chroot-exec ENTRYPOINT ...
        if argv[1:2] == [entrypoint] and not argv[0].startswith("buildah"):
            found.append(pid)
    assert len(found) == 1, f"gitreg processes under buildah run: {found}"
    return found[0]
