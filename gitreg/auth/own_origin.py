"""The registry's own web origin, which alone may post the sign-in and sign-out forms: the
scheme, host and port of `public_url` when registry.yaml gives one (a registry behind a proxy),
else of `hostname` over HTTPS. Never what a request's Host header says: anyone can write that.

One more origin is honoured, since it cannot be another site's: the loopback address a
connection actually reached (its socket's address, and `localhost`, with the connection's own
scheme and port), so that `gitreg demo` and a registry opened on http://127.0.0.1:PORT work."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

DEFAULT_PORTS = {"https": 443, "http": 80}


@dataclass(frozen=True)
class WebOrigin:
    scheme: str
    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = DEFAULT_PORTS.get(self.scheme)
        return f"{self.scheme}://{host}" + ("" if self.port == default else f":{self.port}")


def parse_origin(text: str) -> WebOrigin | None:
    """An Origin header's (or a URL's) scheme, host and port; None when it names none (`null`,
    a malformed value, a scheme other than http and https)."""
    try:
        parts = urlsplit(text.strip())
        port = parts.port
    except ValueError:
        return None
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if scheme not in DEFAULT_PORTS or not host or parts.username is not None:
        return None
    return WebOrigin(scheme, host, port if port is not None else DEFAULT_PORTS[scheme])


def parse_public_url(text: str) -> str:
    """registry.yaml's `public_url`, checked: an https URL naming a host (and a port), nothing
    else; returned as the origin it names (`https://registry.example.com`)."""
    parts = urlsplit(text)
    origin = parse_origin(text)
    if origin is None or origin.scheme != "https" or parts.scheme.lower() != "https":
        raise ValueError(
            f"{text!r} must be an https URL naming the registry's host, like"
            " https://registry.example.com (browsers open its pages there)"
        )
    if parts.path not in ("", "/") or parts.query or parts.fragment or "@" in parts.netloc:
        raise ValueError(
            f"{text!r} must be the registry's origin alone (scheme, host and port), without a"
            " path, query, fragment or user"
        )
    return str(origin)


def own_origin(hostname: str, public_url: str | None) -> WebOrigin:
    """The origin people open the registry's pages at."""
    found = parse_origin(public_url or f"https://{hostname}")
    if found is None:  # the catalog checked both: this is a bug, not a request's fault
        raise ValueError(f"no origin in {public_url or hostname!r}")
    return found


def reached_loopback(scheme: str, server: tuple[str, int] | None) -> tuple[WebOrigin, ...]:
    """The origins of a connection that reached a loopback address (`server`: its socket's
    own address and port, as the ASGI scope gives it); none for any other address."""
    if server is None or scheme not in DEFAULT_PORTS:
        return ()
    host, port = server
    try:
        if not ipaddress.ip_address(host).is_loopback:
            return ()
    except ValueError:
        return ()
    return (WebOrigin(scheme, host.lower(), port), WebOrigin(scheme, "localhost", port))


def is_own(header: str, own: WebOrigin, reached: tuple[WebOrigin, ...] = ()) -> bool:
    """Whether an Origin header names the registry: `own`, or one of the loopback origins the
    connection `reached`."""
    origin = parse_origin(header)
    return origin is not None and (origin == own or origin in reached)
