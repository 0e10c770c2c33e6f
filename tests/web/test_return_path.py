"""Where sign-in sends a person back to: a path of this registry as it was, anything a browser
could read as another site's address (or that it would rewrite into one) `/`."""

from __future__ import annotations

import pytest

from gitreg.web.return_path import MAX_LENGTH, return_path, sign_in_url


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/modules/secret/db/aws",
        "/modules/secret/db/aws/1.2.0",
        "/providers/open/widget",
        "/?q=vpc&page=2",
        "/?namespace=team-a",
        "/modules/a/b/c#inputs",
        "/%2F%2Fevil.example",  # encoded slashes stay a path here: a browser never decodes them
    ],
)
def test_a_path_of_this_registry_is_kept(path: str) -> None:
    assert return_path(path) == path


@pytest.mark.parametrize(
    "hostile",
    [
        None,
        "",
        "//evil.example",
        "///evil.example",
        "//evil.example/modules/a/b/c",
        "/\\evil.example",
        "\\\\evil.example",
        "/\\/evil.example",
        "https://evil.example/",
        "http:/evil.example",
        "javascript:alert(1)",
        "JavaScript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "evil.example",
        "modules/a/b/c",
        " /modules/a/b/c",
        "/\t/evil.example",  # browsers drop tabs and newlines: `//evil.example`
        "/\n/evil.example",
        "/\r\n/evil.example",
        "/modules\x00/a",
        "/modules/a b",
        "/modules/\u00e9",
        "/\u2215\u2215evil.example",  # division slashes, which some parsers fold into `/`
        "/modules/a//b",
        "/?next=//evil.example",
        "/signin",
        "/signin?next=/modules/a/b/c",
        "/signout",
        "/" + "a" * MAX_LENGTH,
    ],
)
def test_anything_else_is_home(hostile: str | None) -> None:
    assert return_path(hostile) == "/"


@pytest.mark.parametrize(
    ("back_to", "url"),
    [
        ("/", "/signin"),
        ("/modules/secret/db/aws", "/signin?next=%2Fmodules%2Fsecret%2Fdb%2Faws"),
        ("/?q=a b", "/signin"),
        ("/?q=vpc&page=2", "/signin?next=%2F%3Fq%3Dvpc%26page%3D2"),
        ("//evil.example", "/signin"),
    ],
)
def test_the_sign_in_link_comes_back(back_to: str, url: str) -> None:
    assert sign_in_url(back_to) == url
