"""A repository's `.gitreg.yaml` `providers:`: entries shaped like registry.yaml's without a
release location (the repository's own releases are theirs), refused in the same words."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitreg.catalog.declaration import EntryDefaults, read_declaration
from gitreg.catalog.specs import ForgeReleases
from gitreg.errors import ConfigError
from gitreg.git.location import RepoLocation

RELEASES = ForgeReleases("gitlab", "https://gitlab.example.com", "platform/tools")


def declared(releases: ForgeReleases | None = RELEASES) -> EntryDefaults:
    return EntryDefaults(
        RepoLocation.parse("https://gitlab.example.com/platform/tools.git", Path("/")),
        "acme",
        lambda namespace: namespace.startswith("team-"),
        (),
        releases=releases,
        no_releases="a folder source has no releases API",
        cache_dir=Path("/var/cache/gitreg"),
    )


def test_entries_take_the_repository_s_releases_and_the_source_s_namespace() -> None:
    text = b"providers:\n  - {type: widget}\n  - {type: gadget, namespace: team-x, tags: 'g{version}'}\n"
    declaration = read_declaration(text, "platform/tools", declared())
    assert declaration.modules == ()
    widget, gadget = declaration.providers
    assert (str(widget), widget.releases) == ("acme/widget", RELEASES)
    assert widget.artifacts == Path("/var/cache/gitreg/provider-releases/acme/widget")
    assert str(gadget) == "team-x/gadget" and [str(t) for t in gadget.tags] == ["g{version}"]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("providers:\n  - {namespace: acme}\n", "providers[0].type (line 2): is required"),
        ("providers:\n  - {type: Wid_get}\n", "provider type 'Wid_get' may not contain '_'"),
        (
            "providers:\n  - {type: widget, artifacts: dist}\n",
            "providers[0].artifacts (line 2): unknown key",
        ),
        (
            "providers:\n  - {type: widget, releases: {}}\n",
            "providers[0].releases (line 2): unknown key",
        ),
        ("providers:\n  - {type: widget, namespace: other}\n", "allow_namespaces"),
        (
            "providers:\n  - {type: widget}\n  - {type: widget}\n",
            "is already listed at providers[0]",
        ),
    ],
)
def test_refused_entries_name_the_file_and_the_key(text: str, reason: str) -> None:
    with pytest.raises(ConfigError) as refused:
        read_declaration(text.encode(), "platform/tools", declared())
    assert "platform/tools/.gitreg.yaml" in str(refused.value)
    assert reason in str(refused.value)


def test_a_source_without_releases_says_its_providers_are_not_read() -> None:
    text = b"modules:\n  - {name: vpc, system: aws}\nproviders: [{type: widget}]\n"
    declaration = read_declaration(text, "tools", declared(None))
    assert declaration.providers == ()
    assert declaration.ignored == ("providers: not read: a folder source has no releases API",)
