"""`/` a page at a time, over real HTTP: the namespaces with what each holds, a namespace's
modules and providers, the matches of a search; both ends of each, a page past the end, a query
string it cannot read, and private namespaces that never show, not even in a count."""

from __future__ import annotations

import re
from html import unescape

import httpx
import pytest

from gitreg.pages.home import NAMESPACES_PER_PAGE, PAGE_SIZE
from tests.support.many_modules import BIG, SECRET, TEAMS, TOKEN
from tests.support.servers import RegistryServer

PUBLIC_NAMESPACES = 1 + TEAMS  # big and the teams


def _get(server: RegistryServer, path: str, token: str | None = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.get(server.url + path, headers=headers, timeout=60)


def _namespaces(html: str) -> list[tuple[str, str]]:
    """The index's namespaces: (link, what the line says of it)."""
    found = re.findall(
        r'<li><a href="(/\?namespace=[^"]+)">[^<]+</a> <span class="muted">([^<]*)', html
    )
    return [(unescape(link), counts) for link, counts in found]


def _entries(html: str) -> list[str]:
    """The modules' and providers' links listed."""
    return re.findall(r'<li><a href="(/(?:modules|providers)/[^"]+)">', html)


def _pager(html: str) -> dict[str, str]:
    """The pager's links, by rel (`prev`, `next`)."""
    return {rel: unescape(href) for rel, href in re.findall(r'<a rel="(\w+)" href="([^"]+)"', html)}


def test_the_index_lists_namespaces_with_counts(many: RegistryServer) -> None:
    first = _get(many, "/")
    assert first.status_code == 200
    listed = _namespaces(first.text)
    assert len(listed) == NAMESPACES_PER_PAGE
    assert listed[0] == ("/?namespace=big", f"{BIG} modules, 1 provider")
    assert listed[1] == ("/?namespace=team-000", "1 module")
    assert _entries(first.text) == []  # too many to show whole: a namespace at a time
    assert (
        f"{BIG + 1 + TEAMS} modules and providers in {PUBLIC_NAMESPACES} namespaces" in first.text
    )
    assert _pager(first.text) == {"next": "/?page=2"}  # nothing before the first


def test_the_index_last_page_and_past_it(many: RegistryServer) -> None:
    last = _get(many, "/?page=2")
    assert last.status_code == 200
    listed = _namespaces(last.text)
    assert len(listed) == PUBLIC_NAMESPACES - NAMESPACES_PER_PAGE
    assert listed[-1][0] == f"/?namespace=team-{TEAMS - 1:03d}"
    assert _pager(last.text) == {"prev": "/"}  # nothing after the last
    past = _get(many, "/?page=3")
    assert past.status_code == 404 and "text/html" in past.headers["content-type"]
    assert "there is no page 3" in past.text and "2 pages" in past.text


def test_a_namespace_a_page_at_a_time(many: RegistryServer) -> None:
    pages = [_get(many, "/?namespace=big" + (f"&page={n}" if n > 1 else "")) for n in (1, 2, 3)]
    assert [p.status_code for p in pages] == [200, 200, 200]
    listed = [_entries(p.text) for p in pages]
    assert [len(entries) for entries in listed] == [PAGE_SIZE, PAGE_SIZE, BIG + 1 - 2 * PAGE_SIZE]
    everything = [link for entries in listed for link in entries]
    modules = [f"/modules/big/mod{n:04d}/{'aws' if n % 2 == 0 else 'google'}" for n in range(BIG)]
    assert everything == [*modules, "/providers/big/widget"]  # sorted; the provider last
    assert _pager(pages[0].text) == {"next": "/?namespace=big&page=2"}
    assert _pager(pages[1].text) == {"prev": "/?namespace=big", "next": "/?namespace=big&page=3"}
    assert _pager(pages[2].text) == {"prev": "/?namespace=big&page=2"}
    assert f"{BIG + 1} modules and providers in big" in pages[0].text
    past = _get(many, "/?namespace=big&page=4")
    assert past.status_code == 404 and "there is no page 4" in past.text


def test_a_namespace_of_one_page_has_no_pager(many: RegistryServer) -> None:
    page = _get(many, "/?namespace=TEAM-007")  # as the registry looks namespaces up: any case
    assert page.status_code == 200
    assert _entries(page.text) == ["/modules/team-007/net/aws"]
    assert _pager(page.text) == {} and "Page 1 of" not in page.text
    assert _get(many, "/?namespace=team-007&page=2").status_code == 404


def test_search_is_of_the_whole_directory_a_page_at_a_time(many: RegistryServer) -> None:
    one = _get(many, "/?q=mod0042")
    assert _entries(one.text) == ["/modules/big/mod0042/aws"]
    everywhere = _get(many, "/?q=aws")  # big's aws modules and every team's net
    total = BIG // 2 + TEAMS
    assert f"{total} matches" in everywhere.text
    assert len(_entries(everywhere.text)) == PAGE_SIZE
    assert _pager(everywhere.text) == {"next": "/?q=aws&page=2"}
    last = _get(many, "/?q=aws&page=3")
    assert len(_entries(last.text)) == total - 2 * PAGE_SIZE
    assert _pager(last.text) == {"prev": "/?q=aws&page=2"}
    assert _get(many, "/?q=aws&page=4").status_code == 404
    within = _get(many, "/?q=net&namespace=team-003")
    assert _entries(within.text) == ["/modules/team-003/net/aws"]


def test_private_namespaces_never_show(many: RegistryServer) -> None:
    pages = [_get(many, "/"), _get(many, "/?page=2"), _get(many, "/?q=db0001")]
    for page in pages:
        assert "secret" not in page.text and "/modules/secret/" not in page.text
    # Not even counted: the totals are the public namespaces' alone.
    assert f"in {PUBLIC_NAMESPACES} namespaces" in pages[0].text
    # A private namespace answers as one that does not exist, whatever page is asked.
    for number in (1, 2, 99):
        private = _get(many, f"/?namespace=secret&page={number}")
        missing = _get(many, f"/?namespace=nosuch&page={number}")
        assert private.status_code == missing.status_code == 404
        assert private.text == missing.text.replace("nosuch", "secret")
        assert str(SECRET) not in private.text


def test_the_reader_of_a_private_namespace_sees_it(many: RegistryServer) -> None:
    index = _get(many, "/", TOKEN)
    assert _namespaces(index.text)[1] == ("/?namespace=secret", f"{SECRET} modules")  # sorted
    assert f"in {PUBLIC_NAMESPACES + 1} namespaces" in index.text
    last = _get(many, "/?namespace=secret&page=2", TOKEN)
    assert len(_entries(last.text)) == SECRET - PAGE_SIZE


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("page=0", "page must be a whole number from 1"),
        ("page=-1", "page must be a whole number"),
        ("page=abc", "page must be a whole number"),
        ("page=1.5", "page must be a whole number"),
        ("page=", "page must be a whole number"),
        ("page=99999999999", "page must be a whole number"),
        ("page=%EF%BC%91", "page must be a whole number"),  # a full-width digit one
        ("namespace=", "namespace"),
        ("namespace=bad%20name", "namespace"),
        ("namespace=" + "a" * 65, "at most 64"),
        ("namespace=-x", "namespace"),
        ("pgae=2", "unknown parameter"),
        ("page=1&page=2", "more than once"),
        ("q=" + "x" * 300, "at most 200"),
    ],
)
def test_a_query_string_it_cannot_read_is_a_400_page(
    many: RegistryServer, query: str, says: str
) -> None:
    page = _get(many, "/?" + query)
    assert page.status_code == 400, page.text
    assert "text/html" in page.headers["content-type"]
    assert says in unescape(page.text)
