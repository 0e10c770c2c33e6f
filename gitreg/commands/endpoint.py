"""Where `gitreg serve` would serve: the address and the TLS files, from registry.yaml and the
flags, refused as `serve` refuses them. `serve` and `check` both ask this, so that a catalog
`check` passes is one `serve` starts with."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from gitreg.catalog.load import parse_listen
from gitreg.catalog.model import Catalog
from gitreg.catalog.settings import TLS_KEYS, Listen, TlsFiles
from gitreg.errors import StartupError


@dataclass(frozen=True)
class Endpoint:
    listen: Listen
    tls: TlsFiles | None
    tls_keys: tuple[str, str] = TLS_KEYS  # how the operator named the TLS files, for messages


def add_endpoint_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--listen", help="HOST:PORT (default: listen in registry.yaml)")
    parser.add_argument("--certfile", help="TLS certificate (PEM); with --keyfile, serve HTTPS")
    parser.add_argument("--keyfile", help="TLS private key (PEM)")


def endpoint(catalog: Catalog, args: argparse.Namespace) -> Endpoint:
    """The address and TLS files `serve` uses with these flags (they win over registry.yaml),
    checked: raises StartupError (status 2) with one line saying which and why."""
    listen = listen_flag(args.listen) if args.listen else catalog.server.listen
    certfile, keyfile = getattr(args, "certfile", None), getattr(args, "keyfile", None)
    if bool(certfile) != bool(keyfile):
        given, missing = ("--certfile", "--keyfile") if certfile else ("--keyfile", "--certfile")
        raise StartupError(f"{given}: needs {missing} too (give both, or neither)", 2)
    if certfile and keyfile:
        tls = TlsFiles(Path(certfile).resolve(), Path(keyfile).resolve())
        found = Endpoint(listen, tls, ("--certfile", "--keyfile"))
    else:
        found = Endpoint(listen, catalog.server.tls)
    if found.tls is not None:
        # Hypercorn is loaded to check TLS files, not to parse
        from gitreg.process.server import check_tls

        check_tls(found.tls, found.tls_keys)
    return found


def listen_flag(text: str) -> Listen:
    try:
        return parse_listen(text)
    except ValueError as exc:
        raise StartupError(f"--listen {text}: {exc}", 2) from exc
