"""The provider network mirror: one answer from several sources, first one that knows wins.

Sources: gitreg's hosted providers (under the catalog's hostname), folders written by
`terraform providers mirror` (the packed layout: HOST/NAMESPACE/TYPE/terraform-provider-TYPE_
VERSION_OS_ARCH.zip), and read-through from origin registries (`readthrough.py`), asked last
and in threads of its own.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Protocol, TypeVar

from gitreg.address import ProviderAddress
from gitreg.mirror.packages import MirrorPackage, newest_first
from gitreg.mirror.readthrough import ReadThrough
from gitreg.providers.filenames import PackageFile
from gitreg.providers.hashes import HashCache
from gitreg.providers.hosted import ProviderEntry, Providers
from gitreg.tags import parse_version

T = TypeVar("T")

log = logging.getLogger(__name__)


class MirrorSource(Protocol):
    def versions(self, address: ProviderAddress) -> list[str] | None: ...

    def packages(self, address: ProviderAddress, version: str) -> list[MirrorPackage] | None: ...

    def archive(self, address: ProviderAddress, filename: str) -> Path | None: ...


class HostedSource:
    def __init__(self, hostname: str, providers: Providers, hashes: HashCache) -> None:
        self.hostname = hostname.lower()
        self.providers = providers
        self.hashes = hashes

    def _entry(self, address: ProviderAddress) -> ProviderEntry | None:
        if address.hostname != self.hostname:
            return None
        return self.providers.get(address.namespace, address.type)

    def versions(self, address: ProviderAddress) -> list[str] | None:
        entry = self._entry(address)
        return [r.version for r in entry.releases] if entry else None

    def packages(self, address: ProviderAddress, version: str) -> list[MirrorPackage] | None:
        entry = self._entry(address)
        release = entry.release(version) if entry else None
        if release is None:
            return None
        found = [
            MirrorPackage(p.os, p.arch, p.filename, p.path, hashes)
            for p in release.packages
            if (hashes := _hashes(self.hashes, p.path))
        ]
        return found or None

    def archive(self, address: ProviderAddress, filename: str) -> Path | None:
        entry = self._entry(address)
        for release in entry.releases if entry else ():
            for package in release.packages:
                if package.filename == filename:
                    return package.path
        return None


class FolderSource:
    """A folder as `terraform providers mirror` writes it, for air-gapped sites."""

    def __init__(self, root: Path, hashes: HashCache) -> None:
        self.root = root
        self.hashes = hashes

    def _zips(self, address: ProviderAddress) -> list[tuple[PackageFile, Path]]:
        if address.hostname is None:
            return []
        folder = self.root.joinpath(*address.parts)
        if not folder.is_dir():
            return []
        found = []
        for path in sorted(folder.glob("*.zip")):
            package = PackageFile.find(path.name, address.type)
            if package is None:
                continue
            try:
                parse_version(package.version)
            except ValueError:
                continue
            found.append((package, path))
        return found

    def versions(self, address: ProviderAddress) -> list[str] | None:
        zips = self._zips(address)
        return newest_first({package.version for package, _ in zips}) if zips else None

    def packages(self, address: ProviderAddress, version: str) -> list[MirrorPackage] | None:
        found = [
            MirrorPackage(package.os, package.arch, path.name, path, hashes)
            for package, path in self._zips(address)
            if package.version == version and (hashes := _hashes(self.hashes, path))
        ]
        return found or None

    def archive(self, address: ProviderAddress, filename: str) -> Path | None:
        return next((path for _, path in self._zips(address) if path.name == filename), None)


def _hashes(cache: HashCache, path: Path) -> tuple[str, ...]:
    """h1 and zh of a zip; none for one that cannot be read (logged: it is left out, the rest
    of the version still serves). A zip with directory entries gets the same two: no list of
    hashes lets Terraform reinstall it with the lock file it wrote (HashCache reports it)."""
    try:
        hashes = cache.get(path)
    except (OSError, ValueError) as exc:
        log.error("mirror: leaving out %s: %s", path, exc)
        return ()
    return (hashes.h1, hashes.zh)


class NetworkMirror:
    """The local sources (hosted providers, folders), then read-through when it is on."""

    def __init__(
        self,
        sources: list[MirrorSource],
        read_through: ReadThrough | None = None,
        own: str = "",
    ) -> None:
        self.sources = sources
        self.read_through = read_through
        self.own = own.lower()

    def close(self) -> None:
        """Close read-through's client and threads."""
        if self.read_through is not None:
            self.read_through.close()

    async def answer(
        self,
        address: ProviderAddress,
        ask: Callable[[MirrorSource], T | None],
        download: bool = False,
    ) -> T | None:
        """What the first source that knows answers to `ask`: the local ones read disks in the
        event loop's executor; read-through runs in threads of its own, refused at once when
        they are taken, so an origin that stalls holds up neither the hosted providers nor a
        reload. `download`: the deadline of a package, else that of an answer."""
        found: T | None = await asyncio.to_thread(partial(self._local, ask))
        remote = self.read_through
        if found or remote is None or not remote.reads(address):
            return found
        return await remote.run(address, partial(ask, remote), download)

    def missing(self, address: ProviderAddress) -> str:
        """Why no source has `address`, as words to append to "the mirror has no ...": read-
        through is off, or the host is not an origin it reads; empty when it simply has none."""
        if address.hostname is None or address.hostname == self.own:
            return ""
        if self.read_through is None:
            return " (read-through is off: mirror.read_through)"
        refusal = self.read_through.refusal(address)
        return f" ({refusal})" if refusal else ""

    def _local(self, ask: Callable[[MirrorSource], T | None]) -> T | None:
        for source in self.sources:
            found = ask(source)
            if found:
                return found
        return None
