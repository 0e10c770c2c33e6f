"""A provider zip with directory entries, through the network mirror: Terraform installs it once,
then refuses it with the lock file that install wrote, whatever hashes the mirror lists (the
lock holds only the h1 of the unpacked files; Terraform checks it over all the zip's entries).
gitreg serves such a zip as it is and warns once; rebuilt without them, the same lock passes."""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from gitreg.address import ProviderAddress
from gitreg.catalog.load import load_catalog
from gitreg.catalog.mirror_settings import MirrorSettings
from gitreg.catalog.settings import TlsFiles
from gitreg.mirror.readthrough import ReadThrough
from gitreg.process.tlscert import TlsMaterial
from gitreg.providers.hashes import HashCache, zip_hashes
from tests.support.provider_releases import new_key, provider_zip_with_docs, write_key
from tests.support.servers import RegistryServer, wait_until
from tests.support.terraform_cli import needs_terraform, run_terraform
from tests.support.tls_clients import served_over_tls

ADDRESS = ProviderAddress.parse("example.com/acme/widget")
FILENAME = "terraform-provider-widget_1.0.0_linux_amd64.zip"
VERSION_JSON = "/v1/mirror/example.com/acme/widget/1.0.0.json"
# Terraform wraps its messages: they are compared with the whitespace squeezed.
LOCK_REFUSED = "doesn't match any of the checksums previously recorded in the dependency lock"


@dataclass
class Mirror:
    url: str
    zip_path: Path  # in a folder as `terraform providers mirror` writes it
    client: httpx.Client


@pytest.fixture
def mirror(tmp_path: Path, tls: TlsMaterial) -> Iterator[Mirror]:
    zip_path = tmp_path / "mirror" / "example.com" / "acme" / "widget" / FILENAME
    zip_path.parent.mkdir(parents=True)
    zip_path.write_bytes(provider_zip_with_docs("widget", "1.0.0"))
    (tmp_path / "registry.yaml").write_text(
        "hostname: registry.example.test\ncache_dir: cache\nmodules: []\n"
        "mirror: {folders: [mirror], read_through: false}\n"
    )
    with served_over_tls(tmp_path / "registry.yaml", tls) as (server, client):
        yield Mirror(server.url, zip_path, client)


def warnings_about(path: Path, caplog: pytest.LogCaptureFixture) -> list[str]:
    messages = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    return [m for m in messages if m.startswith(f"{path} holds directory entries")]


def files_only_h1(path: Path, tmp_path: Path) -> str:
    """The h1 of the zip's files without its directory entries: that of the unpacked files."""
    rebuilt = tmp_path / "files-only.zip"
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(rebuilt, "w") as out:
        for info in source.infolist():
            if not info.is_dir():
                out.writestr(info, source.read(info))
    return zip_hashes(rebuilt).h1


def test_the_mirror_lists_both_hashes_of_such_a_zip_and_warns_once(
    mirror: Mirror, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    served = zip_hashes(mirror.zip_path)
    assert served.has_directory_entries
    for _ in range(3):
        body = mirror.client.get(VERSION_JSON).json()
        assert body == {
            "archives": {"linux_amd64": {"url": FILENAME, "hashes": [served.h1, served.zh]}}
        }
    (message,) = warnings_about(mirror.zip_path, caplog)
    assert "Rebuild it without directory entries" in message


def test_the_warning_comes_once_per_zip_and_again_when_it_changes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    path = tmp_path / FILENAME
    path.write_bytes(provider_zip_with_docs("widget", "1.0.0"))
    cache = HashCache()
    for _ in range(3):
        cache.get(path)
    assert len(warnings_about(path, caplog)) == 1
    path.write_bytes(provider_zip_with_docs("widget", "1.0.1"))  # another size: hashed anew
    cache.get(path)
    assert len(warnings_about(path, caplog)) == 2
    path.write_bytes(provider_zip_with_docs("widget", "1.0.2", directory_entries=False))
    cache.get(path)
    assert len(warnings_about(path, caplog)) == 2


def test_read_through_lists_the_same_hashes_for_such_a_zip_and_warns_once(
    tmp_path: Path, tls: TlsMaterial, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    key = new_key("origin")
    write_key(key, tmp_path / "origin.asc")
    release = tmp_path / "releases" / "1.0.0"
    release.mkdir(parents=True)
    data = provider_zip_with_docs("widget", "1.0.0")
    (release / FILENAME).write_bytes(data)
    (release / "terraform-provider-widget_1.0.0_manifest.json").write_text(
        json.dumps({"version": 1, "metadata": {"protocol_versions": ["6.0"]}})
    )
    sums = release / "terraform-provider-widget_1.0.0_SHA256SUMS"
    sums.write_text(f"{hashlib.sha256(data).hexdigest()}  {FILENAME}\n")
    sums.with_name(sums.name + ".sig").write_bytes(bytes(key.sign(sums.read_bytes())))
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\nsigning: {keys: [origin.asc]}\n"
        "providers:\n  - {namespace: acme, type: widget, artifacts: releases}\n"
    )
    origin = RegistryServer(
        load_catalog(tmp_path / "registry.yaml"), TlsFiles(tls.certfile, tls.keyfile)
    )
    with origin:
        settings = MirrorSettings(origins=(("example.com", f"{origin.url}/"),), ca_file=tls.ca_cert)
        read_through = ReadThrough(settings, tmp_path / "mirror-cache", HashCache())
        try:
            (before,) = read_through.packages(ADDRESS, "1.0.0") or []
            cached = read_through.archive(ADDRESS, FILENAME)
            assert cached is not None
            for _ in range(3):
                (after,) = read_through.packages(ADDRESS, "1.0.0") or []
        finally:
            read_through.close()
    hashes = zip_hashes(cached)
    assert hashes.has_directory_entries
    assert before.hashes == (hashes.zh,)  # not downloaded yet: the signed checksum alone
    assert after.hashes == (hashes.h1, hashes.zh)
    assert len(warnings_about(cached, caplog)) == 1


def terraform_init(mirror: Mirror, workdir: Path, ca_cert: Path) -> str:
    """`terraform init` through the mirror, without .terraform (the lock file kept if there);
    its output with whitespace squeezed, and "rc=N" first."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "main.tf").write_text(
        "terraform {\n  required_providers {\n"
        '    widget = { source = "example.com/acme/widget", version = "1.0.0" }\n'
        "  }\n}\n"
    )
    (workdir / "cli.tfrc").write_text(
        f'provider_installation {{\n  network_mirror {{ url = "{mirror.url}/v1/mirror/" }}\n}}\n'
    )
    shutil.rmtree(workdir / ".terraform", ignore_errors=True)
    done = run_terraform(workdir, ca_cert, "init", "-input=false")
    return f"rc={done.returncode} " + " ".join((done.stdout + done.stderr).split())


def locked_hashes(workdir: Path) -> list[str]:
    text = (workdir / ".terraform.lock.hcl").read_text()
    return [
        line.strip().strip('",') for line in text.splitlines() if '"h1:' in line or '"zh:' in line
    ]


@needs_terraform
def test_terraform_installs_once_then_refuses_it_with_its_lock_file_until_rebuilt(
    mirror: Mirror, tmp_path: Path, tls: TlsMaterial, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    user = tmp_path / "user"
    served = zip_hashes(mirror.zip_path)
    unpacked = files_only_h1(mirror.zip_path, tmp_path)
    assert served.h1 != unpacked

    first = terraform_init(mirror, user, tls.ca_cert)
    assert first.startswith("rc=0 ") and "(verified checksum)" in first, first
    # Not the h1 the mirror listed (over all entries), nor its zh: the h1 of the unpacked files.
    assert locked_hashes(user) == [unpacked]

    second = terraform_init(mirror, user, tls.ca_cert)
    assert second.startswith("rc=1 ") and LOCK_REFUSED in second, second
    assert locked_hashes(user) == [unpacked]
    assert len(warnings_about(mirror.zip_path, caplog)) == 1

    # What the warning tells the operator to do: the same files, no directory entries. The
    # user's lock file, kept as it was, now passes.
    mirror.zip_path.write_bytes(provider_zip_with_docs("widget", "1.0.0", directory_entries=False))
    rebuilt = zip_hashes(mirror.zip_path)
    assert rebuilt.h1 == unpacked and not rebuilt.has_directory_entries
    wait_until(  # the mirror reuses a VERSION.json answer for a few seconds
        lambda: rebuilt.zh in mirror.client.get(VERSION_JSON).text, 30, "the rebuilt zip's hashes"
    )
    third = terraform_init(mirror, user, tls.ca_cert)
    assert third.startswith("rc=0 ") and "(verified checksum)" in third, third
    assert locked_hashes(user) == [unpacked]
