from __future__ import annotations

import pytest

from gitreg.git.location import redact
from gitreg.tags import TagTemplate, parse_version, released_version


@pytest.mark.parametrize(
    ("template", "tag", "version", "problem"),
    [
        ("v{version}", "v1.2.0", "1.2.0", None),
        ("v{version}", "1.2.0", None, None),
        ("{version}", "1.2.0", "1.2.0", None),
        ("{version}", "v1.2.0", None, None),  # the v belongs to another template
        ("{version}", "nightly", None, None),
        ("{version}", "vpc/v1.0.0", None, None),  # another module's tag in a monorepo
        ("vpc/v{version}", "vpc/v1.2.0", "1.2.0", None),
        ("vpc/v{version}", "vpc/1.2.0", None, None),
        ("vpc/v{version}", "vpc2/v1.2.0", None, None),
        ("vpc/v{version}", "vpc/v", None, None),
        ("vpc/v{version}", "vpc/vx", None, None),
        ("release-{version}-final", "release-1.0.0-final", "1.0.0", None),
        ("release-{version}-final", "release-1.0.0", None, None),
        ("v{version}", "v1.3.0+build.5", "1.3.0+build.5", None),
        ("v{version}", "v2.0.0-rc.1", "2.0.0-rc.1", None),
        ("v{version}", "v1.2", None, "'1.2' is not a Semantic Version"),
        ("v{version}", "v01.2.0", None, "'01.2.0' is not a Semantic Version"),
        ("v{version}", "v1.2.0-", None, "not a Semantic Version"),
        ("{version}", "1.0.0.0", None, "not a Semantic Version"),
    ],
)
def test_the_version_a_tag_releases(
    template: str, tag: str, version: str | None, problem: str | None
) -> None:
    parsed = TagTemplate.parse(template)
    found = parsed.version_of(tag)
    assert (str(found) if found is not None else None) == version
    reason = parsed.problem(tag)
    assert reason is None if problem is None else reason is not None and problem in reason


@pytest.mark.parametrize(
    ("templates", "tag", "version"),
    [
        (("v{version}", "{version}"), "v1.0.0", "1.0.0"),
        (("v{version}", "{version}"), "1.0.0", "1.0.0"),
        (("v{version}", "{version}"), "v1.0", None),
        (("{version}", "{version}-lts"), "1.0.0-lts", "1.0.0-lts"),  # the first template wins
        (("{version}-lts", "{version}"), "1.0.0-lts", "1.0.0"),
        ((), "1.0.0", None),
    ],
)
def test_the_first_fitting_template_says_the_version(
    templates: tuple[str, ...], tag: str, version: str | None
) -> None:
    found = released_version([TagTemplate.parse(t) for t in templates], tag)
    assert (str(found) if found is not None else None) == version


@pytest.mark.parametrize(
    ("template", "tag", "slip"),
    [
        ("v{version}", "V1.2.0", True),
        ("vpc/v{version}", "VPC/V1.2.0", True),
        ("{version}-lts", "1.2.0-LTS", True),
        ("v{version}", "v1.2.0", False),  # it fits: no slip
        ("v{version}", "V1.2", False),  # no Semantic Version in any case
        ("v{version}", "W1.2.0", False),
        ("{version}", "nightly", False),
    ],
)
def test_a_tag_that_fits_but_for_letter_case(template: str, tag: str, slip: bool) -> None:
    assert TagTemplate.parse(template).fits_but_for_case(tag) is slip


@pytest.mark.parametrize(
    ("template", "reason"),
    [
        ("v1.0", "exactly once"),
        ("{version}-{version}", "exactly once"),
        ("v{version}{x}", "braces"),
        ("my tag/{version}", "cannot contain"),
        ("a..b/{version}", "cannot contain"),
        ("x~{version}", "cannot contain"),
        ("/v{version}", "cannot form"),
        ("{version}.lock", "cannot form"),
    ],
)
def test_bad_templates_are_refused(template: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        TagTemplate.parse(template)


def test_template_round_trip() -> None:
    template = TagTemplate.parse("vpc/v{version}")
    assert str(template) == "vpc/v{version}"
    assert template.tag_for("1.2.0") == "vpc/v1.2.0"


@pytest.mark.parametrize(
    "text",
    [
        "1.2.0",
        "0.0.1",
        "1.2.0-rc.1",
        "1.2.0-alpha.beta.1",
        "1.3.0+build.5",
        "2.0.0-rc.1+exp.sha.5114f85",
    ],
)
def test_valid_versions(text: str) -> None:
    assert str(parse_version(text)) == text


@pytest.mark.parametrize(
    "text", ["1.2", "1", "v1.2.0", "01.2.0", "1.2.0-", "1.2.0+", "1.2.0-01", "latest", ""]
)
def test_invalid_versions(text: str) -> None:
    with pytest.raises(ValueError, match="not a Semantic Version"):
        parse_version(text)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            "fatal: https://user:tok3n@git.example.com/x.git",
            "fatal: https://***@git.example.com/x.git",
        ),
        ("ssh://git@git.example.com/x.git", "ssh://git@git.example.com/x.git"),
        ("ssh://git:tok3n@git.example.com/x.git", "ssh://git:***@git.example.com/x.git"),
        ("https://:tok3n@h/x and https://a:b@h/y", "https://***@h/x and https://***@h/y"),
        # A token given as the user name, as GitHub and GitLab take it.
        ("fetch from HTTPS://glpat-s3cr3t@h/x failed", "fetch from HTTPS://***@h/x failed"),
        ("http://ghp_abc@h/x", "http://***@h/x"),
    ],
)
def test_redact_hides_passwords_and_http_users(text: str, shown: str) -> None:
    assert redact(text) == shown
