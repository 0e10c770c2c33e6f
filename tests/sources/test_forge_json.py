"""A forge's page decoded into the fields a lister reads, typed: every other field skipped, absent
ones absent, and what no page of that forge is (not JSON, an item that is not an object, a field
of the wrong type, a required one missing or empty, `values` that is not a list) a fault naming
where, never fewer repositories."""

from __future__ import annotations

import pytest

from gitreg.sources.forge_json import (
    BitbucketPage,
    GitHubRepository,
    GitLabProject,
    Malformed,
    NotJson,
    Shaped,
)

GITHUB = Shaped(list[GitHubRepository])
GITLAB = Shaped(list[GitLabProject])
BITBUCKET = Shaped(BitbucketPage)


def test_only_the_fields_read_are_kept() -> None:
    body = (
        b'[{"name": "a", "full_name": "o/a", "clone_url": "https://h/o/a.git", "topics": ["x"],'
        b' "owner": {"login": "o"}, "id": 1}]'
    )
    (listed,) = GITHUB.decode(body)
    assert (listed.name, listed.full_name, listed.topics) == ("a", "o/a", ("x",))
    assert (listed.ssh_url, listed.default_branch, listed.archived) == (None, None, None)
    page = BITBUCKET.decode(
        b'{"values": [{"slug": "s", "id": 3, "links": {"clone": [{"name": "http",'
        b' "href": "https://h/s.git"}], "self": []}}], "isLastPage": true, "size": 1}'
    )
    assert page.isLastPage and page.values[0].slug == "s"
    assert page.values[0].links is not None
    assert page.values[0].links.clone[0].href == "https://h/s.git"


GITLAB_PROJECT = (
    b'"path": "vpc", "path_with_namespace": "p/vpc", "http_url_to_repo": "https://h/p/vpc.git"'
)

MALFORMED: list[tuple[Shaped[object], bytes, str]] = [
    (GITHUB, b'{"message": "ok"}', "Expected `array`, got `object`"),
    (GITHUB, b"[1, 2]", r"Expected `object`, got `int` - at `\$\[0\]`"),
    (GITHUB, b'[{"name": "a"}]', "missing required field `full_name`"),
    (GITLAB, b'[{"path": "", ' + GITLAB_PROJECT[15:] + b"}]", r"at `\$\[0\].path`"),
    (GITLAB, b"[{" + GITLAB_PROJECT + b', "topics": [1]}]', r"\$\[0\].topics\[0\]"),
    (GITLAB, b"[{" + GITLAB_PROJECT + b', "archived": "no"}]', r"\$\[0\].archived"),
    (GITLAB, b"null", "Expected `array`, got `null`"),
    (BITBUCKET, b"[]", "Expected `object`, got `array`"),
    (BITBUCKET, b'{"isLastPage": true}', "missing required field `values`"),
    (BITBUCKET, b'{"values": {"slug": "s"}, "isLastPage": true}', r"\$.values"),
    (
        BITBUCKET,
        b'{"values": [{"slug": "s", "links": {"clone": {}}}], "isLastPage": true}',
        "clone",
    ),
]


@pytest.mark.parametrize(("shape", "body", "said"), MALFORMED)
def test_what_no_page_is_is_malformed_naming_where(
    shape: Shaped[object], body: bytes, said: str
) -> None:
    with pytest.raises(Malformed, match=said):
        shape.decode(body)


@pytest.mark.parametrize("body", [b"<html>Sign in</html>", b"", b'[{"name": "a"'])
def test_what_is_not_json_is_said_so(body: bytes) -> None:
    with pytest.raises(NotJson):
        GITHUB.decode(body)
