"""Read-through against a real origin registry (gitreg serving hosted providers over TLS):
one download however many ask, and nothing kept that fails verification."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from gitreg.catalog import MirrorSettings, TlsFiles
from gitreg.catalog_loader import load_catalog
from gitreg.provider_hashes import HashCache
from gitreg.readthrough import ReadThrough
from gitreg.tlscert import TlsMaterial
from tests.provider_releases import new_key, write_key, write_release
from tests.servers import RegistryServer

ADDRESS = ("origin.example.test", "acme", "widget")


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
    assert not list(path.parent.glob(".download-*"))
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
    with pytest.raises(Exception, match="does not match its signed checksum"):
        mirror.archive(ADDRESS, filename)
    assert not list((tmp_path / "mirror").rglob("*.zip"))
    assert not list((tmp_path / "mirror").rglob(".download-*"))


def test_a_signature_the_origin_keys_do_not_verify_is_refused(
    origin: Origin, tmp_path: Path, tls: TlsMaterial
) -> None:
    # The origin now serves a SHA256SUMS.sig by another key than the one it lists.
    release = origin.server.providers.get("acme", "widget").release("1.0.0")  # type: ignore[union-attr]
    other = new_key("impostor")
    object.__setattr__(release, "signature", bytes(other.sign(release.shasums)))
    mirror = origin.read_through(tmp_path / "mirror", tls)
    assert mirror.packages(ADDRESS, "1.0.0") is None
    assert mirror.archive(ADDRESS, "terraform-provider-widget_1.0.0_linux_amd64.zip") is None
    assert not list((tmp_path / "mirror").rglob("metadata.json"))


def test_nothing_cached_and_origin_down_is_a_miss(tmp_path: Path, tls: TlsMaterial) -> None:
    settings = MirrorSettings(
        origins=(("origin.example.test", "https://127.0.0.1:9/"),), ca_file=tls.ca_cert
    )
    mirror = ReadThrough(settings, tmp_path / "mirror", HashCache())
    assert mirror.versions(ADDRESS) is None
    assert mirror.packages(ADDRESS, "1.0.0") is None
    shutil.rmtree(tmp_path / "mirror", ignore_errors=True)


def test_gitreg_mirror_sync(origin: Origin, tmp_path: Path, tls: TlsMaterial) -> None:
    (tmp_path / "mirror.yaml").write_text(
        "cache_dir: mirror-cache\nmodules: []\n"
        f"mirror: {{origins: {{origin.example.test: '{origin.server.url}/'}}, ca_file: {tls.ca_cert}}}\n"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "gitreg",
            "mirror",
            "sync",
            "--config",
            str(tmp_path / "mirror.yaml"),
            "--platform",
            "linux_amd64",
            "origin.example.test/acme/widget@1.0.0",
            "origin.example.test/acme/widget",
            "origin.example.test/acme/gadget@2.0.0",
            "not a provider",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "origin.example.test/acme/widget 1.0.0 linux_amd64: 0.0 MB, verified" in lines
    assert "origin.example.test/acme/widget: no version named, taking the newest, 1.0.0" in lines
    assert (
        "! origin.example.test/acme/gadget 2.0.0: not found, or its signature or checksums did not verify"
        in lines
    )
    assert any(line.startswith("! 'not a provider'") for line in lines)
    assert lines[-1] == "4 providers, 2 failures"
    cached = sorted(p.name for p in (tmp_path / "mirror-cache" / "mirror").rglob("*.zip"))
    assert cached == ["terraform-provider-widget_1.0.0_linux_amd64.zip"]
