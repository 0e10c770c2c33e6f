"""Read-through against a real origin registry (gitreg serving hosted providers over TLS):
one download however many ask, and nothing kept that fails verification."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from gitreg.address import ProviderAddress
from gitreg.catalog.load import load_catalog
from gitreg.catalog.mirror_settings import MirrorSettings
from gitreg.catalog.settings import TlsFiles
from gitreg.errors import OriginError
from gitreg.mirror.readthrough import ReadThrough
from gitreg.process.tlscert import TlsMaterial
from gitreg.providers.hashes import HashCache
from tests.support.origin_server import ScriptedOrigin
from tests.support.provider_releases import new_key, write_key, write_release
from tests.support.servers import RegistryServer
from tests.support.tls_clients import served_over_tls

HOST = "origin.example.test"
ADDRESS = ProviderAddress.parse(f"{HOST}/acme/widget")
KEY = new_key("origin")


@dataclass
class Origin:
    server: RegistryServer
    root: Path

    opened: list[ReadThrough]

    def read_through(self, cache: Path, tls: TlsMaterial) -> ReadThrough:
        settings = MirrorSettings(
            origins=(("origin.example.test", f"{self.server.url}/"),), ca_file=tls.ca_cert
        )
        mirror = ReadThrough(settings, cache, HashCache())
        self.opened.append(mirror)
        return mirror


@pytest.fixture
def origin(tmp_path: Path, tls: TlsMaterial) -> Iterator[Origin]:
    key = new_key("origin")
    write_key(key, tmp_path / "origin.asc")
    write_release(
        tmp_path / "releases" / "1.0.0",
        "widget",
        "1.0.0",
        ("linux_amd64", "darwin_arm64"),
        signer=key,
    )
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\nsigning: {keys: [origin.asc]}\nproviders:\n  - {namespace: acme, type: widget, artifacts: releases}\n"
    )
    with RegistryServer(
        load_catalog(tmp_path / "registry.yaml"), TlsFiles(tls.certfile, tls.keyfile)
    ) as server:
        found = Origin(server, tmp_path, [])
        yield found
        for mirror in found.opened:
            mirror.close()  # idle TLS connections would hold the server's shutdown


def test_metadata_and_archives(origin: Origin, tmp_path: Path, tls: TlsMaterial) -> None:
    mirror = origin.read_through(tmp_path / "mirror", tls)
    assert mirror.versions(ADDRESS) == ["1.0.0"]
    packages = mirror.packages(ADDRESS, "1.0.0")
    assert packages and {(p.os, p.arch) for p in packages} == {
        ("linux", "amd64"),
        ("darwin", "arm64"),
    }
    assert all(
        p.path is None and len(p.hashes) == 1 and p.hashes[0].startswith("zh:") for p in packages
    )
    filename = "terraform-provider-widget_1.0.0_linux_amd64.zip"
    with ThreadPoolExecutor(8) as pool:  # many clients at once: one download
        paths = set(pool.map(lambda _: mirror.archive(ADDRESS, filename), range(8)))
    assert len(paths) == 1
    (path,) = paths
    assert path is not None
    original = next((origin.root / "releases").rglob(filename)).read_bytes()
    assert path.read_bytes() == original
    assert not list(path.parent.glob(".*.tmp"))
    assert path.stat().st_mode & 0o777 == 0o644  # readable by a web server or a sync user
    linux = next(p for p in mirror.packages(ADDRESS, "1.0.0") or [] if p.os == "linux")
    assert linux.path == path and linux.hashes[0].startswith("h1:")  # h1 once the zip is here
    assert linux.hashes[1] == "zh:" + hashlib.sha256(original).hexdigest()


def test_a_zip_that_fails_its_checksum_is_never_kept(
    origin: Origin, tmp_path: Path, tls: TlsMaterial
) -> None:
    mirror = origin.read_through(tmp_path / "mirror", tls)
    assert mirror.packages(ADDRESS, "1.0.0")  # verified metadata, before the tampering
    filename = "terraform-provider-widget_1.0.0_linux_amd64.zip"
    zip_path = next((origin.root / "releases").rglob(filename))
    stat = zip_path.stat()
    data = bytearray(zip_path.read_bytes())
    data[data.index(b"exit 1")] ^= 0x01
    zip_path.write_bytes(bytes(data))
    os.utime(zip_path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # the origin's cache is fooled too
    with pytest.raises(OriginError, match="does not match its signed checksum"):
        mirror.archive(ADDRESS, filename)
    assert not list((tmp_path / "mirror").rglob("*.zip"))
    assert not list((tmp_path / "mirror").rglob(".*.tmp"))


def test_a_signature_the_origin_keys_do_not_verify_is_refused(
    origin: Origin, tmp_path: Path, tls: TlsMaterial
) -> None:
    # The origin now serves a SHA256SUMS.sig by another key than the one it lists.
    entry = origin.server.state.current.world.side.providers.get("acme", "widget")
    release = entry.release("1.0.0") if entry else None
    assert release is not None
    other = new_key("impostor")
    object.__setattr__(release, "signature", bytes(other.sign(release.shasums)))
    mirror = origin.read_through(tmp_path / "mirror", tls)
    assert mirror.packages(ADDRESS, "1.0.0") is None
    assert mirror.archive(ADDRESS, "terraform-provider-widget_1.0.0_linux_amd64.zip") is None
    assert not list((tmp_path / "mirror").rglob("metadata.json"))


def test_gitreg_mirror_sync(origin: Origin, tmp_path: Path, tls: TlsMaterial) -> None:
    (tmp_path / "mirror.yaml").write_text(
        "cache_dir: mirror-cache\nmodules: []\n"
        f"mirror: {{origins: {{origin.example.test: '{origin.server.url}/'}}, ca_file: {tls.ca_cert}}}\n"
    )

    config = str(tmp_path / "mirror.yaml")

    def sync(*requests: str) -> subprocess.CompletedProcess[str]:
        command = ["mirror", "sync", "--config", config, "--platform", "linux_amd64", *requests]
        return subprocess.run(
            [sys.executable, "-m", "gitreg", *command],
            capture_output=True,
            text=True,
            timeout=120,
        )

    # A request that is no provider address is refused before anything is fetched.
    mistyped = sync("origin.example.test/acme/widget@1.0.0", "not a provider")
    assert mistyped.returncode == 2 and not mistyped.stdout, mistyped.stdout + mistyped.stderr
    assert mistyped.stderr.startswith("gitreg: 'not a provider' has 1 part separated by '/'")
    assert not (tmp_path / "mirror-cache" / "mirror").exists()

    done = sync(
        "origin.example.test/acme/widget@1.0.0",
        "origin.example.test/acme/widget",
        "origin.example.test/acme/gadget@2.0.0",
        "made-up.example.test/acme/widget",
    )
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "origin.example.test/acme/widget 1.0.0 linux_amd64: 0.0 MB, verified" in lines
    assert "origin.example.test/acme/widget: no version named, taking the newest, 1.0.0" in lines
    assert (
        "! origin.example.test/acme/gadget 2.0.0: not found, or its signature or checksums did not verify"
        in lines
    )
    assert any(  # only the origins registry.yaml allows: nothing asked of another
        line.startswith("! made-up.example.test/acme/widget: read-through reads only ")
        for line in lines
    )
    assert lines[-1] == "4 providers, 2 failures"
    cached = sorted(p.name for p in (tmp_path / "mirror-cache" / "mirror").rglob("*.zip"))
    assert cached == ["terraform-provider-widget_1.0.0_linux_amd64.zip"]


def scripted_mirror(origin: ScriptedOrigin, tls: TlsMaterial, cache: Path) -> ReadThrough:
    settings = MirrorSettings(origins=((HOST, origin.url),), ca_file=tls.ca_cert)
    return ReadThrough(settings, cache, HashCache())


def test_while_the_origin_is_down_only_what_is_held_is_listed(
    tls: TlsMaterial, tmp_path: Path
) -> None:
    with ScriptedOrigin(tls) as origin:
        origin.publish(
            KEY, "widget", {"1.0.0": ("linux_amd64", "darwin_arm64"), "1.1.0": ("linux_amd64",)}
        )
        mirror = scripted_mirror(origin, tls, tmp_path)
        assert mirror.versions(ADDRESS) == ["1.1.0", "1.0.0"]
        assert mirror.archive(ADDRESS, "terraform-provider-widget_1.0.0_linux_amd64.zip")
        assert mirror.packages(ADDRESS, "1.1.0")  # its release is known, no zip held
        origin.down = True
        assert mirror.versions(ADDRESS) == ["1.0.0"]  # 1.1.0 would only fail to download
        held = mirror.packages(ADDRESS, "1.0.0") or []
        assert [(p.os, p.arch) for p in held] == [("linux", "amd64")]
        assert held[0].hashes[0].startswith("h1:") and held[0].hashes[1].startswith("zh:")
        assert mirror.packages(ADDRESS, "1.1.0") is None
        with pytest.raises(OriginError):
            mirror.archive(ADDRESS, "terraform-provider-widget_1.0.0_darwin_arm64.zip")
        mirror.close()


def test_a_version_the_origin_withdraws_stays_listed_while_it_is_held(
    tls: TlsMaterial, tmp_path: Path
) -> None:
    with ScriptedOrigin(tls) as origin:
        origin.publish(KEY, "widget", {"1.0.0": ("linux_amd64",), "1.1.0": ("linux_amd64",)})
        mirror = scripted_mirror(origin, tls, tmp_path)
        assert mirror.archive(ADDRESS, "terraform-provider-widget_1.0.0_linux_amd64.zip")
        origin.publish(KEY, "widget", {"1.1.0": ("linux_amd64",)})  # 1.0.0 withdrawn
        assert mirror.versions(ADDRESS) == ["1.1.0", "1.0.0"]
        assert [p.path is not None for p in mirror.packages(ADDRESS, "1.0.0") or []] == [True]
        mirror.close()


def test_a_cached_zip_the_disk_changed_is_dropped_and_fetched_again(
    tls: TlsMaterial, tmp_path: Path
) -> None:
    with ScriptedOrigin(tls) as origin:
        zips = origin.publish(KEY, "widget", {"1.0.0": ("linux_amd64",)})
        ((name, original),) = zips.items()
        mirror = scripted_mirror(origin, tls, tmp_path)
        path = mirror.archive(ADDRESS, name)
        assert path is not None and path.read_bytes() == original
        path.write_bytes(original[:-7] + b"garbage")  # a bad disk, or a hand that slipped
        packages = mirror.packages(ADDRESS, "1.0.0") or []
        assert packages[0].path is None and not path.exists()  # never served as it was
        assert mirror.archive(ADDRESS, name) == path and path.read_bytes() == original
        assert origin.asked["/files/1.0.0/linux_amd64.zip"] == 2
        mirror.close()


@pytest.fixture
def mirror_server(
    tls: TlsMaterial, tmp_path: Path
) -> Iterator[tuple[ScriptedOrigin, httpx.Client]]:
    with ScriptedOrigin(tls) as origin:
        (tmp_path / "registry.yaml").write_text(
            "hostname: mirror.example.test\ncache_dir: cache\nmodules: []\n"
            f"mirror: {{read_through: true, origins: {{{HOST}: '{origin.url}'}}, ca_file: {tls.ca_cert}}}\n"
        )
        with served_over_tls(tmp_path / "registry.yaml", tls, base_path="/v1/mirror/") as (
            server,
            client,
        ):
            yield origin, client
            server.state.current.world.side.mirror.close()


def test_a_zip_the_origin_cannot_give_is_a_502_not_a_500(
    mirror_server: tuple[ScriptedOrigin, httpx.Client],
) -> None:
    origin, client = mirror_server
    origin.publish(KEY, "widget", {"1.0.0": ("linux_amd64",)})
    body = client.get("origin.example.test/acme/widget/1.0.0.json").json()
    url = body["archives"]["linux_amd64"]["url"]
    origin.answers["/files/1.0.0/linux_amd64.zip"].status = 500
    response = client.get(f"origin.example.test/acme/widget/{url}")
    assert response.status_code == 502, response.text
    assert "HTTP 500" in response.json()["errors"][0] and response.headers["retry-after"]
    # What an operator sees: the failing host, the failed download, the request's outcome.
    host = origin.url.removeprefix("https://").rstrip("/")
    (health,) = client.get(str(client.base_url.copy_with(path="/v1/status"))).json()[
        "mirror_origins"
    ]
    assert health["host"] == host and not health["up"] and health["last_error"] == "HTTP 500"
    metrics = client.get(str(client.base_url.copy_with(path="/metrics"))).text
    for line in (
        f'gitreg_mirror_origin_up{{host="{host}"}} 0.0',
        f'gitreg_mirror_origin_failures_total{{host="{host}"}} 1.0',
        'gitreg_mirror_downloads_total{result="failed"} 1.0',
        'gitreg_mirror_requests_total{kind="archive",result="origin_error"} 1.0',
        'gitreg_mirror_requests_total{kind="version",result="ok"} 1.0',
    ):
        assert line in metrics.splitlines(), line


def test_many_clients_asking_for_a_cold_zip_cause_one_download(
    mirror_server: tuple[ScriptedOrigin, httpx.Client],
) -> None:
    origin, client = mirror_server
    ((name, original),) = origin.publish(KEY, "widget", {"1.0.0": ("linux_amd64",)}).items()
    origin.answers["/files/1.0.0/linux_amd64.zip"].delay = 0.5  # all ask while it downloads
    with ThreadPoolExecutor(8) as pool:
        got = list(
            pool.map(lambda _: client.get(f"origin.example.test/acme/widget/{name}"), range(8))
        )
    assert [r.status_code for r in got] == [200] * 8
    assert all(r.content == original for r in got)
    assert origin.asked["/files/1.0.0/linux_amd64.zip"] == 1
    assert origin.asked["/v1/providers/acme/widget/versions"] == 1  # the release, verified once
