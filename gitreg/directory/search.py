"""Search of a directory view, best matches first.

Every term of a query must match a module's namespace, name, system or description
(case-insensitively); an exact name comes before the rest."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TypeVar

from gitreg.directory.view import DirectoryModule, DirectoryProvider, DirectoryView

MAX_QUERY = 200  # characters: a query is a few words, not a document
MAX_TERMS = 16

_SPLIT = re.compile(r"[\s/]+")  # `infra/vpc` finds the module at that address

_Item = TypeVar("_Item", DirectoryModule, DirectoryProvider)


def query_problem(query: str) -> str | None:
    """Why `query` cannot be searched for, or None when it can."""
    if len(query) > MAX_QUERY:
        return f"the query is {len(query)} characters long; at most {MAX_QUERY} are allowed"
    if len(terms_of(query)) > MAX_TERMS:
        return f"the query has more than {MAX_TERMS} words"
    return None


def terms_of(query: str) -> list[str]:
    return [t for t in _SPLIT.split(query.casefold()) if t]


def search(view: DirectoryView, query: str) -> list[DirectoryModule]:
    """The view's modules that match every term of `query`, best first (all of them, in the
    view's order, for a query without terms). ValueError for a query too long to search."""
    return _ranked(view.modules, query)


def search_providers(view: DirectoryView, query: str) -> list[DirectoryProvider]:
    """As `search`, for the hosted providers (their type stands for the module's name)."""
    return _ranked(view.providers, query)


def _ranked(items: Sequence[_Item], query: str) -> list[_Item]:
    problem = query_problem(query)
    if problem:
        raise ValueError(problem)
    terms = terms_of(query)
    if not terms:
        return list(items)
    whole = "/".join(terms)
    scored = []
    for position, item in enumerate(items):
        score = _score(item, terms, whole)
        if score:
            scored.append((-score, position, item))
    scored.sort(key=lambda s: (s[0], s[1]))
    return [item for _, _, item in scored]


def _score(item: DirectoryModule | DirectoryProvider, terms: list[str], whole: str) -> int:
    """0 when a term matches nothing; otherwise higher for better matches: the address or name
    exactly, then a name that starts with a term, then any field that holds it."""
    if isinstance(item, DirectoryModule):
        name, system = item.name.casefold(), item.system.casefold()
    else:
        name, system = item.type.casefold(), ""
    namespace = item.namespace.casefold()
    description = item.description.casefold()
    total = 0
    if whole in (name, f"{namespace}/{name}", f"{namespace}/{name}/{system}"):
        total += 1000
    for term in terms:
        best = 0
        if term == name:
            best = 100
        elif name.startswith(term):
            best = 40
        elif term in name:
            best = 20
        if term == namespace:
            best = max(best, 15)
        elif term in namespace:
            best = max(best, 8)
        if term == system:
            best = max(best, 10)
        elif term in system:
            best = max(best, 5)
        if term in description:
            best = max(best, 3)
        if not best:
            return 0
        total += best
    return total
