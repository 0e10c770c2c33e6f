"""A listing's pages asked ahead: where the first page says how many there are, the next few
are asked at once, in order; the forge's own word about what comes after each page wins over
the plan (a next page not planned is followed one at a time, a last page ends the listing)."""

from __future__ import annotations

import threading

import httpx

from gitreg.sources.forge_pages import AT_ONCE, PagesAhead

BASE = "https://forge.test/api/v4/groups/p/projects?per_page=2"


class Forge:
    """Answers each URL with the Link header a test gives it, and records what was asked."""

    def __init__(self, links: dict[str, str]) -> None:
        self.links = links
        self.asked: list[str] = []
        self._lock = threading.Lock()

    def answer(self, url: httpx.URL) -> httpx.Response:
        with self._lock:
            self.asked.append(str(url))
        headers = {"Link": self.links[str(url)]} if str(url) in self.links else {}
        return httpx.Response(200, headers=headers, request=httpx.Request("GET", url))


def page(n: int) -> str:
    return str(httpx.URL(BASE).copy_set_param("page", str(n)))


def link(rel: str, url: str) -> str:
    return f'<{url}>; rel="{rel}"'


def read_all(forge: Forge, first: str) -> list[str]:
    """Every page's URL in the order read, each page followed by its rel=next."""
    pages = PagesAhead(forge.answer, lambda url: url, 1000)
    read = []
    try:
        pages.ask(httpx.URL(first))
        for number in range(100):
            response = pages.next_answer()
            if response is None:
                break
            if number == 0:
                pages.plan(response)
            read.append(str(response.url))
            pages.follow(response, response.links.get("next", {}).get("url"))
    finally:
        pages.close()
    return read


def test_pages_the_first_counts_are_asked_at_once_and_read_in_order() -> None:
    last = link("last", page(6))
    links = {BASE: f"{link('next', page(2))}, {last}"}
    links |= {page(n): f"{link('next', page(n + 1))}, {last}" for n in range(2, 6)}
    forge = Forge(links)
    assert read_all(forge, BASE) == [BASE, *(page(n) for n in range(2, 7))]
    assert sorted(forge.asked) == sorted([BASE, *(page(n) for n in range(2, 7))])  # each once
    assert AT_ONCE > 1


def test_a_next_page_other_than_planned_drops_the_plan() -> None:
    cursor = "https://forge.test/api/v4/groups/p/projects?per_page=2&cursor=abc"
    last = link("last", page(4))
    forge = Forge({BASE: f"{link('next', cursor)}, {last}", cursor: ""})
    assert read_all(forge, BASE) == [BASE, cursor]  # the forge's word, not pages 2 to 4


def test_a_page_that_says_it_is_the_last_ends_the_listing() -> None:
    last = link("last", page(5))
    forge = Forge({BASE: f"{link('next', page(2))}, {last}", page(2): last})
    assert read_all(forge, BASE) == [BASE, page(2)]  # repositories gone meanwhile


def test_a_last_link_of_another_shape_plans_nothing() -> None:
    last = link("last", "https://forge.test/api/v4/groups/p/projects?per_page=50&page=9")
    forge = Forge({BASE: last})
    assert read_all(forge, BASE) == [BASE]
    assert forge.asked == [BASE]


def test_a_last_page_number_no_listing_could_reach_plans_nothing() -> None:
    last = link("last", page(int("9" * 30)))
    forge = Forge({BASE: last})
    assert read_all(forge, BASE) == [BASE]
