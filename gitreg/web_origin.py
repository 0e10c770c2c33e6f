"""A web origin: the scheme, host and port an Origin header or a URL names (the host in lower
case, a port left out the scheme's default). Parsed here, below the catalog and the gate,
because both read one: registry.yaml's `public_url`, and a sign-in form's Origin header."""

from __future__ import annotations

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
