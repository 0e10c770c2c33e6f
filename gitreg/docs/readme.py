"""A README's first paragraph as plain text: the one-line description lists and search show.
Leading headings, badges, HTML and code blocks are skipped; Markdown markup is removed."""

from __future__ import annotations

import html
import re

DESCRIPTION_MOST = 400  # characters: a list shows a line or two, not an essay

_HEADING = re.compile(r"^\s{0,3}#{1,6}(\s|$)")
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)|!\[([^\]]*)\]\[[^\]]*\]")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)|\[([^\]]*)\]\[[^\]]*\]")
_HTML_TAG = re.compile(r"<[^>]{0,400}>")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_EMPHASIS = re.compile(r"(\*\*|__|\*|_|~~)(?=\S)(.+?)(?<=\S)\1")
_CODE = re.compile(r"`+([^`]*)`+")
_REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s")
_NOT_PROSE = re.compile(r"^\s{0,3}([-*+]\s|\d+[.)]\s|>|<|\||    |\t)")
_ESCAPED = re.compile(r"\\([\\`*_{}\[\]()#+\-.!<>~|])")
_HELD = 0xE000  # escaped characters wait in Unicode's private use area while markup goes


def description(readme: str) -> str:
    """The first paragraph of prose, as plain text; "" when there is none."""
    text = _HTML_COMMENT.sub("", readme.replace("\r\n", "\n"))
    lines = text.split("\n")
    paragraph: list[str] = []
    fenced = False
    for n, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
            if paragraph:
                break
            continue
        if fenced:
            continue
        if not line.strip():
            if paragraph:
                break
            continue
        following = lines[n + 1] if n + 1 < len(lines) else ""
        if not paragraph and (
            _HEADING.match(line)
            or _SETEXT.match(line)
            or (_SETEXT.match(following) and following.strip().startswith("="))
            or _REFERENCE.match(line)
            or _NOT_PROSE.match(line)
            or not plain(line)
        ):
            continue  # a heading, badges, HTML, a list or a table before any prose
        if paragraph and (_HEADING.match(line) or _FENCE.match(line)):
            break
        if _SETEXT.match(following) and paragraph:
            break
        paragraph.append(line.strip())
    return _shorten(plain(" ".join(paragraph)))


def plain(markdown: str) -> str:
    """Inline Markdown as plain text: images dropped, links their text, no emphasis or code."""
    text = _ESCAPED.sub(lambda m: chr(_HELD + ord(m.group(1))), markdown)
    text = _IMAGE.sub("", text)
    text = _LINK.sub(lambda m: m.group(1) or m.group(2) or "", text)
    text = _CODE.sub(lambda m: m.group(1), text)
    text = _HTML_TAG.sub("", text)
    for _ in range(3):  # nested emphasis: ***a*** and **_a_**
        text = _EMPHASIS.sub(lambda m: m.group(2), text)
    text = re.sub("[\ue000-\ue07f]", lambda m: chr(ord(m.group(0)) - _HELD), text)
    return " ".join(html.unescape(text).split())


def _shorten(text: str) -> str:
    if len(text) <= DESCRIPTION_MOST:
        return text
    cut = text[: DESCRIPTION_MOST - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > DESCRIPTION_MOST // 2 else cut).rstrip(" ,;:") + "…"
