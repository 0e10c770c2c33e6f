"""README.md's own snippets, read from it and run: the quick start against `gitreg demo`, and the
hosted provider recipe (signing key, goreleaser's names and signature, the copy, terraform)."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from gitreg.tlscert import TlsMaterial
from tests.support.provider_releases import provider_zip
from tests.support.servers import answers, free_port, start_gitreg, start_serve, wait_until
from tests.support.terraform_cli import run_terraform

TOP = Path(__file__).resolve().parents[2]
README = (TOP / "README.md").read_text()

pytestmark = [
    pytest.mark.terraform,
    pytest.mark.skipif(
        shutil.which("terraform") is None, reason="the terraform binary is not on PATH"
    ),
]


def fenced(language: str, containing: str) -> str:
    """The one block of README.md fenced as `language` that holds `containing`."""
    blocks = re.findall(rf"^```{language}\n(.*?)^```$", README, re.MULTILINE | re.DOTALL)
    found = [b for b in blocks if containing in b]
    assert len(found) == 1, f"README.md has {len(found)} {language} blocks holding {containing!r}"
    return str(found[0])


def on_port(text: str, port: int) -> str:
    return text.replace("127.0.0.1:8443", f"127.0.0.1:{port}")


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[tuple[int, Path, str]]:
    """`gitreg demo` on a copy of the bundled catalog: its port, CA, and what it printed."""
    shutil.copy(TOP / "registry.yaml", tmp_path / "registry.yaml")
    shutil.copytree(TOP / "examples", tmp_path / "examples")
    port = free_port()
    printed = tmp_path / "demo.out"
    with printed.open("w") as out:
        process = start_gitreg(
            "demo",
            "--config",
            str(tmp_path / "registry.yaml"),
            "--listen",
            f"127.0.0.1:{port}",
            output=out,
        )
    ca = tmp_path / ".gitreg" / "demo-tls" / "ca.pem"
    try:
        wait_until(
            lambda: (
                process.poll() is not None
                or (ca.exists() and answers(f"https://127.0.0.1:{port}/readyz", _trust(ca)))
            ),
            60,
            "the demo serving",
        )
        assert process.poll() is None, printed.read_text()
        yield port, ca, printed.read_text()
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
    assert process.returncode == 0, printed.read_text()


def _trust(ca: Path) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(ca))


def test_the_quick_start(demo: tuple[int, Path, str], tmp_path: Path) -> None:
    port, ca, printed = demo
    workdir = tmp_path / "tf"
    workdir.mkdir()
    (workdir / "main.tf").write_text(on_port(fenced("hcl", 'module "network"'), port))
    (workdir / "cli.tfrc").write_text("")
    assert run_terraform(workdir, ca, "init", "-input=false").returncode == 0
    applied = run_terraform(workdir, ca, "apply", "-auto-approve", "-input=false")
    assert applied.returncode == 0, applied.stderr
    assert fenced("text", "Outputs:") in applied.stdout
    assert f"export SSL_CERT_FILE={ca}\n" in printed

    # The friendly name, through the CLI config host block the demo printed.
    block = re.search(r'^    host "registry\.example\.com" \{\n.*?^    \}\n', printed, re.M | re.S)
    assert block is not None, printed
    assert '"providers.v1" = ' in block[0] and '"modules.v1"   = ' in block[0]
    friendly = tmp_path / "friendly"
    friendly.mkdir()
    (friendly / "cli.tfrc").write_text(block[0])
    (friendly / "main.tf").write_text(
        'module "greeting" {\n  source  = "registry.example.com/examples/greeting/generic"\n'
        '  version = "~> 1.0"\n}\noutput "greeting" { value = module.greeting }\n'
    )
    assert run_terraform(friendly, ca, "init", "-input=false").returncode == 0
    applied = run_terraform(friendly, ca, "apply", "-auto-approve", "-input=false")
    assert '"greeting" = "Hello, world!"' in applied.stdout, applied.stderr


def render(template: str, fields: dict[str, str]) -> str:
    """goreleaser's `{{ .Field }}` templates, for the fields the README's configuration uses
    (goreleaser itself is not installed here)."""

    def field(match: re.Match[str]) -> str:
        return fields[match[1]]

    rendered = re.sub(r"\{\{\s*\.([A-Za-z_.]+)\s*\}\}", field, template)
    assert "{{" not in rendered, rendered
    return rendered


@pytest.mark.skipif(shutil.which("gpg") is None, reason="gpg is not on PATH")
def test_the_provider_recipe(tls: TlsMaterial, tmp_path: Path) -> None:
    env = {**os.environ, "GNUPGHOME": str(tmp_path / "gnupg")}
    (tmp_path / "gnupg").mkdir(mode=0o700)
    try:
        _provider_recipe(tls, tmp_path, env)
    finally:
        if shutil.which("gpgconf"):  # the agent gpg started for this GNUPGHOME
            subprocess.run(["gpgconf", "--kill", "gpg-agent"], env=env, check=False)


def _provider_recipe(tls: TlsMaterial, root: Path, env: dict[str, str]) -> None:
    # The signing key, made by the README's commands.
    subprocess.run(["bash", "-euc", fenced("sh", "--quick-gen-key")], cwd=root, env=env, check=True)
    assert (root / "keys" / "release.asc").stat().st_mode & 0o077 == 0
    listed = subprocess.run(
        ["gpg", "--list-secret-keys", "--with-colons", "releases@acme.example"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    fingerprint = next(line.split(":")[9] for line in listed.splitlines() if line[:4] == "fpr:")

    # A release as the README's goreleaser configuration names and signs it.
    config: dict[str, Any] = yaml.safe_load(fenced("yaml", "signs:"))
    version = "1.2.0"
    fields = {"ProjectName": config["project_name"], "Version": version}
    assert config["archives"][0]["formats"] == ["zip"]
    assert "extra_files" not in config["checksum"]  # SHA256SUMS lists the zips alone
    dist = root / "dist"
    dist.mkdir()
    binary = render(config["builds"][0]["binary"], fields)
    for goos in config["builds"][0]["goos"]:
        for goarch in config["builds"][0]["goarch"]:
            name = render(
                config["archives"][0]["name_template"], {**fields, "Os": goos, "Arch": goarch}
            )
            data = provider_zip("widget", version, f"{goos}_{goarch}")
            assert zipfile.ZipFile(io.BytesIO(data)).namelist() == [binary]
            (dist / f"{name}.zip").write_bytes(data)
    sums = dist / render(config["checksum"]["name_template"], fields)
    subprocess.run(
        f"sha256sum *.zip > {sums.name}", shell=True, cwd=dist, check=True
    )  # what goreleaser writes: "<hex>  <name>" lines
    sign = config["signs"][0]
    assert sign["artifacts"] == "checksum"
    args = [
        render(a, {"Env.GPG_FINGERPRINT": fingerprint})
        .replace("${signature}", f"{sums}.sig")
        .replace("${artifact}", str(sums))
        for a in sign["args"]
    ]
    subprocess.run(["gpg", *args], env=env, check=True, capture_output=True)
    manifest = config["release"]["extra_files"][0]
    (root / manifest["glob"]).write_text(fenced("json", "protocol_versions"))

    # Copied into the artifacts folder by the README's commands, and served.
    copy = fenced("sh", "cp dist/")
    assert f"version={version}\n" in copy
    subprocess.run(["bash", "-euc", copy], cwd=root, check=True)
    served = root / "releases" / "terraform-provider-widget" / version
    assert (served / render(manifest["name_template"], fields)).is_file()
    (root / "registry.yaml").write_text(
        "hostname: registry.example.com\ncache_dir: cache\n"
        "providers:\n  - {namespace: acme, type: widget, artifacts: releases/terraform-provider-widget}\n"
        "signing: {verify_keys: [keys/release.pub.asc]}\n"
    )
    port = free_port()
    log = (root / "gitreg.log").open("w")
    process = start_serve(root / "registry.yaml", port, tls, log)
    try:
        base = f"https://127.0.0.1:{port}"
        wait_until(
            lambda: process.poll() is not None or answers(f"{base}/readyz", _trust(tls.ca_cert)),
            60,
            "gitreg serving",
        )
        asked = httpx.URL(f"{base}/v1/providers/acme/widget/{version}/download/linux/amd64")
        download = httpx.get(asked, verify=_trust(tls.ca_cert)).json()
        assert (
            download["protocols"]
            == json.loads(fenced("json", "protocol_versions"))["metadata"]["protocol_versions"]
        )
        signature = httpx.get(
            asked.join(download["shasums_signature_url"]),
            verify=_trust(tls.ca_cert),
        ).content
        assert signature == Path(f"{sums}.sig").read_bytes()  # CI's own signature, as it is

        workdir = root / "tf"
        workdir.mkdir()
        (workdir / "main.tf").write_text(fenced("hcl", "required_providers"))
        (workdir / "cli.tfrc").write_text(
            on_port(fenced("hcl", 'host "registry.example.com"'), port)
        )
        done = run_terraform(workdir, tls.ca_cert, "init", "-input=false")
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"Installed registry.example.com/acme/widget v{version}" in done.stdout
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()
