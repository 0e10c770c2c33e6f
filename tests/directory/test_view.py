"""The directory view: what a reader may read, newest versions, descriptions, namespaces, web URLs."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitreg.directory.repository_url import web_url
from gitreg.directory.view import DirectoryView, directory_view
from gitreg.git.location import RepoLocation
from gitreg.modules.index import ModuleEntry
from gitreg.modules.resolve import Release
from tests.directory.conftest import Served


def no_description(entry: ModuleEntry, release: Release) -> str:
    return ""


def everything(served: Served) -> DirectoryView:
    snapshot = served.sync.snapshot
    return directory_view(snapshot, served.providers, lambda ns: True, no_description)


def test_every_served_module_and_provider_with_its_newest_version(served: Served) -> None:
    view = everything(served)
    assert [(m.address, m.version) for m in view.modules] == [
        ("apps/web-vpc/azurerm", "3.2.1"),
        ("infra/dns/aws", "1.0.0-beta.1"),  # only prereleases: the newest of them
        ("infra/naming/generic", "0.3.0"),
        ("Infra/vpc/aws", "1.1.0"),  # the 2.0.0-rc.1 is newer, but a prerelease
    ]
    vpc = view.modules[-1]
    assert vpc.versions == ("2.0.0-rc.1", "1.1.0", "1.0.0")
    assert vpc.release.tag == "vpc/v1.1.0" and len(vpc.release.commit) == 40
    # apps/pending has no tag yet: nothing to fetch, so not listed
    assert [(p.address, p.version) for p in view.providers] == [("acme/widget", "1.2.0")]


def test_grouped_by_namespace_whatever_its_case(served: Served) -> None:
    groups = everything(served).namespaces()
    assert [(g.namespace, len(g.modules), len(g.providers)) for g in groups] == [
        ("acme", 0, 1),
        ("apps", 1, 0),
        ("infra", 3, 0),  # `Infra` and `infra` are one namespace, as the registry looks it up
    ]


def test_only_what_the_reader_may_read(served: Served) -> None:
    asked: list[str] = []

    def may_read(namespace: str) -> bool:
        asked.append(namespace)
        return namespace.lower() == "infra"

    view = directory_view(served.sync.snapshot, served.providers, may_read, no_description)
    assert {m.namespace.lower() for m in view.modules} == {"infra"}
    assert view.providers == ()
    assert len(asked) == len({a.lower() for a in asked})  # once per namespace


def test_opened_beyond_the_namespaces(served: Served) -> None:
    def opened(spec: object) -> bool:
        return getattr(spec, "path", None) == "modules/vpc"

    view = directory_view(
        served.sync.snapshot, served.providers, lambda ns: False, no_description, opened
    )
    assert [m.address for m in view.modules] == ["Infra/vpc/aws"]


def test_descriptions_are_asked_for_the_newest_version(served: Served) -> None:
    def describe(entry: ModuleEntry, release: Release) -> str:
        return f"{entry.spec.address.name} at {release.version}"

    view = directory_view(served.sync.snapshot, served.providers, lambda ns: True, describe)
    assert view.modules[-1].description == "vpc at 1.1.0"


def test_built_once_per_snapshot(served: Served) -> None:
    first, second = everything(served), everything(served)
    assert all(a.entry is b.entry for a, b in zip(first.modules, second.modules, strict=True))
    assert first.module("INFRA", "VPC", "aws") is not None
    assert first.module("infra", "vpc", "azurerm") is None


@pytest.mark.parametrize(
    ("url", "web"),
    [
        ("https://github.com/acme/infra.git", "https://github.com/acme/infra"),
        ("https://github.com/acme/infra", "https://github.com/acme/infra"),
        (
            "https://ci@gitlab.example.com/group/sub/infra.git/",
            "https://gitlab.example.com/group/sub/infra",
        ),
        ("http://git.local:8080/infra", "http://git.local:8080/infra"),
        ("ssh://git@github.com/acme/infra.git", "https://github.com/acme/infra"),
        ("ssh://git@github.com:22/acme/infra.git", "https://github.com/acme/infra"),
        ("ssh://git@git.example.com:2222/acme/infra.git", None),
        ("git@github.com:acme/infra.git", "https://github.com/acme/infra"),
        ("git://git.example.com/infra.git", None),
        ("https://github.com/", None),
        ("https://github.com/acme/in fra", None),
    ],
)
def test_web_urls(url: str, web: str | None) -> None:
    transport = url.split("://")[0] if "://" in url else "ssh"
    assert web_url(RepoLocation(url, transport)) == web  # type: ignore[arg-type]


def test_a_local_repository_has_no_web_url(tmp_path: Path) -> None:
    assert web_url(RepoLocation.parse(str(tmp_path), tmp_path)) is None


def test_a_description_is_asked_for_until_known_then_kept(served: Served) -> None:
    asked: list[str] = []
    built: set[str] = set()

    def describe(entry: ModuleEntry, release: Release) -> str | None:
        name = entry.spec.address.name
        asked.append(name)
        if name not in built:
            return None  # its docs are not built yet
        return "" if name == "dns" else f"about {name}"

    def view() -> DirectoryView:
        snapshot = served.sync.snapshot
        return directory_view(snapshot, served.providers, lambda ns: True, describe)

    assert [m.description for m in view().modules] == ["", "", "", ""]
    built.update({"vpc", "dns"})
    assert [m.description for m in view().modules] == ["", "", "", "about vpc"]
    asked.clear()
    whole = view()
    assert asked == []  # described when read, not when listed
    assert len(whole.modules) == 4
    assert sorted(asked) == ["naming", "web-vpc"]  # vpc's and dns's (none) are kept
