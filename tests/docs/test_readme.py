"""A README's description: its first paragraph of prose, as plain text."""

from __future__ import annotations

import pytest

from gitreg.docs.readme import DESCRIPTION_MOST, description, plain

BADGES = (
    "[![CI](https://ci.example/badge.svg)](https://ci.example) "
    "[![License](https://img.example/l.svg)](LICENSE)\n"
)


@pytest.mark.parametrize(
    ("readme", "expected"),
    [
        ("", ""),
        ("# Only a heading\n", ""),
        ("Plain first line.\nSecond line.\n\nNext paragraph.", "Plain first line. Second line."),
        (f"# AWS VPC\n\n{BADGES}\nCreates a **VPC** on [AWS](https://aws.example).\n", None),
        ("Title\n=====\n\nA _setext_ title first.\n", "A setext title first."),
        ("<!-- BEGIN_TF_DOCS -->\n<h1>x</h1>\n\nAfter HTML.\n", "After HTML."),
        ('<p align="center"><img src="logo.png"></p>\n\nAfter a logo.', "After a logo."),
        ("## Usage\n```hcl\nmodule {}\n```\n\nAfter code.", "After code."),
        ("- a list\n- first\n\nProse after it.", "Prose after it."),
        ("| a | b |\n|---|---|\n\nAfter a table.", "After a table."),
        (
            "Uses `count` and ~~old~~ *new* &amp; \\*escaped\\*.",
            "Uses count and old new & *escaped*.",
        ),
        ("Line one\n## Heading right after\nnot this", "Line one"),
        ("First\r\nparagraph\r\n\r\nsecond", "First paragraph"),
        ("![diagram](d.png) A picture, then words.", "A picture, then words."),
    ],
)
def test_description(readme: str, expected: str | None) -> None:
    wanted = "Creates a VPC on AWS." if expected is None else expected
    assert description(readme) == wanted


def test_a_long_paragraph_is_cut_at_a_word() -> None:
    text = description("word " * 200)
    assert len(text) <= DESCRIPTION_MOST
    assert text.endswith("word…")


def test_plain_keeps_link_text_and_drops_images() -> None:
    assert plain("[docs][ref] and ![alt][img] <b>bold</b>") == "docs and bold"
