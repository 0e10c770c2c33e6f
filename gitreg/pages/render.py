"""The Jinja2 environment the pages are rendered with: templates and static files shipped in
the package, every value HTML-escaped unless marked safe (only a sanitised README is)."""

from __future__ import annotations

import datetime
import hashlib
import threading
from collections.abc import Hashable
from dataclasses import dataclass
from importlib import resources
from typing import Any

import jinja2
from markupsafe import Markup

from gitreg.directory.view import DirectoryModule, DirectoryProvider

_PACKAGE = "gitreg.pages"
_STATIC_TYPES = {
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
    ".ico": "image/x-icon",
}


@dataclass(frozen=True)
class StaticFile:
    body: bytes
    media_type: str
    etag: str


def _date(moment: int | None) -> str:
    if moment is None:
        return ""
    return datetime.datetime.fromtimestamp(moment, datetime.UTC).strftime("%Y-%m-%d")


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader(_PACKAGE, "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        # Shipped in the package, they never change while serving: no stat() of each template
        # file at each render.
        auto_reload=False,
    )
    env.filters["date"] = _date
    env.filters["short"] = lambda commit: commit[:12]
    env.filters["deprecation"] = _deprecation
    env.filters["revocation"] = _revocation
    return env


def _deprecation(item: DirectoryModule | DirectoryProvider) -> str:
    """Why a listed module's or provider's version is deprecated; "" when it is not."""
    if isinstance(item, DirectoryModule):
        return item.entry.deprecation(item.release) or ""
    return item.entry.deprecation(item.version) or ""


def _revocation(item: DirectoryModule | DirectoryProvider) -> str:
    """Why a listed module's or provider's version is revoked; "" when it is not."""
    if isinstance(item, DirectoryModule):
        return item.entry.revocation(item.release) or ""
    return item.entry.revocation(item.version) or ""


def _static() -> dict[str, StaticFile]:
    found = {}
    for item in resources.files(_PACKAGE).joinpath("static").iterdir():
        suffix = "." + item.name.rpartition(".")[2]
        if suffix not in _STATIC_TYPES:
            continue
        body = item.read_bytes()
        etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
        found[item.name] = StaticFile(body, _STATIC_TYPES[suffix], etag)
    return found


FRAGMENTS = 20_000  # rendered list items kept: a list of 1,000 modules is rendered from them
REMEMBERED = 256  # rendered lists kept by value (a few kilobytes each)


class Pages:
    """The templates, compiled once, and the static files, read once."""

    def __init__(self) -> None:
        self.env = _environment()
        self.static = _static()
        # A list's items change far less often than it is shown: each is rendered once, then
        # joined. The directory keeps its listed modules until a sync swaps the index, so an
        # item is found by identity (the value itself is kept, so that its id is not reused).
        # Forgotten all at once when full.
        self._fragments: dict[tuple[str, int], tuple[object, Markup]] = {}
        self._by_value: dict[tuple[str, Hashable], Markup] = {}
        self._lock = threading.Lock()
        self.env.globals["fragment"] = self.fragment
        self.env.globals["remembered"] = self.remembered
        # The stylesheet's and script's URLs change with their content: cached for a year.
        self.env.globals["asset"] = lambda name: f"/static/{name}?v={self.static[name].etag[1:9]}"

    def fragment(self, template: str, item: object) -> Markup:
        """`template` rendered with `item` (an immutable value), remembered for that value."""
        key = (template, id(item))
        found = self._fragments.get(key)
        if found is not None and found[0] is item:
            return found[1]
        html = Markup(self.env.get_template(template).render(item=item))
        with self._lock:
            if len(self._fragments) >= FRAGMENTS:
                self._fragments.clear()
            self._fragments[key] = (item, html)
        return html

    def remembered(self, template: str, value: Hashable) -> Markup:
        """`template` rendered with `value`, plain data that renders alike when equal (tuples of
        names and counts), remembered for that value: found by equality where `fragment` finds
        its item by identity, for what is built anew per request but rarely changes (the
        namespaces' lines of the home page). Forgotten all at once when full."""
        key = (template, value)
        found = self._by_value.get(key)
        if found is not None:
            return found
        html = Markup(self.env.get_template(template).render(item=value))
        with self._lock:
            if len(self._by_value) >= REMEMBERED:
                self._by_value.clear()
            self._by_value[key] = html
        return html

    def render(self, template: str, **values: Any) -> str:
        return self.env.get_template(template).render(**values)


PAGES = Pages()
