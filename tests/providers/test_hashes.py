"""The `h1:` and `zh:` hashes of provider zips, against the values Terraform itself wrote."""

from __future__ import annotations

import io
import stat
import struct
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from gitreg.providers.hashes import zip_hashes

EXECUTABLE = "terraform-provider-widget_v1.0.0"
PROGRAM = b"#!/bin/sh\nexit 1\n"


@dataclass(frozen=True)
class ZipSpec:
    entries: tuple[tuple[str, bytes], ...]  # written in this order; "…/" is a directory entry
    stamp: tuple[int, int, int, int, int, int] = (2020, 1, 1, 0, 0, 0)
    utf8_flag: bool = True  # False: non-ASCII names as Info-ZIP's `zip` writes them


ZIPS = {
    "plain": ZipSpec(((EXECUTABLE, PROGRAM),)),
    # The same file at another time: another zip (zh), the same contents (h1).
    "restamped": ZipSpec(((EXECUTABLE, PROGRAM),), stamp=(2021, 6, 1, 12, 0, 0)),
    # Bytewise, "a-b" < "a/x" < "terraform-…"; sorted by path components "a/x" would come first,
    # and the order written is neither.
    "order": ZipSpec(((EXECUTABLE, PROGRAM), ("a/x", b"x\n"), ("a-b", b"b\n"))),
    # Go hashes the name's bytes as stored, whatever the flag says; Python decodes them as cp437.
    "info-zip-name": ZipSpec(
        ((EXECUTABLE, PROGRAM), ("docs/é.md", b"x\n"), ("docs/z.md", b"z\n")), utf8_flag=False
    ),
    "directory-entry": ZipSpec(
        ((EXECUTABLE, PROGRAM), ("docs/", b""), ("docs/README.md", b"# widget\n"))
    ),
}


def provider_zip(spec: ZipSpec, method: int = zipfile.ZIP_STORED) -> bytes:
    """The same spec always gives the same bytes: fixed times, modes, system and order.
    Stored by default, so that the bytes do not depend on the zlib Python was built with."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, content in spec.entries:
            info = zipfile.ZipInfo(name, date_time=spec.stamp)
            info.create_system = 3  # Unix, wherever the test runs
            kind = stat.S_IFDIR if name.endswith("/") else stat.S_IFREG
            info.external_attr = (kind | 0o755) << 16
            info.compress_type = method
            z.writestr(info, content)
    data = out.getvalue()
    return data if spec.utf8_flag else _rewrite_headers(data, 6, 8, lambda flags: flags & ~0x800)


def _rewrite_headers(data: bytes, local: int, central: int, change: Callable[[int], int]) -> bytes:
    """Change a two-byte field of every local and central header, as another writer would set it."""
    out = bytearray(data)
    for signature, offset in ((b"PK\x03\x04", local), (b"PK\x01\x02", central)):
        at = out.find(signature)
        while at >= 0:
            (value,) = struct.unpack_from("<H", out, at + offset)
            struct.pack_into("<H", out, at + offset, change(value))
            at = out.find(signature, at + 4)
    return bytes(out)


def test_the_same_spec_gives_the_same_bytes() -> None:
    for name, spec in ZIPS.items():
        assert provider_zip(spec) == provider_zip(spec), name


# Written by Terraform v1.11.4 into .terraform.lock.hcl for exactly these zips, each one the
# linux_amd64 package of one version of example.com/acme/widget in a packed filesystem mirror
# (example.com/acme/widget/terraform-provider-widget_VERSION_linux_amd64.zip), by
#   TF_CLI_CONFIG_FILE=cli.tfrc CHECKPOINT_DISABLE=1 terraform init
# with `provider_installation { filesystem_mirror { path = "…" include = ["example.com/*/*"] } }`
# in cli.tfrc; `terraform providers lock -fs-mirror=… -platform=linux_amd64` wrote the same h1.
# The zh come from `terraform init` against gitreg's providers.v1 serving the same zips (with a
# SHA256SUMS that lists them, signed by gitreg): Terraform checks each download against it.
@pytest.mark.parametrize(
    ("case", "h1", "zh"),
    [
        (
            "plain",
            "h1:YTdICHV4R93sZ+hqgFtbAAq3msB4Wtud+b5SaRdxGcc=",
            "zh:6165a37e2761d39b39e50ee2879c2e558e78b9ff2a797d4ed290620f1cc8d30d",
        ),
        (
            "restamped",
            "h1:YTdICHV4R93sZ+hqgFtbAAq3msB4Wtud+b5SaRdxGcc=",
            "zh:09c7f915b14ebcd27037712cbe82d83f59db00bcf666c953279238df4171fa9d",
        ),
        (
            "order",
            "h1:Ig6aROlILDYexF56it+oep5YYso9EKa7yyG16Fmfm7Q=",
            "zh:aa77b2d66b49191e87057f6c6ae80a638d1ab830d1515df98453c933d1952b37",
        ),
        (
            "info-zip-name",
            "h1:KfIHr83mJdvdcS1p8EKLfxYdsAzI+zcaEZue8+jqPio=",
            "zh:ed05ce1449f2b10679a4e8ab967c1ca201069a3a4601f387785128b1399d020f",
        ),
    ],
)
def test_hashes_are_those_terraform_wrote(tmp_path: Path, case: str, h1: str, zh: str) -> None:
    path = tmp_path / "package.zip"
    path.write_bytes(provider_zip(ZIPS[case]))
    hashes = zip_hashes(path)
    assert (hashes.h1, hashes.zh, hashes.has_directory_entries) == (h1, zh, False)


def test_a_zip_with_a_directory_entry(tmp_path: Path) -> None:
    # Terraform v1.11.4 (as above) wrote `locked`: the hash of the unpacked files, without the
    # line for "docs/". It checks a download over all entries, `verified`: a network mirror that
    # listed only `verified` installed this zip, one that listed only `locked` was refused ("doesn't
    # match the expected checksum"). With only h1 in the lock file (a filesystem or network
    # mirror), the next `terraform init` without .terraform then fails; through providers.v1 the
    # lock file also holds the zh, and the next init passes.
    locked = "h1:DdBOqPe2tFACtl+b4bUI/dUyImx33foYdxEN3RLpOlA="
    verified = "h1:vTLt/O46m5NvdCA3cHMCnNNMK9UIfk5JH2ncm08BoOU="
    path = tmp_path / "package.zip"
    path.write_bytes(provider_zip(ZIPS["directory-entry"]))
    hashes = zip_hashes(path)
    assert hashes.h1 == verified != locked
    assert hashes.zh == "zh:ff8959e5f68476b45dc7790bad572cc2273e561e38a2e2e9b4ce687db3f42ce6"
    assert hashes.has_directory_entries


def _damaged(content: bytes) -> bytes:
    data = provider_zip(ZipSpec(((EXECUTABLE, PROGRAM * 20),)), zipfile.ZIP_DEFLATED)
    start = 30 + len(EXECUTABLE)  # the compressed bytes, after the local header and the name
    return data[:start] + content + data[start + len(content) :]


PLAIN = provider_zip(ZIPS["plain"])


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param(PROGRAM, "is not a readable zip file", id="a-script"),
        pytest.param(b"", "is not a readable zip file", id="empty"),
        pytest.param(PLAIN[: len(PLAIN) // 2], "is not a readable zip file", id="truncated"),
        pytest.param(
            PLAIN.replace(b"exit 1", b"exit 2"), "Bad CRC-32", id="content-changed-after-zipping"
        ),
        pytest.param(_damaged(b"\xff\xff\xff\xff"), "is not a readable zip file", id="bad-deflate"),
        pytest.param(
            _rewrite_headers(PLAIN, 6, 8, lambda flags: flags | 0x1), "encrypted", id="encrypted"
        ),
        pytest.param(
            _rewrite_headers(PLAIN, 8, 10, lambda _: 99),
            "compression method is not supported",
            id="unknown-compression",
        ),
        pytest.param(
            provider_zip(ZipSpec(((EXECUTABLE, PROGRAM), ("a\nb", b"")))),
            "an entry name holds a newline",
            id="newline-in-a-name",
        ),
    ],
)
def test_what_is_not_a_readable_zip_is_refused(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "terraform-provider-widget_1.0.0_linux_amd64.zip"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=message) as refused:
        zip_hashes(path)
    assert str(refused.value).startswith(path.name)
