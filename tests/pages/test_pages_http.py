"""The pages over real HTTP: what they list and show, for whom, their headers, and the 4xx
pages a malformed request gets (never a 500)."""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import Iterator
from html.parser import HTMLParser

import httpx
import pytest

from gitreg.auth.sessions import COOKIE
from tests.support.catalogue import HOSTNAME, TOKEN
from tests.support.servers import RegistryServer


def _client(server: RegistryServer) -> httpx.Client:
    # The first docs build imports the HCL parser: it may take a few seconds.
    return httpx.Client(base_url=server.url, timeout=60)


@contextlib.contextmanager
def _signed_in(server: RegistryServer) -> Iterator[httpx.Client]:
    with _client(server) as client:
        answer = client.post("/signin", data={"token": TOKEN}, headers={"Origin": server.url})
        assert answer.status_code == 303, answer.text
        # httpx, unlike a browser, does not send a Secure cookie over http://127.0.0.1.
        value = answer.cookies[COOKIE]
        client.cookies.clear()
        client.cookies.set(COOKIE, value)
        yield client


class _Inline(HTMLParser):
    """Inline script and style, which the pages' CSP forbids (they would not run)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = dict(attrs)
        if (tag == "script" and "src" not in names) or tag == "style":
            self.found.append(tag)
        self.found += [f"{tag}[{n}]" for n in names if n == "style" or n.startswith("on")]


def _inline(html: str) -> list[str]:
    parser = _Inline()
    parser.feed(html)
    return parser.found


def test_the_list_shows_what_anyone_may_read(catalogue: RegistryServer) -> None:
    with _client(catalogue) as client:
        page = client.get("/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert "/modules/open/vpc/aws" in page.text
    assert "/providers/open/widget" in page.text
    assert "secret" not in page.text and "/modules/secret/db/aws" not in page.text
    assert ">Sign in<" in page.text
    assert _inline(page.text) == []


def test_a_signed_in_browser_sees_its_private_namespace(catalogue: RegistryServer) -> None:
    with _signed_in(catalogue) as client:
        page = client.get("/")
        module = client.get("/modules/secret/db/aws")
        api = client.get("/v1/modules/secret/db/aws/versions")
    assert "/modules/secret/db/aws" in page.text and "Signed in as" in page.text
    assert module.status_code == 200 and "A private database module." in module.text
    assert api.status_code == 200 and api.json()["modules"][0]["versions"] == [{"version": "2.0.0"}]


def test_without_a_session_a_private_module_asks_to_sign_in(catalogue: RegistryServer) -> None:
    with _client(catalogue) as client:
        page = client.get("/modules/secret/db/aws")
        missing = client.get("/modules/secret/nothing/aws")
    # The same answer whether it exists or not: a reader learns nothing of a namespace it
    # may not read.
    assert page.status_code == missing.status_code == 401
    # It speaks to a person: what happened, and a way to sign in that comes back here.
    assert "<title>Sign in needed" in page.text and "private part of this registry" in page.text
    assert 'href="/signin?next=%2Fmodules%2Fsecret%2Fdb%2Faws"' in page.text
    assert 'href="/signin?next=%2Fmodules%2Fsecret%2Fnothing%2Faws"' in missing.text
    assert "README" not in page.text and "Bearer" not in page.text
    assert "www-authenticate" not in page.headers
    assert "database" not in page.text


def test_search_works_without_script(catalogue: RegistryServer) -> None:
    with _client(catalogue) as client:
        found = client.get("/", params={"q": "vpc"})
        address = client.get("/", params={"q": "open/evil"})
        nothing = client.get("/", params={"q": "no-such-thing"})
        too_long = client.get("/", params={"q": "x" * 1000})
    assert "/modules/open/vpc/aws" in found.text and "/modules/open/evil/generic" not in found.text
    assert "/modules/open/evil/generic" in address.text and "/modules/open/vpc" not in address.text
    assert "Nothing matches" in nothing.text
    assert too_long.status_code == 400 and "text/html" in too_long.headers["content-type"]


def test_the_module_page(catalogue: RegistryServer) -> None:
    with _client(catalogue) as client:
        page = client.get("/modules/open/vpc/aws")
    text = page.text
    assert page.status_code == 200
    assert f"source  = &#34;{HOSTNAME}/open/vpc/aws&#34;" in text
    assert "version = &#34;~&gt; 1.3&#34;" in text
    inputs = text[
        text.index('<table class="inputs">') : text.index(
            "</table>", text.index('<table class="inputs">')
        )
    ]
    for name in ("cidr", "subnets", "password", "legacy_name"):
        assert f"<code>{name}</code>" in inputs
    assert "object({" in inputs and ">sensitive<" in inputs and "Use name instead." in inputs
    assert "hashicorp/aws" in text and "&gt;= 5.0" in text
    assert "<code>modules/subnet</code>" in text and "<code>examples/basic</code>" in text
    assert "Now with flow logs." in text  # the README of 1.3.0
    assert re.search(r"<code>v1\.3\.0</code>.*<code>v1\.2\.0</code>", text, re.S)
    assert "2023-11-14" in text  # the commits' date (the test repositories fix it)
    assert _inline(text) == []


def test_an_older_version_has_its_own_page(catalogue: RegistryServer) -> None:
    with _client(catalogue) as client:
        page = client.get("/modules/open/vpc/aws/1.2.0")
        with_v = client.get("/modules/open/vpc/aws/v1.2.0")
    assert page.status_code == with_v.status_code == 200
    assert "Now with flow logs." not in page.text
    # `~> 1.2` would install 1.3.0, not the version this page shows.
    assert "version = &#34;1.2.0&#34;" in page.text and "~&gt;" not in page.text
    assert "latest: <a" in page.text


def test_a_file_that_does_not_parse_is_said(catalogue: RegistryServer) -> None:
    with _client(catalogue) as client:
        page = client.get("/modules/open/broken/generic")
    assert page.status_code == 200
    assert "Problems reading the code" in page.text and "<code>main.tf</code>" in page.text


def test_a_hostile_readme_is_served_harmless(catalogue: RegistryServer) -> None:
    with _client(catalogue) as client:
        page = client.get("/modules/open/evil/generic")
    readme = page.text[page.text.index('<div class="readme">') :]
    readme = readme[: readme.index("</div>")]
    assert "A README that tries to run script." in readme
    assert "<script" not in readme and "<iframe" not in readme and "<svg" not in readme
    assert "<style" not in readme and "<form" not in readme
    assert "onerror" not in readme and "onload" not in readme
    assert "javascript:" not in readme.lower().replace("[click me](javascript:", "")
    assert _inline(page.text) == []


def test_the_provider_page(catalogue: RegistryServer) -> None:
    with _client(catalogue) as client:
        page = client.get("/providers/open/widget")
    assert page.status_code == 200
    assert "1.0.0" in page.text and "<code>linux_amd64</code>" in page.text
    assert "<code>darwin_arm64</code>" in page.text and "6.0" in page.text
    fingerprint = re.search(r"<code>((?:[0-9A-F]{4} ){9}[0-9A-F]{4})</code>", page.text)
    assert fingerprint is not None
    assert f"source  = &#34;{HOSTNAME}/open/widget&#34;" in page.text


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/modules/open/nothing/aws", 404),
        ("/modules/open/vpc/aws/9.9.9", 404),
        ("/modules/open/vpc/aws/not-a-version", 400),
        ("/modules/open/vpc/aws/1.2.0%00", 400),
        ("/modules/op%20en/vpc/aws", 400),
        ("/modules/open/vpc/a..b", 400),
        ("/providers/open/nothing", 404),
        ("/providers/op%20en/widget", 400),
        ("/static/nothing.css", 404),
        ("/static/..%2F..%2Fregistry.yaml", 404),
        ("/?q=" + "%FF" * 3, 200),
    ],
)
def test_malformed_or_unknown_is_a_4xx_page(
    open_catalogue: RegistryServer, path: str, status: int
) -> None:
    with _client(open_catalogue) as client:
        page = client.get(path)
    assert page.status_code == status, page.text


def test_static_files_are_cached_by_content(catalogue: RegistryServer) -> None:
    with _client(catalogue) as client:
        css = client.get("/static/gitreg.css")
        again = client.get("/static/gitreg.css", headers={"If-None-Match": css.headers["etag"]})
        js = client.get("/static/gitreg.js")
    assert css.headers["content-type"].startswith("text/css")
    assert "prefers-color-scheme: dark" in css.text
    assert again.status_code == 304
    assert js.headers["content-type"].startswith("text/javascript")


def test_sign_in_sets_a_cookie_that_is_not_the_token(catalogue: RegistryServer) -> None:
    with _client(catalogue) as client:
        answer = client.post("/signin", data={"token": TOKEN}, headers={"Origin": catalogue.url})
    cookie = answer.headers["set-cookie"]
    assert answer.status_code == 303 and answer.headers["location"] == "/signin?done=1"
    for attribute in ("HttpOnly", "Secure", "SameSite=strict", "Path=/"):
        assert attribute.lower() in cookie.lower()
    value = answer.cookies[COOKIE]
    assert TOKEN not in value and hashlib.sha256(TOKEN.encode()).hexdigest() not in value


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Origin": "https://evil.example"},
        {"Origin": "null"},
        {"Origin": "http://127.0.0.1:1"},
        {"Sec-Fetch-Site": "cross-site"},
    ],
)
def test_sign_in_and_out_refuse_other_sites(
    catalogue: RegistryServer, headers: dict[str, str]
) -> None:
    with _client(catalogue) as client:
        sign_in = client.post("/signin", data={"token": TOKEN}, headers=headers)
        sign_out = client.post("/signout", headers=headers)
    assert sign_in.status_code == sign_out.status_code == 403
    assert "set-cookie" not in sign_in.headers and "set-cookie" not in sign_out.headers


def test_a_wrong_token_does_not_sign_in(catalogue: RegistryServer) -> None:
    with _client(catalogue) as client:
        wrong = client.post("/signin", data={"token": "nope"}, headers={"Origin": catalogue.url})
        empty = client.post("/signin", data={"token": " "}, headers={"Origin": catalogue.url})
        huge = client.post(
            "/signin", data={"token": "x" * 20_000}, headers={"Origin": catalogue.url}
        )
    assert wrong.status_code == 401 and "set-cookie" not in wrong.headers
    assert "not one of this registry" in wrong.text
    assert empty.status_code == huge.status_code == 400


def test_a_tampered_or_ended_session_reads_nothing_private(catalogue: RegistryServer) -> None:
    with _signed_in(catalogue) as client:
        value = client.cookies[COOKIE]
        version, name, expires, session, mac = value.split(".")
        for forged in (
            f"{version}.{name}.{int(expires) + 3600}.{session}.{mac}",  # a longer session
            f"{version}.{name}.{expires}.{session}.{mac[:-2]}AA",
            f"{version}.{name}.{expires}.{'A' * 22}.{mac}",  # another session
            f"{version}.{name}.10.{session}.{mac}",
            f"s1.{name}.{expires}.{mac}",  # as before session ids
            "s1.cmVhZGVy.99999999999.x",
            "garbage",
            "s1.%C3%A9.1.%C3%A9",
            "s1." + "A" * 5000 + ".1.x",
        ):
            client.cookies.clear()
            client.cookies.set(COOKIE, forged)
            assert client.get("/modules/secret/db/aws").status_code == 401, forged
            assert client.get("/v1/modules/secret/db/aws/versions").status_code == 401, forged
            page = client.get("/")
            assert page.status_code == 200 and "/modules/secret/db/aws" not in page.text


def test_the_session_opens_reads_only(catalogue: RegistryServer) -> None:
    """A POST with the cookie alone is not signed in: the cookie is no credential for writes."""
    with _signed_in(catalogue) as client:
        answer = client.post("/v1/modules/secret/db/aws/versions")
    assert answer.status_code in (401, 405)


def test_sign_out_ends_the_session(catalogue: RegistryServer) -> None:
    with _signed_in(catalogue) as client:
        answer = client.post("/signout", headers={"Origin": catalogue.url})
    assert answer.status_code == 303
    assert f"{COOKIE}=" in answer.headers["set-cookie"]
    assert "max-age=0" in answer.headers["set-cookie"].lower()


def test_an_open_registry_needs_no_sign_in(open_catalogue: RegistryServer) -> None:
    with _client(open_catalogue) as client:
        home = client.get("/")
        page = client.get("/signin")
        posted = client.post(
            "/signin", data={"token": TOKEN}, headers={"Origin": open_catalogue.url}
        )
    assert "/modules/secret/db/aws" in home.text and ">Sign in<" not in home.text
    assert "This registry is open" in page.text
    assert posted.status_code == 303 and "set-cookie" not in posted.headers
