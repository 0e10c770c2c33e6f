"""Sign-in and sign-out over real HTTPS: only the registry's own origin may post them (scheme
and port included, whatever the Host header says), and a sign-out ends the session itself: a
copy of the cookie taken before opens nothing after, in this process, another on the same
cache_dir, or another worker of `gitreg serve --workers 2`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from gitreg.process.tlscert import TlsMaterial
from tests.support.browser_sessions import (
    PRIVATE,
    URL_KEYS,
    private_catalog,
    served,
    served_private,
    sign_in,
    sign_out,
    with_cookie,
)
from tests.support.private_registry import READER, write_private_registry
from tests.support.workers import serving


def _posts(client: httpx.Client, headers: dict[str, str]) -> tuple[int, int]:
    sign_in = client.post("/signin", data={"token": READER}, headers=headers)
    sign_out = client.post("/signout", headers=headers)
    if sign_in.status_code == 403:
        assert "set-cookie" not in sign_in.headers and "set-cookie" not in sign_out.headers
    return sign_in.status_code, sign_out.status_code


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory, tls: TlsMaterial) -> Iterator[httpx.Client]:
    with served_private(tmp_path_factory.mktemp("signin"), tls) as client:
        yield client


def test_the_origin_of_hostname_and_the_address_reached_sign_in(registry: httpx.Client) -> None:
    assert _posts(registry, {"Origin": "https://registry.example.test"}) == (303, 303)
    assert _posts(registry, {"Origin": str(registry.base_url).rstrip("/")}) == (303, 303)
    port = registry.base_url.port
    assert _posts(registry, {"Origin": f"https://localhost:{port}"}) == (303, 303)


@pytest.mark.parametrize(
    "origin",
    [
        "http://registry.example.test",  # plain HTTP against the HTTPS registry
        "https://registry.example.test:8443",
        "http://127.0.0.1:{port}",
        "http://localhost:{port}",
        "https://127.0.0.1:1",
        "https://evil.example",
        "null",
    ],
)
def test_another_origin_is_refused(registry: httpx.Client, origin: str) -> None:
    headers = {"Origin": origin.format(port=registry.base_url.port)}
    assert _posts(registry, headers) == (403, 403)


def test_a_forged_host_header_does_not_make_an_origin_own(registry: httpx.Client) -> None:
    headers = {"Origin": "https://evil.example", "Host": "evil.example"}
    refused = registry.post("/signin", data={"token": READER}, headers=headers)
    assert refused.status_code == 403 and "set-cookie" not in refused.headers
    assert "https://registry.example.test" in refused.text  # it says which origin it wants
    assert _posts(registry, headers) == (403, 403)


def test_behind_a_proxy_public_url_is_the_origin(tmp_path: Path, tls: TlsMaterial) -> None:
    with served_private(tmp_path, tls, "public_url: https://gitreg.example.org:8443\n") as client:
        assert _posts(client, {"Origin": "https://gitreg.example.org:8443"}) == (303, 303)
        assert _posts(client, {"Origin": "https://registry.example.test"}) == (403, 403)
        assert _posts(client, {"Origin": "http://gitreg.example.org:8443"}) == (403, 403)


def test_a_cookie_copied_before_sign_out_opens_nothing_after(registry: httpx.Client) -> None:
    value = sign_in(registry)
    other = sign_in(registry)  # the same token signed in elsewhere: a session of its own
    assert registry.get(PRIVATE, headers=with_cookie(value)).status_code == 200
    home = registry.get("/", headers=with_cookie(value))
    assert "/modules/secret/single/generic" in home.text
    sign_out(registry, value)
    after = registry.get(PRIVATE, headers=with_cookie(value))
    assert after.status_code == 401 and "the session has ended" in after.text
    page = registry.get("/", headers=with_cookie(value))
    assert page.status_code == 200 and "/modules/secret/single/generic" not in page.text
    assert ">Sign in<" in page.text  # the page reads it as signed out
    assert registry.get(PRIVATE, headers=with_cookie(other)).status_code == 200


def test_a_sign_out_on_one_process_ends_the_session_on_another(
    tmp_path: Path, tls: TlsMaterial
) -> None:
    """Two app instances on one cache_dir (two workers): signed in on one, out on the other."""
    catalog = private_catalog(tmp_path)
    with served(catalog, tls) as first, served(catalog, tls) as second:
        value = sign_in(first)
        assert second.get(PRIVATE, headers=with_cookie(value)).status_code == 200
        sign_out(second, value)
        assert first.get(PRIVATE, headers=with_cookie(value)).status_code == 401
        assert second.get(PRIVATE, headers=with_cookie(value)).status_code == 401


def test_a_sign_out_on_one_worker_ends_the_session_on_the_other(tmp_path: Path) -> None:
    """A real `gitreg serve --workers 2`: signed in through one worker, out through the other."""
    with serving(write_private_registry(tmp_path, URL_KEYS), 2) as server:
        with server.client_of(0) as zero:
            value = sign_in(zero)
            assert zero.get(PRIVATE, headers=with_cookie(value)).status_code == 200
        with server.client_of(1) as one:
            assert one.get(PRIVATE, headers=with_cookie(value)).status_code == 200
            sign_out(one, value)
            assert one.get(PRIVATE, headers=with_cookie(value)).status_code == 401
        with server.client_of(0) as zero:
            assert zero.get(PRIVATE, headers=with_cookie(value)).status_code == 401
