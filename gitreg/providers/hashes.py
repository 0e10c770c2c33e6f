"""The hashes Terraform records for provider packages.

- `zh:` is the hex SHA-256 of the zip file itself (what SHA256SUMS lists).
- `h1:` is Go's dirhash "Hash1" over the zip's entries: for each entry, sorted by name
  (bytewise), the line `<hex sha256 of its content>  <name>\\n`; the SHA-256 of all those
  lines, base64, prefixed `h1:`. Terraform checks a download over *all* entries, directory
  entries included, but records in the lock file the hash of the unpacked files: a zip with
  directory entries installs once and then fails the next `init`, so such zips are reported.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import threading
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PackageHashes:
    h1: str
    zh: str
    has_directory_entries: bool
    size: int  # the zip's bytes, as hashed for `zh`


def zip_hashes(path: Path) -> PackageHashes:
    with path.open("rb") as f:
        zh = hashlib.file_digest(f, "sha256").hexdigest()
        size = f.tell()
    try:
        with zipfile.ZipFile(path) as z:
            entries = sorted(((_stored_name(i), i) for i in z.infolist()), key=lambda e: e[0])
            lines = hashlib.sha256()
            for name, info in entries:
                if b"\n" in name:
                    raise ValueError(f"{path.name}: an entry name holds a newline")
                content = hashlib.sha256(z.read(info)).hexdigest()
                lines.update(content.encode() + b"  " + name + b"\n")
            has_dirs = any(info.is_dir() for _, info in entries)
    # What zipfile raises on a damaged zip, an unknown compression method or an encrypted entry.
    except (
        zipfile.BadZipFile,
        zlib.error,
        UnicodeDecodeError,
        NotImplementedError,
        RuntimeError,
    ) as exc:
        raise ValueError(f"{path.name} is not a readable zip file: {exc}") from exc
    h1 = "h1:" + base64.b64encode(lines.digest()).decode()
    return PackageHashes(h1, "zh:" + zh, has_dirs, size)


def _stored_name(info: zipfile.ZipInfo) -> bytes:
    # Go, and so Terraform, hashes a name's bytes as stored. Python decodes a name without the
    # UTF-8 flag as cp437 (zips by Info-ZIP hold UTF-8 that way), which encoding undoes.
    return info.orig_filename.encode("utf-8" if info.flag_bits & 0x800 else "cp437")


class HashCache:
    """Each zip hashed once while it does not change (keyed by path, size and mtime); a zip
    with directory entries is reported then, once."""

    def __init__(self) -> None:
        self._known: dict[tuple[Path, int, int], PackageHashes] = {}
        self._lock = threading.Lock()

    def get(self, path: Path) -> PackageHashes:
        stat = path.stat()
        key = (path, stat.st_size, stat.st_mtime_ns)
        with self._lock:
            known = self._known.get(key)
        if known is None:
            known = zip_hashes(path)
            with self._lock:
                first = self._known.setdefault(key, known) is known
            if first and known.has_directory_entries:
                log.warning(_DIRECTORY_ENTRIES, path)
        return known


# Through a network mirror the lock file holds only the h1 of the unpacked files (the mirror's
# hashes are not signed, so Terraform records none of them), and Terraform checks a later
# download against it over all the zip's entries: whatever hashes the mirror lists, the second
# `init` fails. Through providers.v1 the lock file also holds the signed zh, and it passes.
_DIRECTORY_ENTRIES = (
    "%s holds directory entries: through the network mirror, Terraform installs it once, then "
    "refuses it in every `terraform init` that keeps the lock file (the lock holds only the h1 of "
    "the unpacked files, and Terraform checks that over all of the zip's entries). No hashes the "
    "mirror could list avoid this, so gitreg serves the zip as it is. Rebuild it without "
    "directory entries (zip -D): a hosted release with a new SHA256SUMS and signature, a "
    "read-through one by its publisher. Installs through providers.v1 are not affected (their "
    "lock files also hold the zh)"
)
