"""A listing's pages asked ahead of their reading. A forge answers a page in about the time its
JSON takes to read, and a real one takes far longer than that to make a page; so the next page
is asked while one is read, and a few are asked at once, in order: where the first page says
how many there are (a Link rel="last" whose URL differs from the first's only by its page
number: GitLab, GitHub, Gitea), or where pages are numbered by an offset that the first page's
next one says the step of (Bitbucket's `start`; GitLab's `page` past 10,000 projects, where it
says no count). Each page still says what comes after it, and
the forge's word wins: a next page that is not the one planned drops the plan and is followed
one at a time; a page that says it is the last ends the listing there."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import count, islice

import httpx

from gitreg.pacing import background_thread, in_background
from gitreg.sources.forge_json import Malformed

AT_ONCE = 4  # pages asked at once, where the first says how many there are
# Pages asked at once where nothing says how many there are (offsets): each asked past the last
# is a request the forge answers with an empty page, so fewer.
AT_ONCE_UNCOUNTED = 2


class PagesAhead:
    """`answer(url)` asks a page on a thread of the listing's; `on_origin(url)` checks a URL a
    page names (raising when it leads elsewhere). Close when the listing ends."""

    def __init__(
        self,
        answer: Callable[[httpx.URL], httpx.Response],
        on_origin: Callable[[httpx.URL], httpx.URL],
        most: int,
    ) -> None:
        self._answer = answer
        self._on_origin = on_origin
        self._most = most  # pages a listing may have
        initializer = background_thread if in_background() else None
        self._pool = ThreadPoolExecutor(AT_ONCE, "forge-pages", initializer=initializer)
        self._asked: set[str] = set()
        self._under_way: deque[tuple[httpx.URL, Future[httpx.Response]]] = deque()
        self._planned: deque[httpx.URL] = deque()
        self._strides: Iterator[httpx.URL] = iter(())  # planned pages not yet in _planned
        self._at_once = AT_ONCE

    def ask(self, url: httpx.URL) -> None:
        if str(url) in self._asked:
            raise Malformed(f"its pages come back to {url} again")
        self._asked.add(str(url))
        self._under_way.append((url, self._pool.submit(self._answer, url)))

    def next_answer(self) -> httpx.Response | None:
        """The next page's answer, in order; None when no page is left to read."""
        if not self._under_way:
            return None
        _, answer = self._under_way.popleft()
        return answer.result()

    def plan(self, first: httpx.Response) -> None:
        """The pages after `first`, when its Link rel="last" says how many there are."""
        last = first.links.get("last", {}).get("url")
        if not last:
            return
        last_url = first.url.join(last)
        number = _number(last_url.params.get("page", ""))
        if number is None:
            return  # not a page number a listing could reach: followed one page at a time
        if not _same_page(last_url, first.url.copy_set_param("page", str(number))):
            return  # paging of another shape (a cursor): followed one page at a time
        count = min(number, self._most)
        self._planned.extend(first.url.copy_set_param("page", str(n)) for n in range(2, count + 1))

    def plan_strides(self, first: httpx.URL, after: str | httpx.URL, offset: str) -> None:
        """The pages from `after`, which the forge named next to `first`, when the two differ
        only by the offset `offset` (Bitbucket's `start`, GitLab's `page` past 10,000
        projects) and nothing is planned yet: `after`, then each a step on, the step being the
        one from `first` to `after`, until a page says it is the last. Nothing says how many
        there are: at most AT_ONCE_UNCOUNTED - 1 are asked past the last."""
        if self._planned:
            return  # the first page said how many there are
        after_url = first.join(after)
        begun = _number(first.params.get(offset, "0"))
        then = _number(after_url.params.get(offset, ""))
        if begun is None or then is None or then <= begun:
            return
        if not _same_page(after_url, first.copy_set_param(offset, str(then))):
            return  # it differs by more than its offset: followed one page at a time
        step = then - begun
        self._at_once = AT_ONCE_UNCOUNTED
        numbers = (then + n * step for n in count())
        pages = (after_url.copy_set_param(offset, str(start)) for start in numbers)
        self._strides = islice(pages, self._most - 1)

    def follow(self, page: httpx.Response, after: str | httpx.URL | None) -> None:
        """What `page` says comes after it (None: nothing), reconciled with what was asked."""
        if after is None:
            self._drop()  # the last page, whatever was planned (repositories gone meanwhile)
            return
        url = self._on_origin(page.url.join(after))
        expected = self._under_way[0][0] if self._under_way else self._next_planned()
        if expected is None or not _same_page(url, expected):
            self._drop()
            self.ask(url)
        while len(self._under_way) < self._at_once and self._next_planned() is not None:
            self.ask(self._planned.popleft())

    def pending(self) -> bool:
        return bool(self._under_way) or self._next_planned() is not None

    def close(self) -> None:
        """Nothing more is asked; what is under way ends first (within the client's timeout),
        so that it never meets a client closed under it."""
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _next_planned(self) -> httpx.URL | None:
        """The next page planned, left in the plan; None when none is."""
        if not self._planned:
            following = next(self._strides, None)
            if following is None:
                return None
            self._planned.append(following)
        return self._planned[0]

    def _drop(self) -> None:
        """Nothing planned or under way is read: a URL dropped may be asked again later."""
        for url, answer in self._under_way:
            answer.cancel()
            self._asked.discard(str(url))
        for url in self._planned:
            self._asked.discard(str(url))
        self._under_way.clear()
        self._planned.clear()
        self._strides = iter(())


def _number(digits: str) -> int | None:
    """A page number or offset a listing could reach; None for anything else."""
    if digits.isascii() and digits.isdigit() and len(digits) <= 9:
        return int(digits)
    return None


def _same_page(a: httpx.URL, b: httpx.URL) -> bool:
    """The same page: the same address and the same query, in whatever order."""
    if str(a) == str(b):
        return True  # as planned, mostly: the query need not be parsed
    same_place = (a.scheme, a.host, a.port, a.path) == (b.scheme, b.host, b.port, b.path)
    return same_place and sorted(a.params.multi_items()) == sorted(b.params.multi_items())
