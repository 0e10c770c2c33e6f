"""The real terraform installs a provider whose release came from the forge: the page's
catalog (docs/providers.md, "Provider releases from the forge") pointed at a stand-in GitLab over
HTTPS on 127.0.0.1 that publishes a release CI signed; `gitreg serve` fetches it into its
cache_dir and serves it, and `terraform init` installs it.

What the test changes in the page's block: the forge's URL, the token file's and key's paths,
and a `credentials` entry so that the forge's test CA is trusted."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from gitreg.process.tlscert import TlsMaterial
from tests.support.forge_release_shapes import ForgeRelease
from tests.support.forges import StandInForge
from tests.support.provider_releases import new_key, write_key, write_release
from tests.support.servers import answers, free_port, start_serve, wait_until
from tests.support.site_snippets import claimed
from tests.support.terraform_cli import needs_terraform, run_terraform
from tests.support.tls_clients import trusting

pytestmark = [pytest.mark.terraform, needs_terraform]

TOKEN = "glpat-forge-e2e"


def test_terraform_installs_a_provider_released_on_the_forge(
    tls: TlsMaterial, tmp_path: Path
) -> None:
    key = new_key("ci")
    (tmp_path / "keys").mkdir()
    write_key(key, tmp_path / "keys" / "ci.asc", public=True)
    write_release(tmp_path / "dist", "widget", "1.2.0", ("linux_amd64",), signer=key)
    release = ForgeRelease.of_folder("acme/terraform-provider-widget", "v1.2.0", tmp_path / "dist")
    (tmp_path / "gitlab-token").write_text(TOKEN + "\n")
    with (
        claimed("providers.md", "test_terraform_installs_a_provider_released_on_the_forge") as page,
        StandInForge("gitlab", token=TOKEN, tls=tls, releases=[release]) as forge,
    ):
        catalog = (
            page.take("yaml", "releases:")
            .replace("https://gitlab.example.com", forge.url)
            .replace("/run/secrets/gitlab-token", str(tmp_path / "gitlab-token"))
        )
        (tmp_path / "registry.yaml").write_text(
            "hostname: registry.example.test\ncache_dir: cache\n"
            "mirror: {read_through: false}\n"
            f"credentials:\n  - {{url: '{forge.url}', ca_file: '{tls.ca_cert}'}}\n" + catalog
        )
        port = free_port()
        base = f"https://127.0.0.1:{port}"
        context = trusting(tls.ca_cert)
        with (tmp_path / "gitreg.log").open("w") as log:
            process = start_serve(tmp_path / "registry.yaml", port, tls, log)
            try:
                wait_until(
                    lambda: process.poll() is not None or answers(f"{base}/readyz", context),
                    60,
                    "gitreg serving",
                )
                listed = httpx.get(f"{base}/v1/providers/acme/widget/versions", verify=context)
                assert [v["version"] for v in listed.json()["versions"]] == ["1.2.0"]

                workdir = tmp_path / "tf"
                workdir.mkdir()
                (workdir / "main.tf").write_text(
                    "terraform {\n  required_providers {\n"
                    f'    widget = {{ source = "127.0.0.1:{port}/acme/widget", version = "1.2.0" }}\n'
                    "  }\n}\n"
                )
                (workdir / "cli.tfrc").write_text("")
                done = run_terraform(workdir, tls.ca_cert, "init", "-input=false")
                assert done.returncode == 0, done.stdout + done.stderr
                assert f"Installed 127.0.0.1:{port}/acme/widget v1.2.0" in done.stdout
            finally:
                process.terminate()
                process.wait(timeout=30)
        assert TOKEN not in (tmp_path / "gitreg.log").read_text()
    fetched = tmp_path / "cache" / "provider-releases" / "acme" / "widget" / "1.2.0"
    # The release's files, and .gitreg.yaml as the repository holds it at the tag (empty here).
    kept = sorted([".gitreg.yaml", *(n for n, _ in release.files)])
    assert sorted(p.name for p in fetched.iterdir()) == kept
