"""deploy/gitreg.service: systemd reads every line of it, `systemd-analyze security` rates its
sandbox 3.0 at most, the sandbox leaves gitreg what it needs (port 443, the cache, the network,
the system calls of git and ssh), and gitreg, git and ssh serve under its memory rule.

systemd is not PID 1 where these tests run, so the unit is not started: `systemd-analyze`
reads it offline, and the one setting a process can impose on itself,
MemoryDenyWriteExecute, is imposed with the kernel's own switch (PR_SET_MDWE)."""

from __future__ import annotations

import ctypes
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin

import httpx
import pytest

from gitreg.process.tlscert import TlsMaterial
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import (
    bare_clone,
    free_port,
    git_http_server,
    ssh_server,
    sshd_available,
    wait_until,
)
from tests.support.tls_clients import trusting

UNIT = Path(__file__).resolve().parents[2] / "deploy" / "gitreg.service"
INSTALLED = "/opt/gitreg/bin/gitreg"  # where the unit expects gitreg (docs/deploy.md)
MOST_EXPOSED = 3.0  # systemd-analyze's "OK" ends at 3.9; 3.0 leaves room for an added line
PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN = 65, 1  # linux/prctl.h, Linux 6.3 and later


def systemd_analyze() -> str:
    path = shutil.which("systemd-analyze")
    if path is None:
        pytest.skip("systemd-analyze is not on PATH (Debian: the package systemd)")
    return path


def service_settings() -> dict[str, list[str]]:
    """The [Service] section: each key with its values, in order (a key may repeat)."""
    settings: dict[str, list[str]] = {}
    section = ""
    for line in UNIT.read_text().splitlines():
        if line.startswith("["):
            section = line
        elif section == "[Service]" and "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            settings.setdefault(key, []).append(value)
    return settings


@pytest.fixture
def verifiable_unit(tmp_path: Path) -> Path:
    """A copy of the unit whose commands are this machine's gitreg: `verify` refuses a unit
    whose ExecStart is not an executable, and /opt/gitreg is the server's path, not ours."""
    gitreg = Path(sys.executable).parent / "gitreg"
    if not gitreg.is_file():
        pytest.skip(f"no gitreg script beside {sys.executable}: pip install the project")
    copy = tmp_path / UNIT.name
    copy.write_text(UNIT.read_text().replace(INSTALLED, str(gitreg)))
    return copy


def analyze_verify(unit: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [systemd_analyze(), "verify", str(unit)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_unit_runs_gitreg_from_where_the_guide_installs_it() -> None:
    settings = service_settings()
    assert settings["ExecStart"] == [f"{INSTALLED} serve --config /etc/gitreg/registry.yaml"]
    assert settings["ExecStartPre"] == [f"{INSTALLED} check --config /etc/gitreg/registry.yaml"]


def test_systemd_reads_every_line_of_the_unit(verifiable_unit: Path) -> None:
    done = analyze_verify(verifiable_unit)
    # An unknown key or a bad value is a warning on stderr, not a failure: hold both to none.
    assert (done.returncode, done.stderr) == (0, "")


def test_a_misspelt_setting_is_reported(verifiable_unit: Path) -> None:
    """The check above would catch a typo, which systemd would otherwise ignore in silence."""
    text = verifiable_unit.read_text()
    verifiable_unit.write_text(text.replace("ProtectSystem=strict", "ProtectSytem=strict"))
    assert "Unknown key 'ProtectSytem'" in analyze_verify(verifiable_unit).stderr


def test_the_sandbox_is_rated_ok() -> None:
    done = subprocess.run(
        [systemd_analyze(), "security", "--offline=yes", "--no-pager", str(UNIT)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    found = re.search(r"Overall exposure level for gitreg\.service: (\d+\.\d+) (\w+)", done.stdout)
    assert found is not None, done.stdout + done.stderr
    assert float(found[1]) <= MOST_EXPOSED, done.stdout
    assert found[2] == "OK"


def test_the_sandbox_leaves_gitreg_what_it_needs() -> None:
    s = service_settings()
    assert s["User"] == ["gitreg"]
    # listen: 0.0.0.0:443 as the user gitreg, and no other privilege
    assert s["CapabilityBoundingSet"] == s["AmbientCapabilities"] == ["CAP_NET_BIND_SERVICE"]
    # PrivateUsers would make that capability one of a user namespace: no port below 1024
    assert "PrivateUsers" not in s
    assert s["NoNewPrivileges"] == ["true"]
    # cache_dir (/var/lib/gitreg, also the user's HOME for git and ssh) is the one place written
    assert s["ProtectSystem"] == ["strict"]
    assert s["ReadWritePaths"] == ["/var/lib/gitreg"]
    assert s["StateDirectory"] == ["gitreg"]
    assert s["ProtectHome"] == ["true"]
    # gitreg reaches the Git servers (and origin registries) wherever they are
    assert not any(key.startswith("IPAddress") for key in s)
    assert "PrivateNetwork" not in s
    assert s["RestrictAddressFamilies"] == ["AF_INET AF_INET6 AF_UNIX"]
    # the calls of a network service, for gitreg and the git, git-remote-https and ssh it runs;
    # not @resources: gitreg lowers its background threads' priority with setpriority
    assert s["SystemCallFilter"] == ["@system-service", "~@privileged"]
    assert s["SystemCallErrorNumber"] == ["EPERM"]
    assert s["MemoryDenyWriteExecute"] == ["true"]


def refuse_exec_gain() -> str:
    """A Python program that turns on the kernel's MDWE for itself and what it executes, then
    runs its arguments: MemoryDenyWriteExecute's rule, without systemd."""
    return textwrap.dedent(
        f"""
        import ctypes, os, sys
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl({PR_SET_MDWE}, {PR_MDWE_REFUSE_EXEC_GAIN}, 0, 0, 0) != 0:
            sys.exit("PR_SET_MDWE: " + os.strerror(ctypes.get_errno()))
        os.execv(sys.argv[1], sys.argv[1:])
        """
    )


def under_mdwe(*command: str) -> list[str]:
    return [sys.executable, "-c", refuse_exec_gain(), *command]


@pytest.fixture(scope="module")
def mdwe() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    # PR_GET_MDWE (66) answers on kernels that have the switch; it changes nothing here
    if libc.prctl(66, 0, 0, 0, 0) < 0:
        pytest.skip("this kernel has no PR_SET_MDWE (Linux 6.3 or later)")
    # the rule holds across execve, so it binds git and ssh as systemd's does
    probe = (
        "import mmap; mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)"
    )
    refused = subprocess.run(
        under_mdwe(sys.executable, "-c", probe), capture_output=True, text=True, timeout=60
    )
    assert "PermissionError" in refused.stderr, refused.stderr


@pytest.fixture
def served_repositories(tmp_path: Path, tls: TlsMaterial) -> Iterator[str]:
    """A catalog of a module over HTTPS (git-remote-https, with a token and a CA) and, where
    sshd can run, one over SSH (a key and known_hosts): yields registry.yaml's text."""
    work = GitRepo(tmp_path / "work")
    work.release("v1.0.0", module_files("1.0.0"))
    root = tmp_path / "server"
    bare_clone(work.path, root / "infra" / "vpc.git")
    with git_http_server(root, token="https-token", tls=tls) as base:
        text = textwrap.dedent(
            f"""
            cache_dir: {tmp_path / "cache"}
            tls: {{certfile: {tls.certfile}, keyfile: {tls.keyfile}}}
            credentials:
              - {{url: "{base}/", token_env: GITREG_TEST_GIT_TOKEN, ca_file: {tls.ca_cert}}}
            modules:
              - {{namespace: infra, name: vpc, system: aws, repo: "{base}/infra/vpc.git"}}
            """
        )
        if not sshd_available():
            yield text
            return
        with ssh_server(tmp_path / "ssh") as ssh:
            yield text.replace(
                "modules:",
                f"  - {{url: '{ssh.url}/', ssh_key: {ssh.client_key},"
                f" known_hosts: {ssh.known_hosts}}}\nmodules:\n"
                f"  - {{namespace: infra, name: dns, system: aws,"
                f" repo: '{ssh.url}{root}/infra/vpc.git'}}",
            )


@pytest.mark.usefixtures("mdwe")
def test_gitreg_git_and_ssh_serve_under_memory_deny_write_execute(
    served_repositories: str, tmp_path: Path, tls: TlsMaterial, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MemoryDenyWriteExecute=true stops a program that maps memory writable and executable
    (a JIT): gitreg fetches over HTTPS and SSH, serves TLS and builds an archive without."""
    monkeypatch.setenv("GITREG_TEST_GIT_TOKEN", "https-token")
    config = tmp_path / "registry.yaml"
    config.write_text(served_repositories)
    gitreg = [sys.executable, "-m", "gitreg"]
    checked = subprocess.run(
        under_mdwe(*gitreg, "check", "--config", str(config)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    port = free_port()
    serve = under_mdwe(*gitreg, "serve", "--config", str(config), "--listen", f"127.0.0.1:{port}")
    log = tmp_path / "serve.log"
    with log.open("w") as output:
        process = subprocess.Popen(serve, stdout=output, stderr=subprocess.STDOUT)
    try:
        trusted = trusting(tls.ca_cert)
        with httpx.Client(base_url=f"https://127.0.0.1:{port}", verify=trusted) as client:

            def ready() -> bool:
                try:
                    return client.get("/readyz").status_code == 200
                except httpx.TransportError:
                    return False

            wait_until(ready, 60, "gitreg ready under MDWE")
            modules = ["vpc", "dns"] if "dns" in served_repositories else ["vpc"]
            for name in modules:
                download = client.get(f"/v1/modules/infra/{name}/aws/1.0.0/download")
                assert download.status_code == 200, download.text
                archive = client.get(urljoin(str(download.url), download.json()["location"]))
                assert archive.status_code == 200 and archive.content[:2] == b"\x1f\x8b"
    finally:
        process.terminate()
        process.wait(timeout=60)
    assert process.returncode == 0, log.read_text()
