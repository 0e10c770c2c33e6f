"""Revoked versions over real HTTP with tokens: left out of `versions` and refused (410, with the
reason) for a token that never installed them, kept for one that did, and for anonymous readers
of a public namespace as `downloads.revoked_for_anonymous` says; providers' `warnings` say it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from tests.support.revoked_registry import (
    EARLY,
    LATE,
    MODULES,
    REASON,
    TERRAFORM,
    WIDGET,
    bearer,
    write_revoked_registry,
)
from tests.support.servers import RegistryServer

TEAM, OPEN = MODULES


def versions(answer: httpx.Response) -> list[str]:
    assert answer.status_code == 200, answer.text
    body = answer.json()
    listed = body["modules"][0]["versions"] if "modules" in body else body["versions"]
    return [v["version"] for v in listed]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RegistryServer, Path]]:
    root = tmp_path_factory.mktemp("revoked")
    path = write_revoked_registry(root, revoked=False)
    with RegistryServer(load_catalog(path)) as server, httpx.Client(base_url=server.url) as http:
        for where in (f"{TEAM}/1.0.0/download", f"{WIDGET}/1.0.0/download/linux/amd64"):
            assert http.get(where, headers=bearer(EARLY)).status_code == 200
        assert http.get(f"{OPEN}/1.0.0/download", headers=TERRAFORM).status_code == 200
        server.state.downloads.write()
        write_revoked_registry(root, revoked=True)
        assert server.reload()
        yield server, root


@pytest.fixture(scope="module")
def server(served: tuple[RegistryServer, Path]) -> RegistryServer:
    return served[0]


def get(server: RegistryServer, path: str, token: str | None = None) -> httpx.Response:
    headers = bearer(token) if token else TERRAFORM
    return httpx.get(f"{server.url}{path}", headers=headers, timeout=20)


def test_a_token_that_installed_the_version_still_gets_it(server: RegistryServer) -> None:
    for _ in range(2):  # the second from what is kept, if anything is
        assert versions(get(server, f"{TEAM}/versions", EARLY)) == ["2.0.0", "1.1.0", "1.0.0"]
        download = get(server, f"{TEAM}/1.0.0/download", EARLY)
        assert download.status_code == 200 and download.headers["x-terraform-get"]
    assert versions(get(server, f"{WIDGET}/versions", EARLY)) == ["1.1.0", "1.0.0"]
    assert get(server, f"{WIDGET}/1.0.0/download/linux/amd64", EARLY).status_code == 200


def test_a_token_that_never_did_is_refused_it_with_the_reason(server: RegistryServer) -> None:
    for _ in range(2):
        assert versions(get(server, f"{TEAM}/versions", LATE)) == ["2.0.0", "1.1.0"]
        refused = get(server, f"{TEAM}/1.0.0/download", LATE)
        assert refused.status_code == 410
        assert refused.json()["errors"] == [
            f"team/vpc/aws 1.0.0 is revoked: {REASON.rstrip('.')}. It installs only where it"
            " was installed before: choose another version"
        ]
    assert get(server, f"{TEAM}/1.1.0/download", LATE).status_code == 200
    assert versions(get(server, f"{WIDGET}/versions", LATE)) == ["1.1.0"]
    assert get(server, f"{WIDGET}/1.0.0/download/linux/amd64", LATE).status_code == 410
    # The one who was refused is refused again once the first answer is kept.
    assert versions(get(server, f"{TEAM}/versions", EARLY)) == ["2.0.0", "1.1.0", "1.0.0"]
    assert versions(get(server, f"{TEAM}/versions", LATE)) == ["2.0.0", "1.1.0"]


def test_provider_warnings_say_revoked_not_deprecated(server: RegistryServer) -> None:
    for token in (EARLY, LATE):
        body = get(server, f"{WIDGET}/versions", token).json()
        assert body["warnings"] == [
            "Version 1.1.0 is deprecated: Use 2.x.",
            f"Version 1.0.0 is revoked: {REASON}",
        ]


def test_anonymous_readers_of_a_public_namespace_get_what_the_setting_says(
    served: tuple[RegistryServer, Path],
) -> None:
    server, root = served
    # Hidden by default, although an anonymous reader installed it before.
    assert versions(get(server, f"{OPEN}/versions")) == ["2.0.0", "1.1.0"]
    assert get(server, f"{OPEN}/1.0.0/download").status_code == 410
    write_revoked_registry(root, revoked=True, downloads="  revoked_for_anonymous: kept\n")
    assert server.reload()
    try:
        assert versions(get(server, f"{OPEN}/versions")) == ["2.0.0", "1.1.0", "1.0.0"]
        assert get(server, f"{OPEN}/1.0.0/download").status_code == 200
        assert versions(get(server, f"{TEAM}/versions", LATE)) == ["2.0.0", "1.1.0"]
    finally:
        write_revoked_registry(root, revoked=True)
        assert server.reload()


def test_without_auth_every_reader_is_anonymous(tmp_path: Path) -> None:
    path = write_revoked_registry(tmp_path, revoked=True)
    text = path.read_text()
    path.write_text(text[: text.index("auth:")])
    with RegistryServer(load_catalog(path)) as server:
        for _ in range(2):  # kept: the same answer for everyone
            assert versions(get(server, f"{TEAM}/versions")) == ["2.0.0", "1.1.0"]
            assert get(server, f"{TEAM}/1.0.0/download").status_code == 410
