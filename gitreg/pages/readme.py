"""A repository's README as HTML safe to serve in the registry's origin.

Markdown is rendered by markdown-it-py, then cleaned by nh3 (an allow-list: no script, no event
handlers, no style, no URL but http(s) and mailto, images over https only), and its headings are
moved under the page's own."""

from __future__ import annotations

import re
from collections import Counter
from typing import Protocol
from urllib.parse import urlsplit

import nh3
from markdown_it import MarkdownIt
from markdown_it.token import Token

# What a README may hold: ammonia's defaults (text, lists, tables, code, images, details), less
# what could look like the registry's own page or reach outside it unasked.
_TAGS = set(nh3.ALLOWED_TAGS) - {"area", "map", "bdo"}
_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title", "width", "height"},
    "th": {"align", "colspan", "rowspan"},
    "td": {"align", "colspan", "rowspan"},
    "ol": {"start"},
    "abbr": {"title"},
}
_SCHEMES = {"http", "https", "mailto"}
HEADING_SHIFT = 2  # the page has its h1 (the module) and h2 (README): a README's `#` is an h3
# HTML nested deeper than this is a README's raw HTML shown as text: the sanitiser's parser
# takes time that grows with the square of the depth; real READMEs nest a few levels.
MAX_DEPTH = 100  # levels of raw HTML shown as such (bench/RESULTS.md: bench.pages)
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)[^>]*?(/?)>")
# The HTML standard's formatting elements: a parser reopens those left open in each block after.
_FORMATTING = {"a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike",
               "strong", "tt", "u"}  # fmt: skip
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
         "track", "wbr", "param"}  # fmt: skip


class Resolver(Protocol):
    """Where a link (or an image) relative to the README points: an https URL, or None."""

    def link(self, relative: str) -> str | None: ...

    def image(self, relative: str) -> str | None: ...


def _markdown(raw_html: bool = True) -> MarkdownIt:
    # Raw HTML is let through to nh3, which keeps its harmless part: READMEs use <img>, <br>,
    # <details> and tables in HTML; a Markdown renderer that escaped it would show tag soup.
    md = MarkdownIt("commonmark", {"html": raw_html, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.core.ruler.push("gitreg_headings", _shift_headings)
    return md


def _shift_headings(state: object) -> None:
    tokens: list[Token] = state.tokens  # type: ignore[attr-defined]
    for token in tokens:
        if token.type in ("heading_open", "heading_close"):
            level = min(6, int(token.tag[1]) + HEADING_SHIFT)
            token.tag = f"h{level}"


_MD = _markdown()
_MD_TEXT_ONLY = _markdown(raw_html=False)


def render_readme(text: str, resolve: Resolver | None = None) -> str:
    """`text` (Markdown) as sanitised HTML. Links relative to the README are passed to
    `resolve` (to point at the repository's web page), and dropped when it gives None. Raw
    HTML nested over MAX_DEPTH is shown as text, so that no README costs the sanitiser more
    than a linear pass."""
    html = _MD.render(text)
    if nested_too_deep(html):
        html = _MD_TEXT_ONLY.render(text)
    return sanitise(html, resolve)


def nested_too_deep(html: str) -> bool:
    """Do `html`'s elements nest deeper than MAX_DEPTH, or does it leave more than MAX_DEPTH
    formatting elements open (a parser opens them again in every paragraph that follows)? One
    pass over its tags, which stops there: linear whatever the input."""
    open_tags: list[str] = []
    formatting: Counter[str] = Counter()  # opened, not closed yet, whatever closed around them
    for match in _TAG.finditer(html):
        closing, name, self_closing = match.group(1), match.group(2).lower(), match.group(3)
        if closing:
            if name in open_tags:
                del open_tags[len(open_tags) - 1 - open_tags[::-1].index(name) :]
            if formatting[name] > 0:
                formatting[name] -= 1
        elif name not in _VOID and not self_closing:
            open_tags.append(name)
            if name in _FORMATTING:
                formatting[name] += 1
            if len(open_tags) > MAX_DEPTH or formatting.total() > MAX_DEPTH:
                return True
    return False


def sanitise(html: str, resolve: Resolver | None = None) -> str:
    def keep(tag: str, attribute: str, value: str) -> str | None:
        if attribute not in ("href", "src"):
            return value
        return _url(tag, attribute, value, resolve)

    return nh3.clean(
        html,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        url_schemes=_SCHEMES,
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
        attribute_filter=keep,
    )


def _url(tag: str, attribute: str, value: str, resolve: Resolver | None) -> str | None:
    text = value.strip()
    if not text or any(ord(c) < 0x20 for c in text):  # "java\tscript:" and friends
        return None
    try:
        parts = urlsplit(text)
    except ValueError:
        return None
    if tag == "a" and text.startswith("#"):
        return text
    scheme = parts.scheme.lower()
    if scheme or text.startswith("//"):
        if tag == "img":  # images load as the page opens: https only, never data: or http:
            return text if scheme == "https" else None
        return text if scheme in _SCHEMES else None
    # Relative to the README: its repository knows what it means, the registry does not.
    if resolve is None:
        return None
    resolved = resolve.image(text) if tag == "img" else resolve.link(text)
    if resolved is None or urlsplit(resolved).scheme != "https":
        return None
    return resolved
