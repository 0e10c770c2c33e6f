"""Hosted providers over HTTPS: the providers.v1 protocol with the real app, and end to end with
the real terraform binary (install, lock file, second init, and what Terraform refuses)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import httpx
import pgpy
import pytest

from gitreg.process.tlscert import TlsMaterial
from gitreg.providers.hashes import zip_hashes
from tests.support.provider_releases import new_key, provider_zip, write_key, write_release
from tests.support.servers import (
    answers,
    free_port,
    start_gitreg,
    start_serve,
    wait_until,
)
from tests.support.terraform_cli import needs_terraform, run_terraform
from tests.support.tls_clients import served_over_tls, trusting


@dataclass
class Served:
    host: str
    base: str
    tls: TlsMaterial
    root: Path
    client: httpx.Client
    keys: dict[str, pgpy.PGPKey]
    log: Path


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, tls: TlsMaterial) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("providers")
    keys = {name: new_key(name) for name in ("gitreg", "ci", "stranger")}
    artifacts = root / "releases"
    write_release(artifacts / "1.0.0", "widget", "1.0.0", ("linux_amd64", "darwin_arm64"))
    write_release(
        artifacts / "1.1.0",
        "widget",
        "1.1.0",
        ("linux_amd64",),
        signer=keys["ci"],
        manifest_in_sums=True,
    )
    write_release(artifacts / "1.2.0", "widget", "1.2.0", ("linux_amd64",), signer=keys["gitreg"])
    write_release(artifacts / "1.3.0", "widget", "1.3.0", ("linux_amd64",), signer=keys["stranger"])
    write_key(keys["gitreg"], root / "gitreg.asc")
    write_key(keys["ci"], root / "ci.asc", public=True)
    thing = (
        root / "mirror" / "example.com" / "test" / "thing"
    )  # as `terraform providers mirror` writes
    thing.mkdir(parents=True)
    for platform in ("linux_amd64", "windows_amd64"):
        (thing / f"terraform-provider-thing_0.1.0_{platform}.zip").write_bytes(
            provider_zip("thing", "0.1.0", platform)
        )
    (root / "registry.yaml").write_text(
        "hostname: registry.example.test\ncache_dir: cache\n"
        "signing: {keys: [gitreg.asc], verify_keys: [ci.asc]}\n"
        "providers:\n  - {namespace: acme, type: widget, artifacts: releases}\n"
        "mirror: {folders: [mirror], read_through: false}\n"
    )
    port = free_port()
    log = root / "gitreg.log"
    with log.open("w") as out:
        process = start_serve(root / "registry.yaml", port, tls, out)
        context = trusting(tls.ca_cert)
        base = f"https://127.0.0.1:{port}"
        try:
            wait_until(
                lambda: process.poll() is not None or answers(f"{base}/readyz", context),
                60,
                "gitreg",
            )
            with httpx.Client(base_url=base, verify=context) as client:
                yield Served(f"127.0.0.1:{port}", base, tls, root, client, keys, log)
        finally:
            process.terminate()
            process.wait(timeout=15)


def test_discovery_names_providers_v1(served: Served) -> None:
    assert (
        served.client.get("/.well-known/terraform.json").json()["providers.v1"] == "/v1/providers/"
    )


def test_versions(served: Served) -> None:
    listed = served.client.get("/v1/providers/acme/widget/versions").json()["versions"]
    assert [v["version"] for v in listed] == ["1.2.0", "1.1.0", "1.0.0"]  # 1.3.0 is refused
    assert listed[2] == {
        "version": "1.0.0",
        "protocols": ["6.0"],
        "platforms": [{"os": "darwin", "arch": "arm64"}, {"os": "linux", "arch": "amd64"}],
    }
    assert "SHA256SUMS.sig is not a valid signature" in served.log.read_text()


def test_download_and_files(served: Served) -> None:
    body = served.client.get("/v1/providers/acme/widget/1.1.0/download/linux/amd64").json()
    assert body["filename"] == "terraform-provider-widget_1.1.0_linux_amd64.zip"
    assert body["protocols"] == ["6.0"] and (body["os"], body["arch"]) == ("linux", "amd64")
    assert [k["key_id"] for k in body["signing_keys"]["gpg_public_keys"]] == [
        served.keys["gitreg"].fingerprint.keyid.upper(),
        served.keys["ci"].fingerprint.keyid.upper(),
    ]
    assert all(
        k["ascii_armor"].startswith("-----BEGIN PGP PUBLIC KEY BLOCK-----")
        for k in body["signing_keys"]["gpg_public_keys"]
    )
    zip_response = served.client.get(body["download_url"])
    assert zip_response.headers["content-type"] == "application/zip"
    assert hashlib.sha256(zip_response.content).hexdigest() == body["shasum"]
    sums = served.client.get(body["shasums_url"]).content
    assert sums.decode().split() == [body["shasum"], body["filename"]]  # the zips only
    signature = served.client.get(body["shasums_signature_url"])
    assert signature.status_code == 200 and int(signature.headers["content-length"]) == len(
        signature.content
    )
    head = served.client.head(body["shasums_url"])
    assert (
        head.status_code == 200
        and head.content == b""
        and int(head.headers["content-length"]) == len(sums)
    )
    assert served.client.head(body["download_url"]).headers["etag"] == f'"{body["shasum"]}"'


def test_status_and_metrics_show_served_and_refused_releases(served: Served) -> None:
    (widget,) = served.client.get("/v1/status").json()["providers"]
    assert widget["provider"] == "acme/widget"
    assert widget["versions"] == ["1.2.0", "1.1.0", "1.0.0"]
    assert [r.split(":")[0] for r in widget["refused"]] == ["1.3.0"]
    assert "not a valid signature" in widget["refused"][0]
    metrics = served.client.get("/metrics").text.splitlines()
    assert 'gitreg_provider_versions{provider="acme/widget"} 3.0' in metrics
    assert 'gitreg_provider_releases_refused{provider="acme/widget"} 1.0' in metrics


@pytest.mark.parametrize(
    ("path", "status", "message"),
    [
        ("/v1/providers/acme/gadget/versions", 404, "no provider acme/gadget"),
        ("/v1/providers/acme/widget/9.9.9/download/linux/amd64", 404, "has no version 9.9.9"),
        (
            "/v1/providers/acme/widget/1.1.0/download/windows/amd64",
            404,
            "no package for windows_amd64",
        ),
        ("/v1/providers/acme/widget/1.x/download/linux/amd64", 400, "not a Semantic Version"),
        ("/v1/providers/acme/widget/1.0.0/download/Linux/AMD64!", 400, "is not a platform"),
        ("/v1/providers/ac_me/widget/versions", 404, "no provider ac_me/widget"),
        ("/v1/providers/acme/wid_get/versions", 400, "provider type 'wid_get' may not contain"),
        ("/v1/providers/_acme/widget/versions", 400, "provider namespace '_acme' must start"),
        (
            "/v1/provider-files/acme/widget/1.0.0/terraform-provider-widget_1.0.0_plan9_386.zip",
            404,
            "has no file",
        ),
    ],
)
def test_client_mistakes(served: Served, path: str, status: int, message: str) -> None:
    response = served.client.get(path)
    assert response.status_code == status and message in response.json()["errors"][0], response.text


def terraform_init(
    served: Served,
    workdir: Path,
    version: str,
    fresh: bool = True,
    providers: str = "",
    cli: str = "",
) -> subprocess.CompletedProcess[str]:
    workdir.mkdir(parents=True, exist_ok=True)
    providers = (
        providers
        or f'    widget = {{ source = "{served.host}/acme/widget", version = "{version}" }}\n'
    )
    (workdir / "main.tf").write_text(
        f"terraform {{\n  required_providers {{\n{providers}  }}\n}}\n"
    )
    (workdir / "cli.tfrc").write_text(cli)
    if fresh:
        shutil.rmtree(workdir / ".terraform", ignore_errors=True)
    return run_terraform(workdir, served.tls.ca_cert, "init", "-input=false")


@needs_terraform
@pytest.mark.parametrize(
    "version", ["1.0.0", "1.1.0"]
)  # signed by gitreg; by a trusted CI key, narrowed
def test_terraform_installs_and_locks(served: Served, tmp_path: Path, version: str) -> None:
    first = terraform_init(served, tmp_path, version)
    assert first.returncode == 0, first.stdout + first.stderr
    lock = (tmp_path / ".terraform.lock.hcl").read_text()
    assert f'version     = "{version}"' in lock
    assert lock.count('"h1:') == 1 and lock.count('"zh:') == (2 if version == "1.0.0" else 1)
    # Our hashes are the ones Terraform itself wrote: h1 of the installed platform, zh of each zip.
    zips = sorted((served.root / "releases" / version).glob("*.zip"))
    linux = next(z for z in zips if "linux_amd64" in z.name)
    assert f'"{zip_hashes(linux).h1}"' in lock
    for z in zips:
        assert f'"{zip_hashes(z).zh}"' in lock
    again = terraform_init(served, tmp_path, version)  # .terraform gone, lock file kept
    assert again.returncode == 0, again.stdout + again.stderr


@needs_terraform
def test_terraform_refuses_a_tampered_zip(served: Served, tmp_path: Path) -> None:
    # Same size, same mtime: gitreg's hash cache is fooled, and serves the old checksum;
    # Terraform's own check is the last line of defence, and holds.
    zip_path = next((served.root / "releases" / "1.2.0").glob("*linux_amd64.zip"))
    data, times = bytearray(zip_path.read_bytes()), zip_path.stat()
    data[data.index(b"exit 1")] ^= 0x01
    zip_path.write_bytes(bytes(data))
    os.utime(zip_path, ns=(times.st_atime_ns, times.st_mtime_ns))
    done = terraform_init(served, tmp_path, "1.2.0")
    assert done.returncode != 0
    assert "checksum" in (done.stdout + done.stderr).lower()


@needs_terraform
def test_terraform_cannot_install_a_release_signed_by_an_unknown_key(
    served: Served, tmp_path: Path
) -> None:
    done = terraform_init(served, tmp_path, "1.3.0")
    assert done.returncode != 0
    assert "no available releases match" in (done.stdout + done.stderr).replace("\n", " ")


def test_mirror_protocol(served: Served) -> None:
    index = served.client.get("/v1/mirror/registry.example.test/acme/widget/index.json")
    assert index.headers["content-type"] == "application/json"
    assert index.json() == {"versions": {"1.2.0": {}, "1.1.0": {}, "1.0.0": {}}}
    body = served.client.get("/v1/mirror/registry.example.test/acme/widget/1.0.0.json").json()
    assert set(body["archives"]) == {"linux_amd64", "darwin_arm64"}
    archive = body["archives"]["linux_amd64"]
    assert archive["url"] == "terraform-provider-widget_1.0.0_linux_amd64.zip"
    path = served.root / "releases" / "1.0.0" / archive["url"]
    assert archive["hashes"] == [zip_hashes(path).h1, zip_hashes(path).zh]
    got = served.client.get(f"/v1/mirror/registry.example.test/acme/widget/{archive['url']}")
    assert got.content == path.read_bytes()
    folder = served.client.get("/v1/mirror/example.com/test/thing/index.json").json()
    assert folder == {"versions": {"0.1.0": {}}}
    for path_, status in (
        ("/v1/mirror/example.com/test/nothing/index.json", 404),
        ("/v1/mirror/registry.example.test/acme/widget/9.0.0.json", 404),
        ("/v1/mirror/registry.example.test/acme/widget/latest.json", 400),
        ("/v1/mirror/Bad_Host/acme/widget/index.json", 400),
        ("/v1/mirror/registry.example.test/acme/widget/notes.txt", 404),
    ):
        response = served.client.get(path_)
        assert response.status_code == status and response.json()["errors"], (path_, response.text)


def test_an_unreadable_zip_in_a_mirror_folder_is_left_out_and_the_rest_serves(
    served: Served,
) -> None:
    folder = served.root / "mirror" / "example.com" / "test" / "broken"
    folder.mkdir(parents=True)
    try:  # the folder is the module's: leave it as it was for the tests after this one
        good = folder / "terraform-provider-broken_1.0.0_linux_amd64.zip"
        good.write_bytes(provider_zip("broken", "1.0.0"))
        (folder / "terraform-provider-broken_1.0.0_darwin_arm64.zip").write_bytes(b"not a zip")
        (folder / "terraform-provider-broken_2.0.0_linux_amd64.zip").write_bytes(b"PK\x03\x04 x")
        base = "/v1/mirror/example.com/test/broken"
        body = served.client.get(f"{base}/1.0.0.json").json()
        hashes = [zip_hashes(good).h1, zip_hashes(good).zh]
        assert body == {"archives": {"linux_amd64": {"url": good.name, "hashes": hashes}}}
        only_broken = served.client.get(f"{base}/2.0.0.json")
        assert only_broken.status_code == 404 and only_broken.json()["errors"]
        assert "leaving out" in served.log.read_text()
    finally:
        shutil.rmtree(folder)


@needs_terraform
def test_terraform_installs_through_the_network_mirror(served: Served, tmp_path: Path) -> None:
    cli = f'provider_installation {{\n  network_mirror {{ url = "{served.base}/v1/mirror/" }}\n}}\n'
    providers = (
        '    widget = { source = "registry.example.test/acme/widget", version = "1.1.0" }\n'
        '    thing = { source = "example.com/test/thing", version = "0.1.0" }\n'
    )
    for _ in range(2):  # and again with the lock file
        done = terraform_init(served, tmp_path, "", providers=providers, cli=cli)
        assert done.returncode == 0, done.stdout + done.stderr
    lock = (tmp_path / ".terraform.lock.hcl").read_text()
    # Through a mirror, Terraform checks and records the h1 of what it installed.
    installed = [
        *(served.root / "mirror" / "example.com" / "test" / "thing").glob("*linux_amd64.zip"),
        *(served.root / "releases" / "1.1.0").glob("*linux_amd64.zip"),
    ]
    assert len(installed) == 2
    for path in installed:
        assert f'"{zip_hashes(path).h1}"' in lock, path.name


@needs_terraform
def test_read_through_from_an_origin_then_with_the_origin_down(
    served: Served, tmp_path: Path, tls: TlsMaterial
) -> None:
    """A second gitreg is the origin registry; the mirror verifies, caches, and keeps serving."""
    origin_root = tmp_path / "origin"
    shutil.copytree(served.root / "releases", origin_root / "releases")
    shutil.copy(served.root / "gitreg.asc", origin_root / "gitreg.asc")
    shutil.copy(served.root / "ci.asc", origin_root / "ci.asc")
    (origin_root / "registry.yaml").write_text(
        "cache_dir: cache\nsigning: {keys: [gitreg.asc], verify_keys: [ci.asc]}\n"
        "providers:\n  - {namespace: acme, type: widget, artifacts: releases}\n"
    )
    origin_port, mirror_port = free_port(), free_port()
    (tmp_path / "mirror.yaml").write_text(
        "hostname: mirror.example.test\ncache_dir: mirror-cache\nmodules: []\n"
        "mirror:\n  read_through: true\n"
        f"  origins: {{origin.example.test: 'https://127.0.0.1:{origin_port}/'}}\n"
        f"  ca_file: {tls.ca_cert}\n"
    )
    tls_args = ["--certfile", str(tls.certfile), "--keyfile", str(tls.keyfile)]
    context = trusting(tls.ca_cert)
    origin = start_gitreg(
        "serve",
        "--config",
        str(origin_root / "registry.yaml"),
        "--listen",
        f"127.0.0.1:{origin_port}",
        *tls_args,
    )
    mirror_args = [
        "serve",
        "--config",
        str(tmp_path / "mirror.yaml"),
        "--listen",
        f"127.0.0.1:{mirror_port}",
        *tls_args,
    ]
    mirror = start_gitreg(*mirror_args)
    cli = f'provider_installation {{\n  network_mirror {{ url = "https://127.0.0.1:{mirror_port}/v1/mirror/" }}\n}}\n'
    providers = '    widget = { source = "origin.example.test/acme/widget", version = "1.1.0" }\n'
    try:
        for port in (origin_port, mirror_port):
            wait_until(partial(answers, f"https://127.0.0.1:{port}/readyz", context), 60, "gitreg")
        first = terraform_init(served, tmp_path / "first", "", providers=providers, cli=cli)
        assert first.returncode == 0, first.stdout + first.stderr
        origin.kill()  # an outage: the origin is gone at once
        origin.communicate(timeout=15)
        mirror.terminate()  # and the mirror restarts: nothing in memory, only its cache on disk
        mirror.communicate(timeout=15)
        mirror = start_gitreg(*mirror_args)
        wait_until(
            lambda: answers(f"https://127.0.0.1:{mirror_port}/readyz", context),
            60,
            "the mirror again",
        )
        second = terraform_init(served, tmp_path / "second", "", providers=providers, cli=cli)
        assert second.returncode == 0, second.stdout + second.stderr
    finally:
        for process in (origin, mirror):
            process.terminate()
        output, _ = mirror.communicate(timeout=15)
    cached = list((tmp_path / "mirror-cache" / "mirror" / "origin.example.test").rglob("*.zip"))
    assert [p.name for p in cached] == ["terraform-provider-widget_1.1.0_linux_amd64.zip"]
    assert "the cache serves" in output


def _in_thread_registry(tmp_path: Path) -> tuple[Path, pgpy.PGPKey]:
    key = new_key("gitreg")
    write_key(key, tmp_path / "gitreg.asc")
    write_release(tmp_path / "releases" / "1.0.0", "widget", "1.0.0", ("linux_amd64",), signer=key)
    (tmp_path / "registry.yaml").write_text(
        "hostname: registry.example.test\ncache_dir: cache\nsigning: {keys: [gitreg.asc]}\n"
        "providers:\n  - {namespace: acme, type: widget, artifacts: releases}\n"
        "mirror: {read_through: false}\n"  # a miss must never become a lookup of an outside name
    )
    return tmp_path / "registry.yaml", key


def test_a_release_dropped_in_the_folder_appears_without_a_restart(
    tmp_path: Path, tls: TlsMaterial
) -> None:
    catalog, key = _in_thread_registry(tmp_path)
    with served_over_tls(catalog, tls, refresh=True) as (_, client):
        write_release(
            tmp_path / "releases" / "1.1.0", "widget", "1.1.0", ("linux_amd64",), signer=key
        )

        def listed() -> list[str]:
            return [
                v["version"]
                for v in client.get("/v1/providers/acme/widget/versions").json()["versions"]
            ]

        wait_until(lambda: listed() == ["1.1.0", "1.0.0"], 30, "the new release to be listed")


@needs_terraform
def test_terraform_refuses_a_signature_by_a_key_the_registry_does_not_list(
    served: Served, tmp_path: Path, tls: TlsMaterial
) -> None:
    # gitreg never serves such a signature (it refuses the release at load); to see Terraform's
    # own check hold, the served release's signature is replaced in memory.
    catalog, _ = _in_thread_registry(tmp_path)
    with served_over_tls(catalog, tls) as (server, _):
        entry = server.state.current.world.side.providers.get("acme", "widget")
        release = entry.release("1.0.0") if entry else None
        assert release is not None
        object.__setattr__(release, "signature", bytes(new_key("stranger").sign(release.shasums)))
        local = Served(
            server.url.removeprefix("https://"),
            server.url,
            tls,
            tmp_path,
            served.client,
            served.keys,
            served.log,
        )
        done = terraform_init(local, tmp_path / "tf", "1.0.0")
    assert done.returncode != 0
    assert "signature" in (done.stdout + done.stderr).lower(), done.stdout + done.stderr


@needs_terraform
def test_a_folder_written_by_terraform_providers_mirror_is_served(
    served: Served, tmp_path: Path
) -> None:
    """The real tool writes the folder (from this registry's providers.v1, under another name);
    the network mirror serves it, and Terraform installs from it and locks the same hashes."""
    host = "tools.example.test"
    origin = (
        f'host "{host}" {{\n  services = {{ "providers.v1" = "{served.base}/v1/providers/" }}\n}}\n'
    )
    providers = f'    widget = {{ source = "{host}/acme/widget", version = "1.1.0" }}\n'
    writer = tmp_path / "writer"
    fetched = terraform_init(served, writer, "", providers=providers, cli=origin)
    assert fetched.returncode == 0, fetched.stdout + fetched.stderr
    mirror_folder = str(served.root / "mirror")
    platform = "-platform=linux_amd64"
    written = run_terraform(
        writer, served.tls.ca_cert, "providers", "mirror", platform, mirror_folder
    )
    assert written.returncode == 0, written.stdout + written.stderr
    folder = served.root / "mirror" / host / "acme" / "widget"
    assert (folder / "index.json").is_file()  # the tool's own layout, JSON files and all
    listed = served.client.get(f"/v1/mirror/{host}/acme/widget/index.json").json()
    assert listed == {"versions": {"1.1.0": {}}}
    cli = f'provider_installation {{\n  network_mirror {{ url = "{served.base}/v1/mirror/" }}\n}}\n'
    for _ in range(2):  # and again with the lock file
        done = terraform_init(served, tmp_path / "user", "", providers=providers, cli=cli)
        assert done.returncode == 0, done.stdout + done.stderr
    lock = (tmp_path / "user" / ".terraform.lock.hcl").read_text()
    (zip_path,) = folder.glob("*.zip")
    assert f'"{zip_hashes(zip_path).h1}"' in lock
    # The tool recorded its own h1 in the folder's VERSION.json: it is the one gitreg serves.
    tools_hashes = json.loads((folder / "1.1.0.json").read_text())["archives"]["linux_amd64"][
        "hashes"
    ]
    served_hashes = served.client.get(f"/v1/mirror/{host}/acme/widget/1.1.0.json").json()
    assert set(tools_hashes) <= set(served_hashes["archives"]["linux_amd64"]["hashes"])


def test_a_zip_removed_before_the_next_rescan_is_a_404(tmp_path: Path, tls: TlsMaterial) -> None:
    # The index still lists it for up to one rescan interval; the answer must not be a 500.
    catalog, _ = _in_thread_registry(tmp_path)
    zip_path = next((tmp_path / "releases" / "1.0.0").glob("*.zip"))
    with served_over_tls(catalog, tls) as (server, client):
        body = client.get("/v1/providers/acme/widget/1.0.0/download/linux/amd64").json()
        host = server.sync.snapshot.catalog.server.hostname
        mirror_url = f"/v1/mirror/{host}/acme/widget/{zip_path.name}"
        assert client.head(mirror_url).status_code == 200
        zip_path.unlink()
        for url in (body["download_url"], mirror_url):
            response = client.get(url)
            assert response.status_code == 404, (url, response.text)
            assert "no longer" in response.json()["errors"][0]
