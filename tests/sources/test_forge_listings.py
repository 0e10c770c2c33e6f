"""Each forge's lister against a stand-in of that forge on 127.0.0.1 over TLS: what it finds,
every page followed, GitLab's subgroups, the token sent as the forge asks and nowhere else."""

from __future__ import annotations

import pytest

from gitreg.process.tlscert import TlsMaterial
from gitreg.sources.forge_pages import AT_ONCE, AT_ONCE_UNCOUNTED
from gitreg.sources.found import FoundRepository
from tests.support.forge_shapes import KINDS, ForgeKind, ForgeRepository
from tests.support.forges import Fault, StandInForge

TOKEN = "glpat-s3cret-token-value"
OWNER: dict[ForgeKind, str] = {
    "gitlab": "platform",
    "gitea": "infra",
    "github": "acme",
    "bitbucket": "TF",
}


def expected(kind: ForgeKind, forge: StandInForge, repository: ForgeRepository) -> FoundRepository:
    """What the lister must make of a repository the forge holds."""
    return FoundRepository(
        name=repository.name,
        path=repository.path,
        clone_https=f"{forge.url}/{repository.path}.git",
        clone_ssh=f"ssh://git@127.0.0.1:2222/{repository.path}.git",
        default_branch="" if kind == "bitbucket" else repository.default_branch,
        topics=() if kind == "bitbucket" else repository.topics,
        archived=repository.archived,
    )


def several(owner: str, count: int) -> list[ForgeRepository]:
    return [ForgeRepository(f"{owner}/terraform-aws-m{n:05}") for n in range(count)]


def beyond(kind: ForgeKind) -> int:
    """Pages a listing may ask past its last: Bitbucket's pages say no count, so the next are
    asked a step on while one is read, and one past the last may be (an empty page)."""
    return AT_ONCE_UNCOUNTED - 1 if kind == "bitbucket" else 0


@pytest.mark.parametrize("kind", KINDS)
def test_a_forge_lists_its_repositories_with_topics_and_archived(
    kind: ForgeKind, tls: TlsMaterial
) -> None:
    owner = OWNER[kind]
    held = [
        ForgeRepository(f"{owner}/terraform-aws-vpc", topics=("terraform", "network")),
        ForgeRepository(f"{owner}/terraform-aws-old", archived=True, default_branch="master"),
        ForgeRepository(f"{owner}/tools", default_branch="trunk"),
    ]
    elsewhere = ForgeRepository("other/terraform-aws-vpc")
    with StandInForge(kind, [*held, elsewhere], token=TOKEN, tls=tls) as forge:
        lister = forge.lister(owner)
        found = lister.repositories()
    assert list(found) == [expected(kind, forge, r) for r in held]
    assert lister.stats.api_calls == 1
    assert lister.stats.errors == 0


@pytest.mark.parametrize("kind", KINDS)
def test_the_token_goes_in_the_forges_header_never_in_a_url(
    kind: ForgeKind, tls: TlsMaterial
) -> None:
    with StandInForge(kind, several(OWNER[kind], 5), token=TOKEN, tls=tls, page_size=2) as forge:
        forge.lister(OWNER[kind]).repositories()
    header = {
        "gitlab": ("private-token", TOKEN),
        "gitea": ("authorization", f"token {TOKEN}"),
        "github": ("authorization", f"Bearer {TOKEN}"),
        "bitbucket": ("authorization", f"Bearer {TOKEN}"),
    }[kind]
    assert 3 <= len(forge.asked) <= 3 + beyond(kind)
    for asked in forge.asked:
        assert asked.headers.get(header[0]) == header[1]
        assert TOKEN not in asked.target
    if kind == "github":
        assert forge.asked[0].headers["accept"] == "application/vnd.github+json"
        assert forge.asked[0].headers["x-github-api-version"] == "2022-11-28"


@pytest.mark.parametrize("kind", KINDS)
def test_every_page_is_followed_in_order(kind: ForgeKind, tls: TlsMaterial) -> None:
    held = several(OWNER[kind], 30)
    with StandInForge(kind, held, token=TOKEN, tls=tls, page_size=7) as forge:
        lister = forge.lister(OWNER[kind])
        found = lister.repositories()
    assert [r.path for r in found] == [r.path for r in held]
    assert lister.stats.api_calls == len(forge.asked)
    assert 5 <= len(forge.asked) <= 5 + beyond(kind)  # 7, 7, 7, 7, 2


@pytest.mark.parametrize("kind", ["gitlab", "gitea", "bitbucket"])
def test_ten_thousand_repositories_are_listed(kind: ForgeKind, tls: TlsMaterial) -> None:
    held = several(OWNER[kind], 10_000)
    with StandInForge(kind, held, token=TOKEN, tls=tls) as forge:
        lister = forge.lister(OWNER[kind])
        found = lister.repositories()
    assert len(found) == 10_000
    assert [r.path for r in found] == [r.path for r in held]
    pages = {"gitlab": 100, "gitea": 200, "bitbucket": 10}[kind]  # 50 a page, 1,000 a page
    assert pages <= lister.stats.api_calls <= pages + beyond(kind)
    # Kept-alive connections, one for each page asked at once (the first page says how many).
    assert forge.connections <= AT_ONCE


@pytest.mark.parametrize("count", [30, 28, 0])
def test_gitea_without_a_link_header_pages_by_number_under_a_lower_cap(
    count: int, tls: TlsMaterial
) -> None:
    """A Gitea whose MAX_RESPONSE_ITEMS is below the 50 asked, behind a proxy that drops Link:
    a page of 7 is not the last; a shorter one, or an empty one, is."""
    held = several("infra", count)
    forge = StandInForge("gitea", held, tls=tls, page_size=7, link_header=False, groups=["infra"])
    with forge:
        found = forge.lister("infra").repositories()
    assert [r.path for r in found] == [r.path for r in held]
    assert len(forge.asked) == count // 7 + 1


def test_gitlab_without_a_link_header_follows_x_next_page(tls: TlsMaterial) -> None:
    held = several("platform", 25)
    with StandInForge("gitlab", held, tls=tls, page_size=10, link_header=False) as forge:
        found = forge.lister("platform").repositories()
    assert [r.path for r in found] == [r.path for r in held]
    # Its X-Next-Page names page 2: the next pages are asked a page number ahead, and one past
    # the last may be (an empty page).
    asked = [a.target.split("page=")[-1] for a in forge.asked[1:]]
    assert sorted(asked) in (["2", "3"], ["2", "3", "4"])


def test_gitlab_past_ten_thousand_projects_asks_its_pages_a_number_ahead(
    tls: TlsMaterial,
) -> None:
    """Past 10,000 projects GitLab's first page has no rel="last" and no totals: its pages are
    still asked ahead, a page number on from the one its Link rel=next names."""
    held = several("platform", 30)
    with StandInForge("gitlab", held, tls=tls, page_size=7) as forge:
        forge.counted_up_to = 20
        lister = forge.lister("platform")
        found = lister.repositories()
    assert [r.path for r in found] == [r.path for r in held]
    asked = sorted(int(a.target.split("&page=")[-1]) for a in forge.asked)
    assert asked in ([1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 6])  # 7, 7, 7, 7, 2; perhaps one empty


def test_gitlab_lists_subgroups_under_the_group_and_not_its_neighbours(
    tls: TlsMaterial,
) -> None:
    held = [
        ForgeRepository("platform/terraform-aws-vpc"),
        ForgeRepository("platform/net/terraform-aws-dns"),
        ForgeRepository("platform/net/deep/terraform-aws-peering"),
        ForgeRepository("platformer/terraform-aws-not-ours"),
        ForgeRepository("other/platform/terraform-aws-not-ours"),
    ]
    with StandInForge("gitlab", held, token=TOKEN, tls=tls) as forge:
        whole = forge.lister("platform").repositories()
        subgroup = forge.lister("platform/net").repositories()
    assert [r.path for r in whole] == [r.path for r in held[:3]]
    assert [r.name for r in whole] == [
        "terraform-aws-vpc",
        "terraform-aws-dns",
        "terraform-aws-peering",
    ]
    assert [r.path for r in subgroup] == [r.path for r in held[1:3]]
    # The group's path is its id, its slash encoded, as GitLab's API asks.
    assert forge.asked[-1].target.startswith("/api/v4/groups/platform%2Fnet/projects?")
    assert "with_shared=false" in forge.asked[-1].target


def test_an_empty_group_lists_nothing_and_says_so_by_an_empty_list(tls: TlsMaterial) -> None:
    with StandInForge("gitlab", [], tls=tls, groups=["platform"]) as forge:
        assert forge.lister("platform").repositories() == []


def test_a_repository_listed_again_on_a_later_page_is_kept_once(tls: TlsMaterial) -> None:
    """Offset paging while a repository is added before the cursor lists one twice."""
    held = several("acme", 6)
    with StandInForge("github", [*held[:3], held[2], *held[3:]], tls=tls, page_size=3) as forge:
        found = forge.lister("acme").repositories()
    assert [r.path for r in found] == [r.path for r in held]


def test_topics_from_an_older_gitlabs_tag_list(tls: TlsMaterial) -> None:
    old = b'[{"path": "vpc", "path_with_namespace": "platform/vpc", "http_url_to_repo": '
    old += b'"https://g/platform/vpc.git", "ssh_url_to_repo": null, "default_branch": null, '
    old += b'"tag_list": ["terraform"]}]'

    with StandInForge("gitlab", [], tls=tls, faults=[Fault(200, old)]) as forge:
        (found,) = forge.lister("platform").repositories()
    assert found == FoundRepository(
        "vpc", "platform/vpc", "https://g/platform/vpc.git", "", "", ("terraform",)
    )


@pytest.mark.parametrize(
    ("kind", "prefix"), [("github", "/api/v3"), ("gitlab", "/gitlab"), ("bitbucket", "/bitbucket")]
)
def test_a_forge_served_under_a_path(kind: ForgeKind, prefix: str, tls: TlsMaterial) -> None:
    """GitHub Enterprise Server's API is at /api/v3; GitLab or Bitbucket may be under a path."""
    held = several(OWNER[kind], 5)
    with StandInForge(kind, held, token=TOKEN, tls=tls, page_size=2, prefix=prefix) as forge:
        found = forge.lister(OWNER[kind]).repositories()
    assert [r.path for r in found] == [r.path for r in held]
    assert all(asked.target.startswith(f"{prefix}/") for asked in forge.asked)


def test_a_listing_sees_what_the_forge_holds_now(tls: TlsMaterial) -> None:
    """Each listing asks again: a repository added, archived or removed meanwhile shows."""
    vpc, dns = (
        ForgeRepository("infra/terraform-aws-vpc"),
        ForgeRepository("infra/terraform-aws-dns"),
    )
    with StandInForge("gitea", [vpc], token=TOKEN, tls=tls) as forge:
        lister = forge.lister("infra")
        first = lister.repositories()
        forge.repositories = [ForgeRepository(vpc.path, archived=True), dns]
        second = lister.repositories()
        forge.repositories = [dns]
        third = lister.repositories()
    assert [(r.path, r.archived) for r in first] == [(vpc.path, False)]
    assert [(r.path, r.archived) for r in second] == [(vpc.path, True), (dns.path, False)]
    assert [r.path for r in third] == [dns.path]
    assert lister.stats.api_calls == 3
