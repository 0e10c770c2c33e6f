"""Browser sessions against the private registry over real HTTPS: its catalog (with extra
keys), served by the real app, and a client that signs in and out as a browser does, from the
registry's own origin."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from gitreg.auth.sessions import COOKIE
from gitreg.catalog.load import load_catalog
from gitreg.catalog.model import Catalog
from gitreg.process.tlscert import TlsMaterial
from tests.support.private_registry import READER, write_private_registry
from tests.support.tls_clients import served_over_tls

URL_KEYS = "  signing_key_file: new.key\n"
PRIVATE = "/v1/modules/secret/single/generic/versions"
OWN = {"Origin": "https://registry.example.test"}


def private_catalog(root: Path, extra: str = "") -> Catalog:
    """The private registry's catalog (hostname registry.example.test), with `extra` top-level
    keys in its registry.yaml."""
    path = write_private_registry(root, URL_KEYS)
    path.write_text(path.read_text() + extra)
    return load_catalog(path)


@contextmanager
def served(catalog: Catalog, tls: TlsMaterial, refresh: bool = False) -> Iterator[httpx.Client]:
    """`catalog` served over HTTPS on 127.0.0.1 by the real app (with `refresh`, watching its
    registry.yaml and applying edits); a client that trusts it."""
    with served_over_tls(catalog, tls, refresh=refresh) as (_, client):
        yield client


@contextmanager
def served_private(root: Path, tls: TlsMaterial, extra: str = "") -> Iterator[httpx.Client]:
    with served(private_catalog(root, extra), tls) as client:
        yield client


def sign_in(client: httpx.Client) -> str:
    """A session cookie's value, as the browser would keep it."""
    answer = client.post("/signin", data={"token": READER}, headers=OWN)
    assert answer.status_code == 303, answer.text
    value = answer.cookies[COOKIE]
    client.cookies.clear()  # each request below says which cookie it sends
    return value


def with_cookie(value: str) -> dict[str, str]:
    return {"Cookie": f"{COOKIE}={value}"}


def sign_out(client: httpx.Client, value: str) -> None:
    answer = client.post("/signout", headers={**OWN, **with_cookie(value)})
    assert answer.status_code == 303 and "max-age=0" in answer.headers["set-cookie"].lower()
    client.cookies.clear()
