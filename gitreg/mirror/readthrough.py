"""Read-through: a provider the mirror lacks, fetched from its origin registry and kept.

The origin's answer is verified first (`origin.py`), then kept in
cache_dir/mirror/HOST/NAMESPACE/TYPE/VERSION/: the verified release (`release.json`) and each
package downloaded so far. While the origin is down, the mirror lists the versions and packages
it holds, and nothing else. It reads only the origins `reach.py` allows (any other hostname costs
nothing: no connection, no folder, no counter), in threads of its own (`origin_work.py`). See
docs/providers.md."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from gitreg.address import ProviderAddress
from gitreg.atomic import write_atomically
from gitreg.catalog.mirror_settings import MirrorSettings
from gitreg.errors import ArchiveError, OriginError
from gitreg.mirror.origin import OriginPackage, OriginRegistry, OriginRelease
from gitreg.mirror.origin_work import OriginWork
from gitreg.mirror.packages import MirrorPackage, newest_first
from gitreg.providers.filenames import PackageFile
from gitreg.providers.hashes import HashCache
from gitreg.tags import parse_version

log = logging.getLogger(__name__)

_RELEASE = "release.json"

T = TypeVar("T")


class ReadThrough:
    def __init__(
        self,
        settings: MirrorSettings,
        cache_dir: Path,
        hashes: HashCache,
        own: str = "",
        origin: OriginRegistry | None = None,
    ) -> None:
        self.settings = settings
        self.origin = origin or OriginRegistry(settings)
        self.own = own.lower()  # our own hostname: never an origin to ourselves
        self.root = cache_dir / "mirror"
        self.hashes = hashes
        self.work = OriginWork(settings.workers, settings.per_origin)
        self._locks: dict[Path, threading.Lock] = {}
        self._locks_lock = threading.Lock()

    def close(self) -> None:
        self.work.close()
        self.origin.close()

    def reads(self, address: ProviderAddress) -> bool:
        """Is `address` another registry's provider, on an origin read-through may read?"""
        host = address.hostname
        return host is not None and host != self.own and self.origin.reach.allows(host)

    def refusal(self, address: ProviderAddress) -> str | None:
        """Why read-through does not read `address`'s origin; None when it does, or when the
        provider is the registry's own."""
        host = address.hostname
        if host is None or host == self.own or self.reads(address):
            return None
        allowed = ", ".join(sorted(self.origin.reach.origins))
        return f"read-through reads only {allowed} (mirror.origins), not {host}"

    async def run(self, address: ProviderAddress, work: Callable[[], T], download: bool) -> T:
        """`work()` in read-through's own threads, within the deadline of a package download
        or of an answer; raise OriginBusy when they, or the origin's share, are all taken."""
        seconds = self.settings.download_deadline if download else self.settings.deadline
        return await self.work.run(address.hostname or "", seconds, work)

    # The three questions the mirror asks of a source.

    def versions(self, address: ProviderAddress) -> list[str] | None:
        host = address.hostname
        if host is None or not self.reads(address):
            return None
        held = self._cached_versions(address)
        if not self.origin.is_down(host):
            try:
                # What we hold stays listed when the origin withdraws it: lock files pin it.
                return newest_first({*self.origin.versions(address), *held}) or None
            except OriginError as exc:
                log.warning("read-through %s: %s", address, exc)
        return held or None

    def packages(self, address: ProviderAddress, version: str) -> list[MirrorPackage] | None:
        release = self._release(address, version)
        if release is None or address.hostname is None:  # _release reads none without one
            return None
        online = not self.origin.is_down(address.hostname)
        result = []
        for package in release.packages:
            held = self._cached_package(address, version, package)
            if held is None and not online:
                continue  # only what we hold can be served now
            path, hashes = held if held else (None, (package.zh,))
            result.append(MirrorPackage(package.os, package.arch, package.filename, path, hashes))
        return result or None

    def archive(self, address: ProviderAddress, filename: str) -> Path | None:
        """The package's verified file, downloaded first if needed (once, however many ask);
        raise OriginError when the origin cannot give it now."""
        named = PackageFile.find(filename, address.type)
        if named is None or not self.reads(address):
            return None
        try:
            version = str(parse_version(named.version))
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
                    self.origin.download(address, package, path)
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

    def _release(self, address: ProviderAddress, version: str) -> OriginRelease | None:
        """The version's verified packages: from the cache, else from the origin (then kept)."""
        if not self.reads(address):
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
                log.warning("read-through %s %s: %s", address, version, exc)
                return None
            try:
                write_atomically(cache, release.to_json())
            except OSError as exc:  # served all the same; fetched again next time
                log.error("cannot keep %s: %s", cache, exc)
            return release

    def _cached_package(
        self, address: ProviderAddress, version: str, package: OriginPackage
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

    def _cached_versions(self, address: ProviderAddress) -> list[str]:
        folder = self._folder(address)
        held = set()
        for cache in folder.glob(f"*/{_RELEASE}") if folder.is_dir() else ():
            release = _read_release(cache)
            if release and any((cache.parent / p.filename).is_file() for p in release.packages):
                held.add(release.version)
        return newest_first(held)

    def _folder(self, address: ProviderAddress) -> Path:
        return self.root.joinpath(*address.parts)

    def _lock(self, path: Path) -> threading.Lock:
        with self._locks_lock:
            return self._locks.setdefault(path, threading.Lock())


def _read_release(path: Path) -> OriginRelease | None:
    try:
        return OriginRelease.from_json(path.read_bytes())
    except OSError:
        return None
