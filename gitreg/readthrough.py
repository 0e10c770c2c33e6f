"""Read-through: a provider the mirror lacks is fetched from its origin registry (discovery,
then providers.v1), verified as Terraform would (the origin's signature over SHA256SUMS, then
each zip's checksum) before anything is kept, and cached in cache_dir/mirror/. What is cached
keeps serving when the origin is down. A zip is downloaded once, however many ask at once."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import ssl
import tempfile
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import httpx

from gitreg.catalog import MirrorSettings
from gitreg.mirror import Address, MirrorPackage
from gitreg.provider_hashes import HashCache
from gitreg.signing import Keyring
from gitreg.tags import parse_version

log = logging.getLogger(__name__)


class OriginError(Exception):
    pass


class ReadThrough:
    def __init__(
        self, settings: MirrorSettings, cache_dir: Path, hashes: HashCache, own: str = ""
    ) -> None:
        self.settings = settings
        self.own = own.lower()  # our own hostname: never an origin to ourselves
        self.root = cache_dir / "mirror"
        self.hashes = hashes
        verify: ssl.SSLContext | bool = True
        if settings.ca_file:
            verify = ssl.create_default_context(cafile=str(settings.ca_file))
        self.client = httpx.Client(verify=verify, timeout=30, follow_redirects=True)
        self._locks: dict[Path, threading.Lock] = {}
        self._locks_lock = threading.Lock()

    def close(self) -> None:
        self.client.close()

    # The three questions the mirror asks of a source.

    def versions(self, address: Address) -> list[str] | None:
        if address[0] == self.own:
            return None
        cache = self._folder(address) / "versions.json"
        try:
            listed = self._get_json(self._provider_url(address) + "versions")["versions"]
            versions = [str(parse_version(v["version"])) for v in listed]
            _write_atomically(cache, json.dumps(versions).encode())
            return versions
        except (OriginError, KeyError, TypeError, ValueError) as exc:
            log.warning("read-through %s: %s; serving what is cached", "/".join(address), exc)
            cached = _read_json(cache)
            return [str(v) for v in cached] if isinstance(cached, list) else None

    def packages(self, address: Address, version: str) -> list[MirrorPackage] | None:
        meta = self._metadata(address, version) if address[0] != self.own else None
        if meta is None:
            return None
        folder = self._folder(address) / version
        result = []
        for platform, item in sorted(meta["platforms"].items()):
            os_name, arch = platform.split("_", 1)
            path = folder / item["filename"]
            hashes = (self.hashes.get(path).h1, item["zh"]) if path.is_file() else (item["zh"],)
            result.append(
                MirrorPackage(
                    os_name, arch, item["filename"], path if path.is_file() else None, hashes
                )
            )
        return result

    def archive(self, address: Address, filename: str) -> Path | None:
        version = filename.split("_")[1] if filename.count("_") >= 3 else ""
        try:
            version = str(parse_version(version))
        except ValueError:
            return None
        meta = self._metadata(address, version) if address[0] != self.own else None
        item = next(
            (i for i in (meta or {}).get("platforms", {}).values() if i["filename"] == filename),
            None,
        )
        if item is None:
            return None
        path = self._folder(address) / version / filename
        with self._lock(path):  # one download, however many ask
            if not path.is_file():
                self._download(item, path)
        return path

    # Fetching and verifying.

    def _metadata(self, address: Address, version: str) -> dict[str, Any] | None:
        """The version's platforms, file names and checksums, verified once and kept."""
        cache = self._folder(address) / version / "metadata.json"
        known = _read_json(cache)
        if known is not None:
            return known  # type: ignore[no-any-return]
        with self._lock(cache):
            known = _read_json(cache)
            if known is not None:
                return known  # type: ignore[no-any-return]
            try:
                meta = self._fetch_metadata(address, version)
            except (OriginError, KeyError, TypeError, ValueError) as exc:
                log.warning("read-through %s %s: %s", "/".join(address), version, exc)
                return None
            _write_atomically(cache, json.dumps(meta).encode())
            return meta

    def _fetch_metadata(self, address: Address, version: str) -> dict[str, Any]:
        base = self._provider_url(address)
        listed = self._get_json(base + "versions")["versions"]
        entry = next((v for v in listed if str(parse_version(v["version"])) == version), None)
        if entry is None:
            raise OriginError(f"the origin has no version {version}")
        platforms: dict[str, Any] = {}
        sums: dict[str, str] | None = None
        for platform in entry.get("platforms") or []:
            url = f"{base}{version}/download/{platform['os']}/{platform['arch']}"
            download = self._get_json(url)
            if sums is None:
                sums = self._verified_sums(url, download)
            filename = download["filename"]
            if sums.get(filename) != download["shasum"]:
                raise OriginError(f"{filename}: its shasum is not the one in the signed SHA256SUMS")
            platforms[f"{platform['os']}_{platform['arch']}"] = {
                "filename": filename,
                "url": urljoin(url, download["download_url"]),
                "zh": "zh:" + download["shasum"],
            }
        if not platforms:
            raise OriginError(f"the origin lists no platform for {version}")
        return {"version": version, "platforms": platforms}

    def _verified_sums(self, url: str, download: dict[str, Any]) -> dict[str, str]:
        sums = self._get(urljoin(url, download["shasums_url"]))
        signature = self._get(urljoin(url, download["shasums_signature_url"]))
        keys = [k["ascii_armor"] for k in download["signing_keys"]["gpg_public_keys"]]
        if Keyring.from_armored(keys).verifier_of(sums, signature) is None:
            raise OriginError("SHA256SUMS is not signed by any key the origin lists")
        result = {}
        for line in sums.decode("utf-8", "replace").splitlines():
            parts = line.split()
            if len(parts) == 2:
                result[parts[1]] = parts[0].lower()
        return result

    def _download(self, item: dict[str, Any], path: Path) -> None:
        """Stream to a temporary file, check the checksum, then rename: never a partial file."""
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".download-", dir=path.parent)
        try:
            digest = hashlib.sha256()
            with os.fdopen(fd, "wb") as out, self.client.stream("GET", item["url"]) as response:
                if response.status_code != 200:
                    raise OriginError(f"{item['url']}: HTTP {response.status_code}")
                for chunk in response.iter_bytes():
                    digest.update(chunk)
                    out.write(chunk)
            if "zh:" + digest.hexdigest() != item["zh"]:
                raise OriginError(f"{item['filename']} does not match its signed checksum")
            os.replace(tmp, path)
        except httpx.HTTPError as exc:
            raise OriginError(f"{item['url']}: {exc}") from exc
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)

    def _provider_url(self, address: Address) -> str:
        host, namespace, kind = address
        origin = self.settings.origin_url(host)
        services = self._get_json(urljoin(origin, ".well-known/terraform.json"))
        base = services.get("providers.v1")
        if not isinstance(base, str):
            raise OriginError(f"{host} offers no providers.v1")
        return urljoin(urljoin(origin, ".well-known/terraform.json"), base) + f"{namespace}/{kind}/"

    def _get_json(self, url: str) -> dict[str, Any]:
        try:
            body = json.loads(self._get(url))
        except ValueError as exc:
            raise OriginError(f"{url}: not JSON") from exc
        if not isinstance(body, dict):
            raise OriginError(f"{url}: not a JSON object")
        return body

    def _get(self, url: str) -> bytes:
        try:
            response = self.client.get(url)
        except httpx.HTTPError as exc:
            raise OriginError(f"{url}: {exc}") from exc
        if response.status_code != 200:
            raise OriginError(f"{url}: HTTP {response.status_code}")
        return response.content

    def _folder(self, address: Address) -> Path:
        return self.root.joinpath(*address)

    def _lock(self, path: Path) -> threading.Lock:
        with self._locks_lock:
            return self._locks.setdefault(path, threading.Lock())


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".write-", dir=path.parent)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    os.replace(tmp, path)
