"""A listing's pages asked ahead: where the first page says how many there are, the next few
are asked at once, in order, and where pages are numbered by an offset, the next a step on;
the forge's own word about what comes after each page wins over the plan (a next page not
planned is followed one at a time, a last page ends the listing)."""

from __future__ import annotations

import threading

import httpx

from gitreg.sources.forge_pages import AT_ONCE, AT_ONCE_UNCOUNTED, PagesAhead

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


BITBUCKET = "https://forge.test/rest/api/1.0/projects/TF/repos?start=0&limit=1000"


def at(start: int) -> str:
    return str(httpx.URL(BITBUCKET).copy_set_param("start", str(start)))


def read_offsets(forge: Forge, nexts: dict[str, str | None]) -> list[str]:
    """Every page's URL in the order read, each page followed by the next its body names
    (`nexts`: Bitbucket's nextPageStart, None on the last page), the first's planning the
    pages a step on."""
    pages = PagesAhead(forge.answer, lambda url: url, 1000)
    read = []
    try:
        pages.ask(httpx.URL(BITBUCKET))
        for number in range(100):
            response = pages.next_answer()
            if response is None:
                break
            read.append(str(response.url))
            after = nexts.get(str(response.url))
            if number == 0 and after is not None:
                pages.plan_strides(response.url, after, "start")
            pages.follow(response, after)
    finally:
        pages.close()
    return read


def test_pages_numbered_by_an_offset_are_asked_a_step_ahead() -> None:
    forge = Forge({})
    nexts: dict[str, str | None] = {at(n): at(n + 1000) for n in range(0, 5000, 1000)}
    nexts[at(5000)] = None
    assert read_offsets(forge, nexts) == [at(n) for n in range(0, 6000, 1000)]
    read = {at(n) for n in range(0, 6000, 1000)}
    assert set(forge.asked) >= read and len(forge.asked) == len(set(forge.asked))
    past = set(forge.asked) - read  # asked past the last while it was read: empty pages
    assert past <= {at(n) for n in range(6000, 6000 + 1000 * (AT_ONCE_UNCOUNTED - 1), 1000)}


def test_a_next_offset_other_than_a_step_on_is_the_forges_word() -> None:
    """A page shorter than its limit that is not the last (Bitbucket's filtered pages): its
    nextPageStart is followed, the pages planned a step on are dropped, never read."""
    forge = Forge({})
    nexts: dict[str, str | None] = {at(0): at(1000), at(1000): at(1990), at(1990): None}
    assert read_offsets(forge, nexts) == [at(0), at(1000), at(1990)]


def test_an_offset_that_is_no_number_or_a_next_page_of_another_shape_plans_nothing() -> None:
    no_number = str(httpx.URL(BITBUCKET).copy_set_param("start", "1e3"))
    for after in (no_number, f"{at(1000)}&filter=x"):
        forge = Forge({})
        assert read_offsets(forge, {at(0): after, after: None}) == [at(0), after]
        assert sorted(forge.asked) == sorted({at(0), after})
