"""The site's hosted provider recipe (docs/providers.md), read from it and run: the signing key
made by its commands, a release named and signed as its goreleaser configuration says, copied by
its commands, served from its catalog sections, and installed by the real terraform from
providers.v1 and through the network mirror.

What the test changes in the page's blocks: 127.0.0.1:8443 and the mirror's registry.example.com
become the port it serves on; goreleaser itself is not installed here, so its templates are
rendered by the test."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from gitreg.process.tlscert import TlsMaterial
from tests.support.provider_releases import provider_zip
from tests.support.servers import answers, free_port, start_serve, wait_until
from tests.support.site_snippets import Claimed, claimed, on_port
from tests.support.terraform_cli import needs_terraform, run_terraform
from tests.support.tls_clients import trusting

pytestmark = [pytest.mark.terraform, needs_terraform]

PAGE = "providers.md"


def render(template: str, fields: dict[str, str]) -> str:
    """goreleaser's `{{ .Field }}` templates, for the fields the page's configuration uses
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
        with claimed(PAGE, "test_the_provider_recipe") as page:
            _provider_recipe(page, tls, tmp_path, env)
    finally:
        if shutil.which("gpgconf"):  # the agent gpg started for this GNUPGHOME
            subprocess.run(["gpgconf", "--kill", "gpg-agent"], env=env, check=False)


def _provider_recipe(page: Claimed, tls: TlsMaterial, root: Path, env: dict[str, str]) -> None:
    # The signing key, made by the page's commands.
    subprocess.run(
        ["bash", "-euc", page.take("sh", "--quick-gen-key")], cwd=root, env=env, check=True
    )
    assert (root / "keys" / "release.asc").stat().st_mode & 0o077 == 0
    listed = subprocess.run(
        ["gpg", "--list-secret-keys", "--with-colons", "releases@acme.example"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    fingerprint = next(line.split(":")[9] for line in listed.splitlines() if line[:4] == "fpr:")

    # A release as the page's goreleaser configuration names and signs it.
    config: dict[str, Any] = yaml.safe_load(page.take("yaml", "signs:"))
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
    manifest_json = page.take("json", "protocol_versions")
    (root / manifest["glob"]).write_text(manifest_json)

    # Copied into the artifacts folder by the page's commands, and served by its catalog.
    copy = page.take("sh", "cp dist/")
    assert f"version={version}\n" in copy
    subprocess.run(["bash", "-euc", copy], cwd=root, check=True)
    served = root / "releases" / "terraform-provider-widget" / version
    assert (served / render(manifest["name_template"], fields)).is_file()
    (root / "mirror").mkdir()  # the folder `terraform providers mirror` would write
    (root / "registry.yaml").write_text(
        "hostname: registry.example.com\ncache_dir: cache\n"
        + page.take("yaml", "providers:")
        + page.take("yaml", "mirror:")
    )
    port = free_port()
    log = (root / "gitreg.log").open("w")
    process = start_serve(root / "registry.yaml", port, tls, log)
    try:
        base = f"https://127.0.0.1:{port}"
        wait_until(
            lambda: process.poll() is not None or answers(f"{base}/readyz", trusting(tls.ca_cert)),
            60,
            "gitreg serving",
        )
        asked = httpx.URL(f"{base}/v1/providers/acme/widget/{version}/download/linux/amd64")
        download = httpx.get(asked, verify=trusting(tls.ca_cert)).json()
        assert download["protocols"] == json.loads(manifest_json)["metadata"]["protocol_versions"]
        signature = httpx.get(
            asked.join(download["shasums_signature_url"]),
            verify=trusting(tls.ca_cert),
        ).content
        assert signature == Path(f"{sums}.sig").read_bytes()  # CI's own signature, as it is

        workdir = root / "tf"
        workdir.mkdir()
        main_tf = page.take("hcl", "required_providers")
        (workdir / "main.tf").write_text(main_tf)
        (workdir / "cli.tfrc").write_text(
            on_port(page.take("hcl", 'host "registry.example.com"'), port)
        )
        done = run_terraform(workdir, tls.ca_cert, "init", "-input=false")
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"Installed registry.example.com/acme/widget v{version}" in done.stdout

        # The same provider through the network mirror.
        mirrored = root / "tf-mirror"
        mirrored.mkdir()
        (mirrored / "main.tf").write_text(main_tf)
        mirror_config = page.take("hcl", "network_mirror")
        (mirrored / "cli.tfrc").write_text(
            mirror_config.replace("https://registry.example.com/", f"{base}/")
        )
        done = run_terraform(mirrored, tls.ca_cert, "init", "-input=false")
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"Installed registry.example.com/acme/widget v{version}" in done.stdout
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()
