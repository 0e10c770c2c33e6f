"""The registry's own web origin, which alone may post the sign-in and sign-out forms.

It is the scheme, host and port of `public_url` when registry.yaml gives one (a registry behind a
proxy), else of `hostname` over HTTPS; never what a request's Host header says: anyone can write
that. One more origin is honoured, since it cannot be another site's: the loopback address a
connection actually reached (its socket's address, and `localhost`, with the connection's own
scheme and port), so that `gitreg demo` and a registry opened on http://127.0.0.1:PORT work."""

from __future__ import annotations

import ipaddress

from gitreg.web_origin import DEFAULT_PORTS, WebOrigin, parse_origin


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
