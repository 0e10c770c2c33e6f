"""The real terraform installs a provider gitreg discovered: the page's catalog (docs/sources.md,
"Providers") pointed at a stand-in GitLab over HTTPS on 127.0.0.1 whose group holds
`terraform-provider-widget` (its Git served by a real git daemon) with a release CI signed;
`gitreg serve` discovers the repository, fetches the release into its cache_dir and serves it,
and `terraform init` installs it, printing the deprecation `.gitreg.yaml` at the release's tag
says (docs/deprecations.md).

What the test changes in the page's block: the forge's URL, the token file's and key's paths,
and a `credentials` entry so that the forge's test CA is trusted."""

from __future__ import annotations

import ssl
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from gitreg.process.tlscert import TlsMaterial
from tests.support.forge_release_shapes import ForgeRelease
from tests.support.forge_shapes import ForgeRepository
from tests.support.forges import StandInForge
from tests.support.gitrepo import GitRepo
from tests.support.provider_releases import new_key, write_key, write_release
from tests.support.servers import (
    bare_clone,
    free_port,
    git_daemon,
    start_serve,
    wait_until,
)
from tests.support.site_snippets import claimed
from tests.support.terraform_cli import needs_terraform, run_terraform
from tests.support.tls_clients import trusting

pytestmark = [pytest.mark.terraform, needs_terraform]

TOKEN = "glpat-discovered-e2e"
PROJECT = "acme/terraform-provider-widget"
REASON = "1.2.0 loses tags on update; use 1.2.1."


def versions(base: str, context: ssl.SSLContext) -> list[str]:
    try:
        answer = httpx.get(f"{base}/v1/providers/acme/widget/versions", verify=context, timeout=5)
    except httpx.HTTPError:  # not listening yet
        return []
    return [v["version"] for v in answer.json()["versions"]] if answer.status_code == 200 else []


def test_terraform_installs_a_discovered_provider(tls: TlsMaterial, tmp_path: Path) -> None:
    key = new_key("ci")
    write_key(key, tmp_path / "release-key.asc", public=True)
    write_release(tmp_path / "dist", "widget", "1.2.0", ("linux_amd64",), signer=key)
    release = ForgeRelease.of_folder(PROJECT, "v1.2.0", tmp_path / "dist")
    release = replace(release, tree=((".gitreg.yaml", f"deprecated: '{REASON}'\n".encode()),))
    (tmp_path / "gitlab-token").write_text(TOKEN + "\n")
    work = GitRepo(tmp_path / "work" / "terraform-provider-widget")
    work.write({"main.go": "package main\n"}).commit()
    bare_clone(work.path, tmp_path / "served" / "terraform-provider-widget.git")
    with (
        claimed("sources.md", "test_terraform_installs_a_discovered_provider") as page,
        git_daemon(tmp_path / "served") as git_base,
        StandInForge("gitlab", token=TOKEN, tls=tls, releases=[release]) as forge,
    ):
        forge.repositories = [
            ForgeRepository(PROJECT, clone_https=f"{git_base}/terraform-provider-widget.git")
        ]
        catalog = (
            page.take("yaml", "group: acme")
            .replace("hostname: registry.example.com\n", "")
            .replace(".gitreg", "cache")
            .replace("https://gitlab.example.com", forge.url)
            .replace("/run/secrets/gitlab-token", str(tmp_path / "gitlab-token"))
            .replace("/etc/gitreg/release-key.asc", str(tmp_path / "release-key.asc"))
        )
        (tmp_path / "registry.yaml").write_text(
            "hostname: registry.example.test\nmirror: {read_through: false}\n"
            f"credentials:\n  - {{url: '{forge.url}', ca_file: '{tls.ca_cert}'}}\n" + catalog
        )
        port = free_port()
        base = f"https://127.0.0.1:{port}"
        context = trusting(tls.ca_cert)
        with (tmp_path / "gitreg.log").open("w") as log:
            process = start_serve(tmp_path / "registry.yaml", port, tls, log)
            try:
                wait_until(
                    lambda: process.poll() is not None or versions(base, context) == ["1.2.0"],
                    60,
                    "the discovered provider served",
                )
                assert process.poll() is None, (tmp_path / "gitreg.log").read_text()
                status: dict[str, Any] = httpx.get(f"{base}/v1/status", verify=context).json()
                (source,) = status["sources"]
                assert source["providers"] == [f"acme/widget ({PROJECT})"]
                assert {p["provider"]: p["versions"] for p in status["providers"]} == {
                    "acme/widget": ["1.2.0"]
                }
                answer = httpx.get(f"{base}/v1/providers/acme/widget/versions", verify=context)
                assert answer.json()["warnings"] == [f"Version 1.2.0 is deprecated: {REASON}"]
                shown = httpx.get(f"{base}/providers/acme/widget", verify=context).text
                assert 'id="banner-version-deprecated"' in shown and "loses tags" in shown

                workdir = tmp_path / "tf"
                workdir.mkdir()
                (workdir / "main.tf").write_text(
                    "terraform {\n  required_providers {\n"
                    f'    widget = {{ source = "127.0.0.1:{port}/acme/widget", version = "~> 1.2" }}\n'
                    "  }\n}\n"
                )
                (workdir / "cli.tfrc").write_text("")
                done = run_terraform(workdir, tls.ca_cert, "init", "-input=false")
                assert done.returncode == 0, done.stdout + done.stderr
                assert f"Installed 127.0.0.1:{port}/acme/widget v1.2.0" in done.stdout
                said = " ".join((done.stdout + done.stderr).split())
                assert f"- Version 1.2.0 is deprecated: {REASON}" in said
            finally:
                process.terminate()
                process.wait(timeout=30)
        assert TOKEN not in (tmp_path / "gitreg.log").read_text()
