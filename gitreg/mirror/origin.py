"""Origin registries as read-through sees them, every answer verified before it is believed.

Read-through asks discovery, then providers.v1, and checks the SHA256SUMS signature against the
keys the origin lists, each package's checksum against that file, names and platforms against
what the protocol allows. Work for one origin asks only the hosts `reach.py` allows it (its own,
and download hosts), follows redirects here one by one, each checked before it is sent, and
carries that origin's token to its own host and port alone, within the deadline of the work
(`origin_work.py`). An origin that could not be reached is left alone for a while, so that while
it is down a request costs a look at the cache and nothing more. See docs/providers.md."""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

from gitreg.address import ProviderAddress
from gitreg.atomic import atomic_writer
from gitreg.catalog.mirror_settings import MirrorSettings
from gitreg.errors import OriginError, OriginUnavailable
from gitreg.mirror import reach
from gitreg.mirror.origin_work import carried, remaining
from gitreg.providers.filenames import PackageFile, platform_problem
from gitreg.signing import Keyring
from gitreg.tags import parse_version, version_sort_key

log = logging.getLogger(__name__)

RETRY_AFTER = 30.0  # seconds an origin that failed is not asked again
MAX_ARCHIVE_BYTES = 2 << 30  # a provider zip larger than this is refused (the largest are ~0.5 GB)
_MAX_ANSWER_BYTES = 16 << 20  # a JSON answer, SHA256SUMS or signature
_DISCOVERY_TTL = 600.0
_CONNECT, _READ = 5.0, 20.0  # seconds: to connect; between two chunks (not the whole body)
_TIMEOUT = httpx.Timeout(_READ, connect=_CONNECT)
_MAX_REDIRECTS = 5
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class OriginPackage:
    os: str
    arch: str
    filename: str  # a PackageFile's name, made here: never a name the origin chose
    url: str  # absolute: where the origin keeps it
    zh: str  # "zh:" + its sha256, as listed in the signed SHA256SUMS


@dataclass(frozen=True)
class HostHealth:
    """What an origin (or a host it sends downloads to) did last: for /v1/status and /metrics."""

    host: str  # host[:port]
    up: bool  # False while it is left alone after a failure
    last_error: str | None  # the last failure, kept after it recovers
    requests: int
    failures: int


@dataclass(frozen=True)
class OriginRelease:
    """One version's packages, verified: safe to keep and to trust while the origin is down."""

    version: str
    packages: tuple[OriginPackage, ...]

    def package(self, filename: str) -> OriginPackage | None:
        return next((p for p in self.packages if p.filename == filename), None)

    def to_json(self) -> bytes:
        packages = [vars(p) for p in self.packages]
        return json.dumps({"version": self.version, "packages": packages}).encode()

    @classmethod
    def from_json(cls, data: bytes) -> OriginRelease | None:
        """What `to_json` wrote; None for anything else (an older gitreg's file, a torn one)."""
        try:
            body = json.loads(data)
            packages = tuple(OriginPackage(**p) for p in body["packages"])
            return cls(str(body["version"]), packages)
        except (ValueError, KeyError, TypeError):
            return None


class OriginRegistry:
    def __init__(
        self,
        settings: MirrorSettings,
        clock: Callable[[], float] = time.monotonic,
        max_archive_bytes: int = MAX_ARCHIVE_BYTES,
    ) -> None:
        self.settings = settings
        self.clock = clock
        self.max_archive_bytes = max_archive_bytes
        self.reach = reach.Reach.of(settings)
        self.connections = reach.PublicAddresses(self.reach.named)
        self.client = reach.client(settings, self.connections, _TIMEOUT)
        self._down_until: dict[str, float] = {}  # by host[:port] of the URL that failed
        self._last_error: dict[str, str] = {}
        self._requests: Counter[str] = Counter()
        self._failures: Counter[str] = Counter()
        self.downloads: Counter[str] = Counter()  # "ok", "failed": packages fetched for the cache
        self.downloaded_bytes = 0
        self._services: dict[str, tuple[float, str]] = {}  # hostname → (until, providers.v1)
        self._lock = threading.Lock()

    def close(self) -> None:
        """Close the client; work still reading from an origin ends now, with an error."""
        self.connections.interrupt()
        self.client.close()

    def health(self) -> list[HostHealth]:
        """Every host asked so far, by name."""
        with self._lock:
            return [
                HostHealth(
                    host,
                    self._down_until.get(host, 0.0) <= self.clock(),
                    self._last_error.get(host),
                    self._requests[host],
                    self._failures[host],
                )
                for host in sorted(self._requests)
            ]

    def is_down(self, hostname: str) -> bool:
        """Did the origin of `hostname` fail less than RETRY_AFTER seconds ago?"""
        return self._is_down(urlsplit(self.settings.origin_url(hostname)).netloc)

    def providers_url(self, hostname: str) -> str:
        """The origin's providers.v1 base URL, by discovery (kept for a while), ending in /."""
        with self._lock:
            until, base = self._services.get(hostname, (0.0, ""))
        if until <= self.clock():
            discovery = urljoin(self.settings.origin_url(hostname), ".well-known/terraform.json")
            found = self._get_json(hostname, discovery).get("providers.v1")
            if not isinstance(found, str):
                raise OriginError(f"{hostname} offers no providers.v1 service")
            base = urljoin(discovery, found)
            base = base if base.endswith("/") else base + "/"
            self.reach.check(hostname, base)  # on its own host and port, https: no other
            with self._lock:
                self._services[hostname] = (self.clock() + _DISCOVERY_TTL, base)
        return base

    def versions(self, address: ProviderAddress) -> list[str]:
        """The versions the origin lists, newest first; entries that are no version are skipped."""
        url = self._provider_url(address) + "versions"
        found = {}
        for entry in _field(self._get_json(_origin(address), url), "versions", list, url):
            try:
                version = parse_version(entry["version"])
            except (ValueError, KeyError, TypeError):
                continue
            found[str(version)] = version
        return sorted(found, key=lambda v: version_sort_key(found[v]), reverse=True)

    def release(self, address: ProviderAddress, version: str) -> OriginRelease:
        """Every platform of `version`, its SHA256SUMS signature and checksums verified."""
        base, origin = self._provider_url(address), _origin(address)
        listed = _field(
            self._get_json(origin, base + "versions"), "versions", list, base + "versions"
        )
        entry = next((v for v in listed if _same_version(v, version)), None)
        if entry is None:
            raise OriginError(f"{address}: the origin has no version {version}")
        platforms = []
        listed_platforms = entry.get("platforms")
        for platform in listed_platforms if isinstance(listed_platforms, list) else []:
            if not isinstance(platform, dict):
                continue
            os_name, arch = platform.get("os"), platform.get("arch")
            if platform_problem(str(os_name), str(arch)) is None:
                platforms.append((str(os_name), str(arch)))
        if not platforms:
            raise OriginError(f"{address}: the origin lists no platform for {version}")
        urls = [f"{base}{version}/download/{os_name}/{arch}" for os_name, arch in platforms]
        with ThreadPoolExecutor(4) as pool:  # each under this work's deadline
            asked = [pool.submit(carried(partial(self._get_json, origin, url))) for url in urls]
            answers = [future.result() for future in asked]
        sums: dict[str, str] = {}
        packages = []
        for (os_name, arch), url, answer in zip(platforms, urls, answers, strict=True):
            try:
                if not sums:
                    sums = self._verified_sums(origin, url, answer)
                filename, shasum = str(answer["filename"]), str(answer["shasum"]).lower()
                location = urljoin(url, str(answer["download_url"]))
            except (KeyError, TypeError, AttributeError) as exc:
                raise OriginError(f"{url}: not a provider package answer ({exc!r})") from exc
            if sums.get(filename) != shasum:
                raise OriginError(f"{url}: {filename} is not listed with its shasum in SHA256SUMS")
            # The name gitreg serves and keeps a package under, whatever the origin calls it.
            name = PackageFile(address.type, version, os_name, arch).name
            packages.append(OriginPackage(os_name, arch, name, location, "zh:" + shasum))
        return OriginRelease(version, tuple(packages))

    def download(self, address: ProviderAddress, package: OriginPackage, path: Path) -> None:
        """Stream to a temporary file beside `path`, check its checksum, then rename: `path` is
        the whole verified package or nothing."""
        outcome = "failed"
        origin, limit = _origin(address), self.max_archive_bytes
        try:
            with atomic_writer(path) as out:
                digest = hashlib.sha256()
                for chunk in self._stream(origin, package.url, limit, download=True):
                    digest.update(chunk)
                    out.write(chunk)
                if "zh:" + digest.hexdigest() != package.zh:
                    raise OriginError(f"{package.filename} does not match its signed checksum")
            outcome = "ok"
            with self._lock:
                self.downloaded_bytes += path.stat().st_size
        finally:
            with self._lock:
                self.downloads[outcome] += 1

    # Discovery and HTTP.

    def _provider_url(self, address: ProviderAddress) -> str:
        return urljoin(self.providers_url(_origin(address)), f"{address.namespace}/{address.type}/")

    def _verified_sums(self, origin: str, url: str, answer: dict[str, Any]) -> dict[str, str]:
        sums = self._get(origin, urljoin(url, answer["shasums_url"]), download=True)
        signature = self._get(origin, urljoin(url, answer["shasums_signature_url"]), download=True)
        keys = [k["ascii_armor"] for k in answer["signing_keys"]["gpg_public_keys"]]
        if Keyring.from_armored(keys).verifier_of(sums, signature) is None:
            raise OriginError(f"{url}: SHA256SUMS is not signed by any key the origin lists")
        result = {}
        for line in sums.decode("utf-8", "replace").splitlines():
            parts = line.split()
            if len(parts) == 2 and _SHA256.fullmatch(parts[0].lower()):
                result[parts[1].lstrip("*")] = parts[0].lower()
        return result

    def _get_json(self, origin: str, url: str) -> dict[str, Any]:
        try:
            body = json.loads(self._get(origin, url))
        except ValueError as exc:
            raise OriginError(f"{url}: not JSON") from exc
        if not isinstance(body, dict):
            raise OriginError(f"{url}: not a JSON object")
        return body

    def _get(self, origin: str, url: str, download: bool = False) -> bytes:
        return b"".join(self._stream(origin, url, _MAX_ANSWER_BYTES, download))

    def _stream(self, origin: str, url: str, limit: int, download: bool = False) -> Iterator[bytes]:
        """The body of a 200 answer to work for `origin`, chunk by chunk, after at most
        _MAX_REDIRECTS redirects, each checked before it is followed; raise OriginUnavailable
        for what may pass (no connection, a timeout, the deadline, a 5xx or 429) and
        OriginError for what will not. `origin`'s token goes to its own host and port only, and
        to none once a redirect has left them."""
        own = True
        for _ in range(_MAX_REDIRECTS + 1):
            self.reach.check(origin, url, download)  # nothing is sent to a URL it refuses
            own = own and self.reach.owns(origin, url)
            netloc = urlsplit(url).netloc
            response, had_token = self._send(url, netloc, origin if own else None)
            try:
                if response.is_redirect:
                    url = urljoin(url, response.headers["location"])
                    continue
                yield from self._body(response, url, netloc, limit, had_token)
                return
            except httpx.HTTPError as exc:
                raise self._failed(netloc, url, str(exc) or type(exc).__name__) from exc
            finally:
                response.close()
        raise OriginError(f"{url}: more than {_MAX_REDIRECTS} redirects")

    def _send(self, url: str, netloc: str, token_of: str | None) -> tuple[httpx.Response, bool]:
        """Send a GET to `url`, with the token of the origin `token_of` names, if any."""
        if self._is_down(netloc):
            raise OriginUnavailable(f"{netloc} failed less than {RETRY_AFTER:.0f} s ago")
        with self._lock:
            self._requests[netloc] += 1
        source = self.settings.token(token_of) if token_of else None
        token = source.value() if source else None
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        left = remaining()
        timeout = _TIMEOUT
        if left is not None:
            if left <= 0:
                raise self._failed(netloc, url, "the deadline passed")
            timeout = httpx.Timeout(min(_READ, left), connect=min(_CONNECT, left))
        request = self.client.build_request("GET", url, headers=headers, timeout=timeout)
        try:
            response = self.client.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise self._failed(netloc, url, str(exc) or type(exc).__name__) from exc
        return response, token is not None

    def _body(
        self, response: httpx.Response, url: str, netloc: str, limit: int, had_token: bool
    ) -> Iterator[bytes]:
        status = response.status_code
        if status in (401, 403):
            hint = "the token was refused" if had_token else "no token is configured for it"
            raise OriginError(f"{url}: HTTP {status} ({hint})")
        if status >= 500 or status == 429:
            raise self._failed(netloc, url, f"HTTP {status}")
        if status != 200:
            raise OriginError(f"{url}: HTTP {status}")
        size = int(response.headers.get("content-length") or 0)
        if size > limit:
            raise OriginError(f"{url}: {size} bytes, more than the {limit} bytes allowed")
        received = 0
        for chunk in response.iter_bytes():
            received += len(chunk)
            if received > limit:
                raise OriginError(f"{url}: more than the {limit} bytes allowed")
            left = remaining()
            if left is not None and left <= 0:
                raise self._failed(netloc, url, "the deadline passed")
            yield chunk

    def _failed(self, netloc: str, url: str, why: str) -> OriginUnavailable:
        self._mark_down(netloc, why)
        return OriginUnavailable(f"{url}: {why}")

    def _is_down(self, netloc: str) -> bool:
        with self._lock:
            return self._down_until.get(netloc, 0.0) > self.clock()

    def _mark_down(self, netloc: str, why: str) -> None:
        with self._lock:
            self._down_until[netloc] = self.clock() + RETRY_AFTER
            self._last_error[netloc] = why
            self._failures[netloc] += 1
        log.warning("origin %s failed (%s): the cache serves for %.0f s", netloc, why, RETRY_AFTER)


def _origin(address: ProviderAddress) -> str:
    """The origin work for `address` is done for: the hostname its mirror request named."""
    if address.hostname is None:
        raise OriginError(f"{address}: read-through needs the provider's hostname")
    return address.hostname


def _same_version(entry: Any, version: str) -> bool:
    try:
        return str(parse_version(entry["version"])) == version
    except (ValueError, KeyError, TypeError):
        return False


def _field(body: dict[str, Any], key: str, kind: type, url: str) -> Any:
    value = body.get(key)
    if not isinstance(value, kind):
        raise OriginError(f"{url}: no {key!r} {kind.__name__} in the answer")
    return value
