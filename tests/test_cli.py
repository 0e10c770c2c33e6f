"""The `gitreg` command as a user runs it: a real process, its output and exit status."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from gitreg.tlscert import TlsMaterial
from tests.gitrepo import GitRepo, module_files
from tests.origin_server import ScriptedOrigin
from tests.provider_releases import new_key, write_key, write_release
from tests.servers import answers, free_port, start_gitreg, wait_until


def gitreg(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gitreg", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    mono = GitRepo(tmp_path / "mono")
    mono.release("vpc/v1.0.0", module_files("1.0.0", "modules/vpc"))
    mono.release("vpc/v1.1.0", module_files("1.1.0", "modules/vpc"), annotated=True)
    mono.tag("vpc/v1.2")
    mono.tag("vpc/v2.0.0", target="HEAD^{tree}")
    (tmp_path / "registry.yaml").write_text(
        "hostname: registry.example.com\ncache_dir: cache\nmodules:\n"
        "  - {namespace: infra, name: vpc, system: aws, repo: mono, path: modules/vpc, tags: 'vpc/v{version}'}\n"
    )
    return tmp_path / "registry.yaml"


def test_version() -> None:
    done = gitreg("--version")
    assert done.returncode == 0 and done.stdout.startswith("gitreg ")


def test_list(catalog: Path) -> None:
    done = gitreg("list", "--config", str(catalog))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "registry.example.com/infra/vpc/aws"
    assert lines[2].split()[:4] == ["1.1.0", "tag", "vpc/v1.1.0", "commit"]
    assert lines[3].split()[:3] == ["1.0.0", "tag", "vpc/v1.0.0"]
    assert "ignored tag vpc/v1.2: '1.2' is not a Semantic Version" in done.stdout
    assert "ignored tag vpc/v2.0.0: points at a tree or blob" in done.stdout
    offline = gitreg("list", "--offline", "--config", str(catalog))
    assert offline.stdout == done.stdout


def test_check_passes(catalog: Path) -> None:
    done = gitreg("check", "--config", str(catalog))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 modules, 0 providers, 0 problems" in done.stdout


def test_check_reports_problems_with_key_paths(catalog: Path, tmp_path: Path) -> None:
    with catalog.open("a") as f:
        f.write(
            f"  - {{namespace: infra, name: gone, system: aws, repo: 'http://127.0.0.1:{free_port()}/gone.git'}}\n"
        )
        f.write(
            "  - {namespace: infra, name: notags, system: aws, repo: mono, tags: 'release-{version}'}\n"
        )
    done = gitreg("check", "--config", str(catalog))
    assert done.returncode == 1
    assert "modules[1].repo: cannot reach" in done.stdout
    assert (
        "modules[2]: infra/notags/aws has no version (no tag fits release-{version})" in done.stdout
    )
    assert "3 modules, 0 providers, 2 problems" in done.stdout


@pytest.mark.parametrize("command", ["serve", "check", "list"])
def test_broken_catalog_is_refused_with_key_and_line(tmp_path: Path, command: str) -> None:
    (tmp_path / "registry.yaml").write_text(
        "modules:\n  - namespace: infra\n    name: vpc\n    system: aws\n    repo: x\n    tags: 'v1'\n    colour: red\n"
    )
    done = gitreg(command, "--config", str(tmp_path / "registry.yaml"))
    assert done.returncode == 2
    assert (
        "modules[0].tags (line 6): template 'v1' must contain {version} exactly once" in done.stderr
    )
    assert "modules[0].colour (line 7): unknown key" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_serve_plain_http_and_stop_on_signal(catalog: Path, sig: signal.Signals) -> None:
    port = free_port()
    process = start_gitreg("serve", "--config", str(catalog), "--listen", f"127.0.0.1:{port}")
    try:
        url = f"http://127.0.0.1:{port}/v1/modules/infra/vpc/aws/versions"
        wait_until(lambda: answers(url), 60, "gitreg serving")
        response = httpx.get(url)
        assert response.json()["modules"][0]["versions"][0] == {"version": "1.1.0"}
    finally:
        process.send_signal(sig)
        output, _ = process.communicate(timeout=30)
    assert process.returncode == 0, output
    assert output.count("Terraform only talks HTTPS") == 1
    assert "Traceback" not in output


def test_mismatched_tls_flags(catalog: Path) -> None:
    done = gitreg("serve", "--config", str(catalog), "--certfile", "x.pem")
    assert done.returncode == 2 and "go together" in done.stderr


def test_unwritable_cache_dir_is_refused(catalog: Path, tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("not a folder")
    catalog.write_text(catalog.read_text().replace("cache_dir: cache", "cache_dir: afile/cache"))
    done = gitreg("serve", "--config", str(catalog))
    assert done.returncode == 2
    assert "cache_dir: " in done.stderr and "is not a writable folder" in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--listen", "nonsense"], "--listen: 'nonsense' must be HOST:PORT"),
        (["--certfile", "absent.pem", "--keyfile", "absent.key"], "no such file"),
    ],
)
def test_bad_serve_flags(catalog: Path, args: list[str], message: str) -> None:
    done = gitreg("serve", "--config", str(catalog), *args)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


def test_list_shows_repository_state_and_moved_tags(catalog: Path, tmp_path: Path) -> None:
    first = gitreg("list", "--config", str(catalog))  # no mirror yet: list fetches it
    assert "repositories" in first.stdout and "by cli" in first.stdout
    mono = GitRepo.existing(tmp_path / "mono")
    mono.write(module_files("moved", "modules/vpc"))
    mono.commit("moved")
    mono.tag("vpc/v1.0.0", force=True)
    stale = gitreg("list", "--config", str(catalog))  # reads the mirror as it is: no change yet
    assert "! tag vpc/v1.0.0 moved" not in stale.stdout
    done = gitreg("list", "--fetch", "--config", str(catalog))
    assert done.returncode == 0, done.stderr
    assert "! tag vpc/v1.0.0 moved from" in done.stdout and "pinned" in done.stdout
    section = done.stdout.split("\nrepositories\n", 1)[1]
    assert f"  {tmp_path / 'mono'}" in section
    assert "last successful sync: 20" in section
    assert "infra/vpc/aws: moved tag vpc/v1.0.0, pinned" in section


def test_check_reports_broken_provider_releases(tmp_path: Path) -> None:
    key = new_key("gitreg")
    write_key(key, tmp_path / "gitreg.asc")
    write_release(tmp_path / "releases" / "1.0.0", "widget", "1.0.0", signer=key)
    broken = write_release(tmp_path / "releases" / "1.1.0", "widget", "1.1.0", signer=key)
    broken.unlink()
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\nsigning: {keys: [gitreg.asc]}\n"
        "providers:\n  - {namespace: acme, type: widget, artifacts: releases}\n"
    )
    done = gitreg("check", "--config", str(tmp_path / "registry.yaml"))
    assert done.returncode == 1
    assert (
        "providers[0].artifacts: acme/widget 1.1.0: terraform-provider-widget_1.1.0_SHA256SUMS is missing"
        in done.stdout
    )
    assert "0 modules, 1 providers, 1 problems" in done.stdout


def test_check_asks_each_mapped_origin_for_its_providers_service(
    tmp_path: Path, tls: TlsMaterial
) -> None:
    with ScriptedOrigin(tls) as origin:
        origin.json("/.well-known/terraform.json", {"providers.v1": "/v1/providers/"})
        (tmp_path / "registry.yaml").write_text(
            "cache_dir: cache\nmodules: []\n"
            f"mirror: {{origins: {{good.example.test: '{origin.url}', gone.example.test: 'https://127.0.0.1:9/'}}, ca_file: {tls.ca_cert}}}\n"
        )
        done = gitreg("check", "--config", str(tmp_path / "registry.yaml"))
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert [line.split(":")[0] for line in lines[:-1]] == ["mirror.origins.gone.example.test"]
    assert "127.0.0.1:9" in lines[0]
    assert lines[-1].endswith("0 modules, 0 providers, 1 problems")
