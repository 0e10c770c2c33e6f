"""The registry's own origin, from hostname or public_url, and which Origin headers name it:
the scheme and port count, the Host header never does."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitreg.auth.own_origin import is_own, own_origin, reached_loopback
from gitreg.web_origin import WebOrigin, parse_origin, parse_public_url
from tests.conftest import WriteCatalog
from tests.support.refused_catalogs import assert_refused, refusal

MODULE = "modules:\n  - {namespace: infra, name: vpc, system: aws, repo: https://git.example.com/x.git}\n"
OWN = own_origin("registry.example.com", None)


@pytest.mark.parametrize(
    ("header", "own"),
    [
        ("https://registry.example.com", True),
        ("https://REGISTRY.example.com", True),
        ("https://registry.example.com:443", True),
        ("http://registry.example.com", False),  # the scheme counts
        ("https://registry.example.com:8443", False),  # and the port
        ("https://evil.example", False),
        ("https://registry.example.com.evil.example", False),
        ("https://user@registry.example.com", False),
        ("null", False),
        ("", False),
        ("https://registry.example.com:99999", False),
        ("ftp://registry.example.com", False),
    ],
)
def test_the_origin_of_hostname_over_https(header: str, own: bool) -> None:
    assert is_own(header, OWN) is own


def test_a_hostname_with_a_port_keeps_it() -> None:
    own = own_origin("registry.example.com:8443", None)
    assert own == WebOrigin("https", "registry.example.com", 8443)
    assert is_own("https://registry.example.com:8443", own)
    assert not is_own("https://registry.example.com", own)


def test_public_url_wins_over_hostname() -> None:
    own = own_origin("registry.example.com", "https://gitreg.example.org")
    assert str(own) == "https://gitreg.example.org"
    assert is_own("https://gitreg.example.org", own)
    assert not is_own("https://registry.example.com", own)


@pytest.mark.parametrize(
    ("scheme", "server", "origins"),
    [
        ("http", ("127.0.0.1", 8080), {"http://127.0.0.1:8080", "http://localhost:8080"}),
        ("https", ("::1", 8443), {"https://[::1]:8443", "https://localhost:8443"}),
        ("https", ("10.0.0.5", 8443), set()),  # another machine's page could claim that address
        ("https", None, set()),
    ],
)
def test_a_loopback_connection_is_its_own_origin(
    scheme: str, server: tuple[str, int] | None, origins: set[str]
) -> None:
    reached = reached_loopback(scheme, server)
    assert {str(o) for o in reached} == origins
    for origin in origins:
        assert is_own(origin, OWN, reached)
    if server is not None:
        other = "http" if scheme == "https" else "https"
        assert not is_own(f"{other}://127.0.0.1:{server[1]}", OWN, reached)


@pytest.mark.parametrize(
    ("text", "origin"),
    [
        ("https://registry.example.com", "https://registry.example.com"),
        ("https://Registry.Example.com/", "https://registry.example.com"),
        ("https://registry.example.com:8443", "https://registry.example.com:8443"),
        ("https://registry.example.com:443/", "https://registry.example.com"),
    ],
)
def test_public_url_names_an_origin(text: str, origin: str) -> None:
    assert parse_public_url(text) == origin
    assert own_origin("ignored.example", origin) == parse_origin(origin)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("http://registry.example.com", "must be an https URL"),
        ("registry.example.com", "must be an https URL"),
        ("https://registry.example.com/registry", "without a path, query, fragment or user"),
        ("https://registry.example.com/?x=1", "without a path, query, fragment or user"),
        ("https://registry.example.com/#top", "without a path, query, fragment or user"),
        ("https://me@registry.example.com", "must be an https URL"),
        ("https://registry.example.com:0x1", "must be an https URL"),
    ],
)
def test_a_bad_public_url_is_refused_at_start_with_its_line(
    tmp_path: Path, text: str, reason: str
) -> None:
    assert_refused(
        refusal(tmp_path, f"{MODULE}hostname: registry.example.com\npublic_url: '{text}'\n"),
        "public_url",
        5,
        reason,
    )


def test_public_url_is_read(write_catalog: WriteCatalog) -> None:
    catalog = write_catalog(f"{MODULE}public_url: https://gitreg.example.org:8443/\n")
    assert catalog.server.public_url == "https://gitreg.example.org:8443"
