"""Clients that trust the tests' own CA, and gitreg served over TLS to such a client."""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import Iterator
from pathlib import Path

import httpx

from gitreg.catalog.load import load_catalog
from gitreg.catalog.model import Catalog
from gitreg.catalog.settings import TlsFiles
from gitreg.oci.referrers import Attached
from gitreg.process.tlscert import TlsMaterial
from tests.support.servers import RegistryServer


def trusting(ca: Path | str) -> ssl.SSLContext:
    """A client's TLS context that verifies servers against the CA certificate in `ca` alone.
    A new one each call, not one shared: a client changes its context (httpx sets the ALPN
    protocols on each connection, `H2Client` asks for h2), and with a single certificate to
    read it costs a fraction of a millisecond."""
    return ssl.create_default_context(cafile=str(ca))


@contextlib.contextmanager
def served_over_tls(
    catalog: Catalog | Path,
    tls: TlsMaterial,
    *,
    refresh: bool = False,
    fetch_first: bool | None = True,
    access_log: bool = False,
    port: int | None = None,
    timeout: float = 10,
    http2: bool = False,
    base_path: str = "",
    attached: Attached | None = None,
) -> Iterator[tuple[RegistryServer, httpx.Client]]:
    """`catalog` (or the registry.yaml at that path) served over HTTPS by the real app in a
    thread, with `tls`'s certificate, as `RegistryServer` does (`refresh`, `fetch_first`,
    `access_log`, `port`); and a client of it until the block ends: its base URL the server's
    (with `base_path`), trusting `tls`'s CA, with `timeout` and, with `http2`, HTTP/2.
    `attached`: what module versions carry as OCI referrers."""
    loaded = load_catalog(catalog) if isinstance(catalog, Path) else catalog
    with (
        RegistryServer(
            loaded,
            TlsFiles(tls.certfile, tls.keyfile),
            refresh=refresh,
            fetch_first=fetch_first,
            access_log=access_log,
            port=port,
            attached=attached,
        ) as server,
        httpx.Client(
            base_url=f"{server.url}{base_path}",
            verify=trusting(tls.ca_cert),
            timeout=timeout,
            http2=http2,
        ) as client,
    ):
        yield server, client
