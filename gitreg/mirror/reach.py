"""Where read-through may go: the origins a mirror request may name, and for each the hosts its
work may reach (its own, and the download hosts: never another origin's). Every request it sends
is checked before it is sent, each redirect too, and again when it connects: the name is
resolved once, every address it gave is checked, and the connection goes to a checked one (a
name whose DNS answer turns private gets none). Every read and write waits at most until the
work's deadline (`origin_work.py`)."""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import ssl
import threading
import weakref
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import httpcore
import httpx

from gitreg.catalog.mirror_settings import PUBLIC_ORIGINS, MirrorSettings
from gitreg.errors import OriginRefused
from gitreg.mirror.origin_work import remaining


@dataclass(frozen=True)
class Reach:
    """Work done for one origin (the hostname a mirror request named) asks that origin's own
    host and port, and for downloads the download hosts: an origin's answer cannot send it to
    another origin, whose token it would carry or whose private address it would reach."""

    # By origin hostname: the host:port of its API (its URL's, and https://HOSTNAME/'s): its
    # discovery and providers.v1 are asked there, and its token goes nowhere else.
    endpoints: Mapping[str, frozenset[str]]
    # host:port packages, SHA256SUMS and signatures may also come from, whichever origin's:
    # download_hosts on 443, and the endpoints of an origin download_hosts lists too.
    downloads: frozenset[str]
    named: frozenset[str]  # hosts registry.yaml names: these may be IP literals or private

    @classmethod
    def of(cls, settings: MirrorSettings) -> Reach:
        origins = frozenset(PUBLIC_ORIGINS) | settings.named
        urls = {host: httpx.URL(settings.origin_url(host)) for host in origins}
        endpoints = {host: frozenset({_endpoint(url), f"{host}:443"}) for host, url in urls.items()}
        downloads = {f"{host}:443" for host in settings.download_hosts}
        for host in settings.download_hosts:  # one at a port or a private address is named there
            downloads |= endpoints.get(host, frozenset())
        named = settings.named | {urls[host].host for host in settings.named}
        return cls(endpoints, frozenset(downloads), named)

    @property
    def origins(self) -> frozenset[str]:
        """The hostnames a mirror request may name."""
        return frozenset(self.endpoints)

    def allows(self, hostname: str) -> bool:
        """May a mirror request name `hostname` as a provider's origin?"""
        return hostname in self.endpoints

    def owns(self, origin: str, url: str) -> bool:
        """Is `url` on `origin`'s own host and port, where its token may go?"""
        try:
            return _endpoint(httpx.URL(url)) in self.endpoints.get(origin, ())
        except httpx.InvalidURL:
            return False

    def check(self, origin: str, url: str, download: bool = False) -> None:
        """Raise OriginRefused unless work for `origin` may ask `url`: https, no user name or
        password in it, on `origin`'s host and port (or, for a download, a download host)."""
        if origin not in self.endpoints:
            raise OriginRefused(f"{origin} is not an origin read-through reads (mirror.origins)")
        try:
            parsed = httpx.URL(url)
        except httpx.InvalidURL as exc:
            raise OriginRefused(f"{url!r} is not a URL read-through can ask: {exc}") from exc
        shown = str(parsed.copy_with(query=None, fragment=None, userinfo=None))
        if parsed.scheme != "https":
            raise OriginRefused(f"{shown}: read-through asks over https only")
        if parsed.userinfo:
            raise OriginRefused(f"{shown}: read-through sends no credentials in a URL")
        where = _endpoint(parsed)
        if where in self.endpoints[origin] or (download and where in self.downloads):
            return
        if download:
            raise OriginRefused(
                f"{shown}: {where} is neither {origin}'s host and port nor a download host "
                "(mirror.origins, mirror.download_hosts)"
            )
        raise OriginRefused(
            f"{shown}: {where} is not {origin}'s host and port: read-through asks an origin "
            "only at its own (mirror.origins)"
        )


def client(
    settings: MirrorSettings, backend: PublicAddresses, timeout: httpx.Timeout
) -> httpx.Client:
    """An HTTP client that connects through `backend`, and follows no redirect by itself
    (origin.py checks each one). It ignores HTTPS_PROXY: a proxy would resolve names where
    gitreg cannot check the addresses."""
    verify: ssl.SSLContext | bool = True
    if settings.ca_file:
        verify = ssl.create_default_context(cafile=str(settings.ca_file))
    limits = httpx.Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=5.0)
    transport = httpx.HTTPTransport(verify=verify, limits=limits)
    # httpx takes no network backend; the httpcore pool it sends through does.
    transport._pool = httpcore.ConnectionPool(
        ssl_context=httpx.create_ssl_context(verify=verify),
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=backend,
    )
    return httpx.Client(transport=transport, timeout=timeout, follow_redirects=False)


class PublicAddresses(httpcore.SyncBackend):
    """Resolves a name once, checks every address it gave, and connects to a checked one: only
    public addresses (no loopback, private, link-local, unspecified, multicast or reserved
    range), but for the hosts in `named`. It keeps the connections it opened, so that closing
    read-through ends the work still reading from them (a stalled origin, a long download)."""

    def __init__(self, named: Iterable[str]) -> None:
        self.named = frozenset(named)
        self._open: weakref.WeakSet[_Stream] = weakref.WeakSet()
        self._lock = threading.Lock()

    def interrupt(self) -> None:
        """Shut down every connection still open: a thread reading one gets its end at once."""
        with self._lock:
            streams = list(self._open)
        for stream in streams:
            stream.interrupt()

    def track(self, stream: httpcore.NetworkStream) -> httpcore.NetworkStream:
        tracked = _Stream(stream, self)
        with self._lock:
            self._open.add(tracked)
        return tracked

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        addresses = _resolve(host, port)
        if host not in self.named:
            for address in addresses:
                if not is_public(address):
                    raise OriginRefused(
                        f"{host} resolves to {address}, not a public address: read-through "
                        "reaches private addresses only on hosts named in mirror.origins"
                    )
        failure: httpcore.ConnectError | httpcore.ConnectTimeout | None = None
        for address in addresses:
            try:
                stream = super().connect_tcp(address, port, timeout, local_address, socket_options)
                return self.track(stream)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        assert failure is not None  # _resolve gives one address at least
        raise failure


class _Stream(httpcore.NetworkStream):
    """A connection PublicAddresses opened, and the TLS one over it, which it keeps too."""

    def __init__(self, inner: httpcore.NetworkStream, backend: PublicAddresses) -> None:
        self.inner = inner
        self.backend = backend

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        with _until_deadline(timeout, httpcore.ReadTimeout) as bounded:
            return self.inner.read(max_bytes, bounded)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        with _until_deadline(timeout, httpcore.WriteTimeout) as bounded:
            self.inner.write(buffer, bounded)

    def close(self) -> None:
        self.inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        return self.backend.track(self.inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)

    def interrupt(self) -> None:
        # On a duplicate of its descriptor: shutdown() wakes a thread blocked reading it, and
        # the socket object that thread uses is left alone. One closed already has none.
        sock = self.inner.get_extra_info("socket")
        with (
            contextlib.suppress(OSError, ValueError, AttributeError),
            socket.fromfd(sock.fileno(), sock.family, sock.type) as duplicate,
        ):
            duplicate.shutdown(socket.SHUT_RDWR)


@contextlib.contextmanager
def _until_deadline(
    timeout: float | None, timeout_error: type[httpcore.TimeoutException]
) -> Iterator[float | None]:
    """`timeout`, cut to the time left before the deadline of the work this thread does: an
    origin dripping bytes cannot hold a thread (and its origin's share) past the deadline,
    as the 20 s between two reads, fixed when the request was sent, would. A wait cut short
    that ends says so."""
    left = remaining()
    if left is None or (timeout is not None and timeout < left):
        yield timeout
        return
    if left <= 0:
        raise timeout_error("the deadline passed")
    try:
        yield left
    except httpcore.TimeoutException as exc:
        raise timeout_error("the deadline passed") from exc


def is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    private = (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_unspecified
        or ip.is_multicast
        or ip.is_reserved
        or (isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local)
    )
    return ip.is_global and not private


def _resolve(host: str, port: int) -> list[str]:
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from exc
    addresses = list(dict.fromkeys(str(info[4][0]) for info in found))
    if not addresses:
        raise httpcore.ConnectError(f"{host} resolves to no address")
    return addresses


def _endpoint(url: httpx.URL) -> str:
    return f"{url.host}:{url.port or 443}"
