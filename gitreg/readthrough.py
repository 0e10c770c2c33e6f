"""Read-through: a provider the mirror lacks is fetched from its origin registry (`origin.py`
verifies it first) and kept in cache_dir/mirror/HOST/NAMESPACE/TYPE/VERSION/: the verified
release (`release.json`) and each package downloaded so far. While the origin is down, the
mirror lists the versions and packages it holds, and nothing else."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import tempfile
import threading
from pathlib import Path

from gitreg.catalog import MirrorSettings
from gitreg.errors import ArchiveError, OriginError
from gitreg.mirror import Address, MirrorPackage, newest_first
from gitreg.origin import OriginPackage, OriginRegistry, OriginRelease
from gitreg.provider_hashes import HashCache
from gitreg.tags import parse_version

log = logging.getLogger(__name__)

_RELEASE = "release.json"


class ReadThrough:
    def __init__(
        self,
        settings: MirrorSettings,
        cache_dir: Path,
        hashes: HashCache,
        own: str = "",
        origin: OriginRegistry | None = None,
    ) -> None:
        self.origin = origin or OriginRegistry(settings)
        self.own = own.lower()  # our own hostname: never an origin to ourselves
        self.root = cache_dir / "mirror"
        self.hashes = hashes
        self._locks: dict[Path, threading.Lock] = {}
        self._locks_lock = threading.Lock()

    def close(self) -> None:
        self.origin.close()

    # The three questions the mirror asks of a source.

    def versions(self, address: Address) -> list[str] | None:
        if address[0] == self.own:
            return None
        held = self._cached_versions(address)
        if not self.origin.is_down(address[0]):
            try:
                # What we hold stays listed when the origin withdraws it: lock files pin it.
                return newest_first({*self.origin.versions(address), *held}) or None
            except OriginError as exc:
                log.warning("read-through %s: %s", "/".join(address), exc)
        return held or None

    def packages(self, address: Address, version: str) -> list[MirrorPackage] | None:
        release = self._release(address, version)
        if release is None:
            return None
        online = not self.origin.is_down(address[0])
        result = []
        for package in release.packages:
            held = self._cached_package(address, version, package)
            if held is None and not online:
                continue  # only what we hold can be served now
            path, hashes = held if held else (None, (package.zh,))
            result.append(MirrorPackage(package.os, package.arch, package.filename, path, hashes))
        return result or None

    def archive(self, address: Address, filename: str) -> Path | None:
        """The package's verified file, downloaded first if needed (once, however many ask);
        raise OriginError when the origin cannot give it now."""
        prefix = re.escape(f"terraform-provider-{address[2]}_")
        match = re.fullmatch(prefix + r"([^_/]+)_[a-z0-9]+_[a-z0-9]+\.zip", filename)
        if match is None:
            return None
        try:
            version = str(parse_version(match[1]))
        except ValueError:
            return None
        release = self._release(address, version)
        package = release.package(filename) if release else None
        if package is None:
            return None
        path = self._folder(address) / version / package.filename
        with self._lock(path):
            if self._cached_package(address, version, package) is None:
                try:
                    self.origin.download(package, path)
                except OSError as exc:  # our disk, not the origin: full, or not writable
                    raise ArchiveError(f"cannot keep {filename}: {exc}") from exc
                self._hash_once(path)
        return path

    def _hash_once(self, path: Path) -> None:
        """Hash a zip just verified, while it is in the page cache: the requests after this one
        (and VERSION.json's h1) find its hashes known."""
        try:
            self.hashes.get(path)
        except (OSError, ValueError) as exc:  # signed, but no zip: Terraform will say so too
            log.error("%s matches its signed checksum but cannot be read: %s", path, exc)

    # The cache.

    def _release(self, address: Address, version: str) -> OriginRelease | None:
        """The version's verified packages: from the cache, else from the origin (then kept)."""
        if address[0] == self.own:
            return None
        cache = self._folder(address) / version / _RELEASE
        known = _read_release(cache)
        if known is not None:
            return known
        with self._lock(cache):
            known = _read_release(cache)
            if known is not None:
                return known
            try:
                release = self.origin.release(address, version)
            except OriginError as exc:
                log.warning("read-through %s %s: %s", "/".join(address), version, exc)
                return None
            try:
                _write_atomically(cache, release.to_json())
            except OSError as exc:  # served all the same; fetched again next time
                log.error("cannot keep %s: %s", cache, exc)
            return release

    def _cached_package(
        self, address: Address, version: str, package: OriginPackage
    ) -> tuple[Path, tuple[str, str]] | None:
        """The package's file and its h1 and zh, if we hold it and it still matches its signed
        checksum."""
        path = self._folder(address) / version / package.filename
        if not path.is_file():
            return None
        try:
            hashes = self.hashes.get(path)
        except (OSError, ValueError):
            hashes = None
        if hashes is None or hashes.zh != package.zh:  # the disk changed it: fetch it again
            log.error("%s no longer matches its signed checksum: removed", path)
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        return path, (hashes.h1, hashes.zh)

    def _cached_versions(self, address: Address) -> list[str]:
        folder = self._folder(address)
        held = set()
        for cache in folder.glob(f"*/{_RELEASE}") if folder.is_dir() else ():
            release = _read_release(cache)
            if release and any((cache.parent / p.filename).is_file() for p in release.packages):
                held.add(release.version)
        return newest_first(held)

    def _folder(self, address: Address) -> Path:
        return self.root.joinpath(*address)

    def _lock(self, path: Path) -> threading.Lock:
        with self._locks_lock:
            return self._locks.setdefault(path, threading.Lock())


def _read_release(path: Path) -> OriginRelease | None:
    try:
        return OriginRelease.from_json(path.read_bytes())
    except OSError:
        return None


def _write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".write-", dir=path.parent)
    os.fchmod(fd, 0o644)  # mkstemp's 0600 would hide it from a web server or a sync user
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
