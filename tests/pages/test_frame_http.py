"""What every page shares, over real HTTP: the search box, the favicon, sign-in that sends a
person back to the page that needed it (and never to another site), and errors that speak to
a person on the pages while the API keeps its JSON."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import httpx
import pytest

from gitreg.auth.sessions import COOKIE
from gitreg.catalog.load import load_catalog
from tests.support.catalogue import TOKEN
from tests.support.servers import RegistryServer, free_port

PAGES = ["/", "/?q=vpc", "/modules/open/vpc/aws", "/providers/open/widget", "/signin"]


def _client(server: RegistryServer) -> httpx.Client:
    return httpx.Client(base_url=server.url, timeout=60)


@pytest.mark.parametrize("path", [*PAGES, "/modules/secret/db/aws", "/no/such/page"])
def test_every_page_has_the_search_box_and_the_icon(catalogue: RegistryServer, path: str) -> None:
    with _client(catalogue) as client:
        page = client.get(path, headers={"Accept": "text/html"})
    assert page.headers["content-type"].startswith("text/html"), (path, page.text)
    form = re.search(
        r'<form class="search" role="search" method="get" action="/">(.*?)</form>', page.text, re.S
    )
    assert form is not None, path
    assert '<label class="visually-hidden" for="q">Search modules and providers</label>' in form[1]
    assert 'id="q" name="q" type="search"' in form[1]
    icon = re.search(r'<link rel="icon" href="(/static/favicon\.svg\?v=[0-9a-f]{8})"', page.text)
    assert icon is not None, path


def test_the_search_box_holds_the_query(catalogue: RegistryServer) -> None:
    with _client(catalogue) as client:
        page = client.get("/", params={"q": 'vpc "x"'})
    assert 'value="vpc &#34;x&#34;"' in page.text


def test_the_favicon(catalogue: RegistryServer) -> None:
    with _client(catalogue) as client:
        ico = client.get("/favicon.ico")
        again = client.get("/favicon.ico", headers={"If-None-Match": ico.headers["etag"]})
        home = client.get("/")
        svg_url = re.search(r'<link rel="icon" href="([^"]+)"', home.text)
        assert svg_url is not None
        svg = client.get(svg_url[1])
    assert ico.status_code == 200 and ico.headers["content-type"] == "image/x-icon"
    assert ico.headers["cache-control"] == "public, max-age=86400"
    assert again.status_code == 304
    # An icon directory of PNG images, each a square of the size it says.
    reserved, kind, count = struct.unpack("<HHH", ico.content[:6])
    assert (reserved, kind) == (0, 1) and count >= 2
    for n in range(count):
        width, height, _, _, _, _, size, offset = struct.unpack(
            "<BBBBHHII", ico.content[6 + 16 * n : 22 + 16 * n]
        )
        png = ico.content[offset : offset + size]
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        assert struct.unpack(">II", png[16:24]) == (width, height) and width == height
    assert svg.headers["content-type"] == "image/svg+xml"
    assert svg.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert svg.text.startswith("<svg") and "<script" not in svg.text
    assert len(svg.content) < 1024 and len(ico.content) < 8192


def _sign_in(
    client: httpx.Client, server: RegistryServer, next_field: str | None
) -> httpx.Response:
    form = {"token": TOKEN} if next_field is None else {"token": TOKEN, "next": next_field}
    return client.post("/signin", data=form, headers={"Origin": server.url})


def _with_session(client: httpx.Client, answer: httpx.Response) -> None:
    # httpx, unlike a browser, does not send a Secure cookie over http://127.0.0.1.
    value = answer.cookies[COOKIE]
    client.cookies.clear()
    client.cookies.set(COOKIE, value)


def test_sign_in_goes_back_to_the_page_that_asked(catalogue: RegistryServer) -> None:
    with _client(catalogue) as client:
        asked = client.get("/modules/secret/db/aws")
        link = re.search(r'<a class="button" href="(/signin\?next=[^"]+)">Sign in</a>', asked.text)
        assert asked.status_code == 401 and link is not None
        form = client.get(link[1].replace("&amp;", "&"))
        assert '<input type="hidden" name="next" value="/modules/secret/db/aws">' in form.text
        answer = _sign_in(client, catalogue, "/modules/secret/db/aws")
        assert answer.status_code == 303
        assert answer.headers["location"] == "/signin?done=1&next=%2Fmodules%2Fsecret%2Fdb%2Faws"
        _with_session(client, answer)
        done = client.get(answer.headers["location"])
        assert done.status_code == 303 and done.headers["location"] == "/modules/secret/db/aws"
        back = client.get(done.headers["location"])
        assert back.status_code == 200 and "A private database module." in back.text


def test_the_header_sign_in_link_comes_back_to_the_page(catalogue: RegistryServer) -> None:
    with _client(catalogue) as client:
        provider = client.get("/providers/open/widget")
        searched = client.get("/?q=vpc")
        home = client.get("/")
    assert 'href="/signin?next=%2Fproviders%2Fopen%2Fwidget">Sign in</a>' in provider.text
    assert 'href="/signin?next=%2F%3Fq%3Dvpc">Sign in</a>' in searched.text
    assert 'href="/signin">Sign in</a>' in home.text


@pytest.mark.parametrize(
    "hostile",
    [
        "//evil.example",
        "https://evil.example/",
        "/\\evil.example",
        "\\\\evil.example",
        "/\t/evil.example",
        "javascript:alert(1)",
        "//evil.example/%2F..",
        "/signin?next=//evil.example",
    ],
)
def test_sign_in_never_sends_a_person_to_another_site(
    catalogue: RegistryServer, hostile: str
) -> None:
    with _client(catalogue) as client:
        form = client.get("/signin", params={"next": hostile})
        assert '<input type="hidden" name="next" value="/">' in form.text
        assert "evil" not in form.text and "javascript" not in form.text
        answer = _sign_in(client, catalogue, hostile)
        assert answer.status_code == 303 and answer.headers["location"] == "/signin?done=1"
        _with_session(client, answer)
        done = client.get("/signin", params={"done": "1", "next": hostile})
    assert done.status_code == 303 and done.headers["location"] == "/"


def test_without_the_cookie_the_page_after_sign_in_says_why(catalogue: RegistryServer) -> None:
    """A browser that dropped the Secure cookie (plain HTTP to another host) is told, on the
    sign-in page, rather than sent back to a page that would ask it to sign in again."""
    with _client(catalogue) as client:
        page = client.get("/signin", params={"done": "1", "next": "/modules/secret/db/aws"})
    assert page.status_code == 200 and "did not keep the session cookie" in page.text


def test_signed_in_the_sign_in_page_offers_the_way_back(catalogue: RegistryServer) -> None:
    with _client(catalogue) as client:
        _with_session(client, _sign_in(client, catalogue, None))
        page = client.get("/signin", params={"next": "/providers/open/widget"})
    assert "You are signed in as" in page.text
    assert '<a class="button" href="/providers/open/widget">Go back</a>' in page.text


def test_an_open_registry_sends_the_person_back(open_catalogue: RegistryServer) -> None:
    with _client(open_catalogue) as client:
        posted = _sign_in(client, open_catalogue, "/providers/open/widget")
    assert posted.status_code == 303 and posted.headers["location"] == "/providers/open/widget"
    assert "set-cookie" not in posted.headers


@pytest.mark.parametrize(
    ("path", "status", "heading"),
    [
        ("/nothing-here", 404, "Not found"),
        ("/modules/open/vpc", 404, "Not found"),
        ("/modules/open/nothing/aws", 404, "Not found"),
        ("/modules/open/vpc/aws/not-a-version", 400, "This address is not right"),
    ],
)
def test_a_browser_gets_a_page_that_speaks_to_it(
    catalogue: RegistryServer, path: str, status: int, heading: str
) -> None:
    html = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
    with _client(catalogue) as client:
        page = client.get(path, headers=html)
    assert page.status_code == status
    assert page.headers["content-type"].startswith("text/html")
    assert f"<h1>{heading}</h1>" in page.text and 'href="/">See all modules' in page.text
    assert "errors" not in page.text and "README" not in page.text


@pytest.mark.parametrize("accept", [None, "application/json", "*/*"])
def test_the_api_keeps_its_json(catalogue: RegistryServer, accept: str | None) -> None:
    headers = {"Accept": accept} if accept else {}
    with _client(catalogue) as client:
        private = client.get("/v1/modules/secret/db/aws/versions", headers=headers)
        unknown = client.get("/nothing-here", headers=headers)
    assert private.status_code == 401 and private.headers["www-authenticate"]
    assert private.json()["errors"]
    assert unknown.status_code == 404 and unknown.json() == {
        "errors": ["no such endpoint: /nothing-here"]
    }


def test_a_browser_opening_the_api_keeps_its_json(catalogue: RegistryServer) -> None:
    with _client(catalogue) as client:
        answer = client.get("/v1/modules/secret/db/aws/versions", headers={"Accept": "text/html"})
    assert answer.status_code == 401 and answer.json()["errors"]


def test_a_page_while_the_registry_cannot_read_says_so(tmp_path: Path) -> None:
    base = f"http://127.0.0.1:{free_port()}/"  # nothing listens there
    path = tmp_path / "registry.yaml"
    path.write_text(
        "cache_dir: cache\nrefresh_interval: 1h\nfresh_reads: 0\n"
        f"modules:\n  - {{namespace: a, name: m, system: x, repo: '{base}repo.git'}}\n"
    )
    with RegistryServer(load_catalog(path)) as server, _client(server) as client:
        page = client.get("/modules/a/m/x")
        api = client.get("/v1/modules/a/m/x/versions")
    assert page.status_code == api.status_code == 503
    assert page.headers["content-type"].startswith("text/html")
    assert page.headers["retry-after"] == "10"
    assert '<meta http-equiv="refresh" content="10">' in page.text
    assert (
        "<h1>Not ready yet</h1>" in page.text and 'href="/modules/a/m/x">Try again now' in page.text
    )
    assert base not in page.text  # the reason, with its addresses, is for the log and the API
    assert "its versions are not known yet" in api.json()["errors"][0]


def test_a_signed_in_reader_refused_is_told_who_they_are(catalogue: RegistryServer) -> None:
    with _client(catalogue) as client:
        _with_session(client, _sign_in(client, catalogue, None))
        page = client.get("/modules/team-b/network/aws")  # a namespace the token does not read
    assert page.status_code == 403 and page.headers["content-type"].startswith("text/html")
    assert "<h1>Not yours to read</h1>" in page.text
    assert "You are signed in as reader, and that token may not read this page." in page.text
    assert "Sign in with another token" in page.text and "it reads" not in page.text


def test_an_ended_session_is_asked_to_sign_in_again(catalogue: RegistryServer) -> None:
    with _client(catalogue) as client:
        _with_session(client, _sign_in(client, catalogue, None))
        assert client.get("/modules/secret/db/aws").status_code == 200
        client.post("/signout", headers={"Origin": catalogue.url})
        page = client.get("/modules/secret/db/aws")  # the same cookie, its session ended
    assert page.status_code == 401 and "<h1>Sign in again</h1>" in page.text
    assert "Your session has ended" in page.text
    assert 'href="/signin?next=%2Fmodules%2Fsecret%2Fdb%2Faws">Sign in</a>' in page.text
