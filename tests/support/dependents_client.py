"""The real app served over HTTPS until its dependents index is complete, and its answers read
as JSON, for the module and provider dependents' tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from gitreg.catalog.load import load_catalog
from gitreg.process.tlscert import TlsMaterial
from tests.support.private_registry import bearer
from tests.support.servers import RegistryServer, wait_until
from tests.support.tls_clients import served_over_tls


@contextmanager
def served_until_indexed(
    config: Path, tls: TlsMaterial, path: str, token: str, count: int
) -> Iterator[tuple[RegistryServer, httpx.Client]]:
    """The registry of `config`, once `path` answers `token` `count` dependents from a
    complete index (every module's latest version and every consumer read)."""
    with served_over_tls(load_catalog(config), tls, timeout=20) as (server, client):

        def complete() -> bool:
            body = client.get(path, headers=bearer(token)).json()
            return bool(body["index"]["complete"]) and len(body["dependents"]) == count

        wait_until(complete, 60, f"{count} dependents at {path}")
        yield server, client


def answered(client: httpx.Client, path: str, token: str | None = None) -> dict[str, Any]:
    """The JSON body of a 200 answer to GET `path`, with `token` if any."""
    answer = client.get(path, headers=bearer(token) if token else {})
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body
