"""What the home page shows, a page at a time, as plain data for the template.

It shows the namespaces a reader may read with what each holds (and, when all of it fits one
page, every module and provider under them); one namespace's modules and providers; or the
matches of a search of the whole directory. A query string it cannot read is a ClientError that
says which part; a page past the last is a NotFound, and so is a namespace the reader may not
read, worded as for one that does not exist, so that neither its name nor its size leaks."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple
from urllib.parse import urlencode

from gitreg.address import name_problem
from gitreg.directory.paging import Page
from gitreg.directory.search import query_problem, search, search_providers
from gitreg.directory.view import DirectoryModule, DirectoryProvider, DirectoryView, NamespaceGroup
from gitreg.errors import ClientError, NotFound

PAGE_SIZE = 100  # modules and providers of a namespace, or matches of a search, on one page
NAMESPACES_PER_PAGE = 100  # namespaces on a page of the index
MAX_PAGE = 1_000_000
PARAMETERS = ("q", "namespace", "page")
_PAGE_NUMBER = re.compile(r"[0-9]{1,7}")


@dataclass(frozen=True)
class HomeQuery:
    """What `/` is asked for: a search (`q`), a namespace, and a page of it (from 1)."""

    query: str = ""
    namespace: str | None = None
    page: int = 1

    @classmethod
    def parse(cls, items: Iterable[tuple[str, str]]) -> HomeQuery:
        """From a query string's items; ClientError names what is wrong. Unknown parameters
        are refused rather than ignored: a mistyped `pgae=2` would show page 1 and say nothing."""
        given: dict[str, str] = {}
        for name, value in items:
            if name not in PARAMETERS:
                raise ClientError(
                    f"unknown parameter {name[:40]!r}: this page takes only q, namespace and page"
                )
            if name in given:
                raise ClientError(f"{name} is given more than once")
            given[name] = value
        query = given.get("q", "").strip()
        if problem := query_problem(query):
            raise ClientError(problem)
        namespace = given.get("namespace")
        if namespace is not None:
            if len(namespace) > 64:
                raise ClientError(
                    f"namespace is {len(namespace)} characters long; at most 64 are allowed"
                )
            if problem := name_problem(namespace, "namespace"):
                raise ClientError(problem)
        text = given.get("page", "1")
        if not _PAGE_NUMBER.fullmatch(text) or not 1 <= int(text) <= MAX_PAGE:
            raise ClientError(
                f"page must be a whole number from 1 to {MAX_PAGE}, not {text[:40]!r}"
            )
        return cls(query, namespace, int(text))

    def url(self, page: int) -> str:
        """This query's page `page` (the first has no number)."""
        params = {"q": self.query} if self.query else {}
        if self.namespace is not None:
            params["namespace"] = self.namespace
        if page > 1:
            params["page"] = str(page)
        return f"/?{urlencode(params)}" if params else "/"


class NamespaceLine(NamedTuple):
    """A namespace as the index lists it: a tuple, so that a page of them is quick to hash
    (the page renders the lines once per value: `Pages.remembered`)."""

    namespace: str
    modules: int
    providers: int


@dataclass(frozen=True)
class HomePage:
    ask: HomeQuery
    namespace: str | None  # the namespace shown, as the catalog spells it
    index: tuple[NamespaceLine, ...]  # the namespaces listed (the index's page; else none)
    groups: tuple[NamespaceGroup, ...]  # the modules and providers shown, by namespace
    count: int  # matches of a search; entries of a namespace; namespaces of the index
    entries: int  # on the index: every module and provider the reader may read
    page: Page

    @property
    def previous_url(self) -> str | None:
        previous = self.page.previous
        return self.ask.url(previous) if previous is not None else None

    @property
    def next_url(self) -> str | None:
        following = self.page.next
        return self.ask.url(following) if following is not None else None


def home_page(view: DirectoryView, ask: HomeQuery) -> HomePage:
    if ask.query:
        return _search(view, ask)
    if ask.namespace is not None:
        return _namespace(view, ask, ask.namespace)
    return _index(view, ask)


def _index(view: DirectoryView, ask: HomeQuery) -> HomePage:
    shelves = view.shelves
    page = _existing(Page(ask.page, NAMESPACES_PER_PAGE, len(shelves)), "the namespaces")
    index = tuple(
        NamespaceLine(s.namespace, len(s.positions), len(s.providers))
        for s in shelves[page.start : page.stop]
    )
    entries = sum(s.size for s in shelves)
    # A directory that fits one page is shown whole, as one page that the script filters.
    groups = tuple(view.namespaces()) if entries <= PAGE_SIZE else ()
    return HomePage(ask, None, index, groups, len(shelves), entries, page)


def _namespace(view: DirectoryView, ask: HomeQuery, namespace: str) -> HomePage:
    shelf = view.shelf(namespace)
    if shelf is None:
        raise NotFound(f"there is nothing you may read in a namespace {namespace!r} here")
    page = _existing(
        Page(ask.page, PAGE_SIZE, shelf.size), f"the modules and providers of {shelf.namespace}"
    )
    modules = len(shelf.positions)
    shown = view.described(shelf.positions[page.start : page.stop])
    providers = shelf.providers[max(0, page.start - modules) : max(0, page.stop - modules)]
    group = NamespaceGroup(shelf.namespace, tuple(shown), providers)
    return HomePage(ask, shelf.namespace, (), (group,), shelf.size, shelf.size, page)


def _search(view: DirectoryView, ask: HomeQuery) -> HomePage:
    try:
        modules, providers = search(view, ask.query), search_providers(view, ask.query)
    except ValueError as exc:
        raise ClientError(str(exc)) from exc
    if ask.namespace is not None:  # one namespace's matches: none where it may not be read
        key = ask.namespace.lower()
        modules = [m for m in modules if m.key[0] == key]
        providers = [p for p in providers if p.namespace.lower() == key]
    found: list[DirectoryModule | DirectoryProvider] = [*modules, *providers]
    page = _existing(Page(ask.page, PAGE_SIZE, len(found)), "the matches")
    groups = _grouped(found[page.start : page.stop])
    return HomePage(ask, None, (), groups, len(found), len(found), page)


def _existing(page: Page, what: str) -> Page:
    if not page.exists:
        pages = "one page" if page.count == 1 else f"{page.count} pages"
        raise NotFound(f"there is no page {page.number}: {what} fit on {pages}")
    return page


def _grouped(items: Sequence[DirectoryModule | DirectoryProvider]) -> tuple[NamespaceGroup, ...]:
    """By namespace (sorted, case-insensitively), each in the order given (best match first)."""
    spelled: dict[str, str] = {}
    modules: dict[str, list[DirectoryModule]] = {}
    providers: dict[str, list[DirectoryProvider]] = {}
    for item in items:
        key = item.namespace.lower()
        spelled.setdefault(key, item.namespace)
        if isinstance(item, DirectoryModule):
            modules.setdefault(key, []).append(item)
        else:
            providers.setdefault(key, []).append(item)
    return tuple(
        NamespaceGroup(spelled[key], tuple(modules.get(key, ())), tuple(providers.get(key, ())))
        for key in sorted(spelled)
    )
