"""A forge that cannot answer now, or answers no, against each lister: the fault it is, a
message naming the source and never the token, and never part of a listing."""

from __future__ import annotations

import email.utils
import socket

import httpx
import pytest

from gitreg.process.tlscert import TlsMaterial
from gitreg.sources.forge_faults import ForgeSite, retry_after
from gitreg.sources.forge_http import forge_url
from gitreg.sources.found import SourceRefused, SourceUnavailable
from gitreg.sources.github import GitHubLister
from gitreg.sources.gitlab import GitLabLister
from tests.support.clock import Clock
from tests.support.forge_shapes import KINDS, ForgeKind, ForgeRepository
from tests.support.forges import Fault, StandInForge, lister_of
from tests.support.listeners import SilentListener
from tests.support.tls_clients import trusting

TOKEN = "s3cret-token-value-0042"
OWNER: dict[ForgeKind, str] = {
    "gitlab": "platform/terraform",
    "gitea": "infra",
    "github": "acme",
    "bitbucket": "TF",
}
NAME: dict[ForgeKind, str] = {
    "gitlab": "GitLab",
    "gitea": "Gitea",
    "github": "GitHub",
    "bitbucket": "Bitbucket",
}


def held(kind: ForgeKind, count: int = 3) -> list[ForgeRepository]:
    return [ForgeRepository(f"{OWNER[kind]}/terraform-aws-m{n}") for n in range(count)]


def names_the_source(message: str, kind: ForgeKind, forge: StandInForge) -> None:
    assert NAME[kind] in message
    assert forge.url in message
    assert OWNER[kind] in message
    assert TOKEN not in message


@pytest.mark.parametrize("kind", KINDS)
def test_a_token_the_forge_does_not_accept_is_refused(kind: ForgeKind, tls: TlsMaterial) -> None:
    with StandInForge(kind, held(kind), token="the-right-one", tls=tls) as forge:
        lister = forge.lister(OWNER[kind], token=TOKEN)
        with pytest.raises(SourceRefused) as refused:
            lister.repositories()
    message = str(refused.value)
    names_the_source(message, kind, forge)
    assert "the token is not accepted (HTTP 401)" in message
    assert lister.stats.errors == 1


@pytest.mark.parametrize("kind", KINDS)
def test_a_forge_asking_for_a_token_none_is_configured_is_refused(
    kind: ForgeKind, tls: TlsMaterial
) -> None:
    with (
        StandInForge(kind, held(kind), token="the-right-one", tls=tls) as forge,
        pytest.raises(SourceRefused, match="none is configured"),
    ):
        forge.lister(OWNER[kind], token=None).repositories()
    assert all("authorization" not in a.headers for a in forge.asked)


@pytest.mark.parametrize("kind", KINDS)
def test_an_unknown_group_is_refused(kind: ForgeKind, tls: TlsMaterial) -> None:
    with (
        StandInForge(kind, held(kind), token=TOKEN, tls=tls) as forge,
        pytest.raises(SourceRefused) as refused,
    ):
        forge.lister(f"{OWNER[kind]}x").repositories()
    what = {"gitlab": "group", "gitea": "organization", "github": "organization"}
    assert f"there is no {what.get(kind, 'project')} {OWNER[kind]}x," in str(refused.value)
    assert "(HTTP 404)" in str(refused.value)


@pytest.mark.parametrize("kind", KINDS)
def test_forbidden_without_a_rate_limit_is_refused(kind: ForgeKind, tls: TlsMaterial) -> None:
    fault = Fault(403, b'{"message": "403 Forbidden"}')
    with (
        StandInForge(kind, held(kind), token=TOKEN, tls=tls, faults=[fault]) as forge,
        pytest.raises(SourceRefused) as refused,
    ):
        forge.lister(OWNER[kind]).repositories()
    names_the_source(str(refused.value), kind, forge)
    assert "may not read it (HTTP 403)" in str(refused.value)


@pytest.mark.parametrize("kind", KINDS)
def test_too_many_requests_is_unavailable_for_as_long_as_asked(
    kind: ForgeKind, tls: TlsMaterial
) -> None:
    fault = Fault(429, b'{"message": "slow down"}', {"Retry-After": "120"})
    with StandInForge(kind, held(kind), token=TOKEN, tls=tls, faults=[fault]) as forge:
        lister = forge.lister(OWNER[kind])
        with pytest.raises(SourceUnavailable) as unavailable:
            lister.repositories()
    assert unavailable.value.retry_after == 120
    names_the_source(str(unavailable.value), kind, forge)
    assert (lister.stats.rate_limit_waits, lister.stats.errors) == (1, 0)


def test_githubs_exhausted_rate_limit_is_unavailable_until_its_reset(tls: TlsMaterial) -> None:
    clock = Clock(1_800_000_000.0)
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1800000300"}
    fault = Fault(403, b'{"message": "API rate limit exceeded"}', headers)
    with StandInForge("github", held("github"), token=TOKEN, tls=tls, faults=[fault]) as forge:
        lister = GitHubLister("acme", TOKEN, forge.url, forge.verify, clock=clock)
        with pytest.raises(SourceUnavailable) as unavailable:
            lister.repositories()
        lister.close()
    assert unavailable.value.retry_after == 300
    assert "rate-limited (HTTP 403)" in str(unavailable.value)
    assert lister.stats.rate_limit_waits == 1


def test_githubs_secondary_rate_limit_gives_a_date_to_come_back(tls: TlsMaterial) -> None:
    clock = Clock(1_800_000_000.0)
    fault = Fault(403, b"{}", {"Retry-After": email.utils.formatdate(1_800_000_090, usegmt=True)})
    with StandInForge("github", held("github"), token=TOKEN, tls=tls, faults=[fault]) as forge:
        lister = GitHubLister("acme", TOKEN, forge.url, forge.verify, clock=clock)
        with pytest.raises(SourceUnavailable) as unavailable:
            lister.repositories()
        lister.close()
    assert unavailable.value.retry_after == 90


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"Retry-After": "30"}, 30.0),
        ({"Retry-After": email.utils.formatdate(1_800_000_045, usegmt=True)}, 45.0),
        ({"Retry-After": email.utils.formatdate(1_799_999_000, usegmt=True)}, 0.0),  # past
        ({"RateLimit-Reset": "1800000060"}, 60.0),  # GitLab: an epoch time
        ({"RateLimit-Reset": "12"}, 12.0),  # the IETF draft: seconds from now
        ({"X-RateLimit-Reset": "1800000600"}, 600.0),
        ({"Retry-After": "soon"}, None),
        ({}, None),
    ],
)
def test_how_long_a_forge_asks_to_be_left_alone(
    headers: dict[str, str], seconds: float | None
) -> None:
    response = httpx.Response(429, headers=headers)
    assert retry_after(response, Clock(1_800_000_000.0)) == seconds


@pytest.mark.parametrize("status", [500, 502, 503])
@pytest.mark.parametrize("kind", KINDS)
def test_a_failing_forge_is_unavailable(kind: ForgeKind, status: int, tls: TlsMaterial) -> None:
    fault = Fault(status, b"<html>Bad Gateway</html>")
    with (
        StandInForge(kind, held(kind), token=TOKEN, tls=tls, faults=[fault]) as forge,
        pytest.raises(SourceUnavailable) as unavailable,
    ):
        forge.lister(OWNER[kind]).repositories()
    names_the_source(str(unavailable.value), kind, forge)
    assert f"(HTTP {status})" in str(unavailable.value)
    assert unavailable.value.retry_after is None


def test_a_failing_page_midway_fails_the_whole_listing(tls: TlsMaterial) -> None:
    """A bad answer must never look like fewer repositories."""
    fault = Fault(503, b"{}", {"Retry-After": "5"}, page=3)
    with StandInForge("gitea", held("gitea", 20), tls=tls, page_size=5, faults=[fault]) as forge:
        lister = forge.lister("infra")
        with pytest.raises(SourceUnavailable) as unavailable:
            lister.repositories()
    assert unavailable.value.retry_after == 5
    # The first page says there are four: the three after it are asked at once, though the
    # fourth may not have left yet when the third's fault ends the listing (a busy machine).
    assert lister.stats.errors == 1
    assert lister.stats.api_calls == len(forge.asked) in (3, 4)


@pytest.mark.parametrize("kind", KINDS)
def test_a_forge_that_is_down_is_unavailable(kind: ForgeKind) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        url = f"https://127.0.0.1:{taken.getsockname()[1]}"  # nothing listens there once closed
    lister = lister_of(kind, url, OWNER[kind], TOKEN)
    with pytest.raises(SourceUnavailable, match="cannot be reached") as unavailable:
        lister.repositories()
    lister.close()
    assert f"{NAME[kind]} {url}, " in str(unavailable.value)
    assert TOKEN not in str(unavailable.value)
    assert (lister.stats.api_calls, lister.stats.errors) == (1, 1)


def test_a_forge_that_never_answers_is_unavailable(tls: TlsMaterial) -> None:
    with SilentListener(tls) as silent:
        verify = trusting(tls.ca_cert)
        client = httpx.Client(verify=verify, timeout=httpx.Timeout(0.5, connect=5))
        lister = GitLabLister(f"https://127.0.0.1:{silent.port}", "platform", TOKEN, client=client)
        with pytest.raises(SourceUnavailable, match="no answer in time"):
            lister.repositories()
        client.close()


MALFORMED: dict[str, bytes] = {
    "an object": b'{"message": "ok"}',
    "not JSON": b"<html><body>Sign in</body></html>",
    "an item without its path": b'[{"name": "x"}]',
    "topics that are not strings": b'[{"name": "x", "topics": [1]}]',
}


@pytest.mark.parametrize("body", MALFORMED.values(), ids=MALFORMED.keys())
@pytest.mark.parametrize("kind", KINDS)
def test_a_malformed_answer_is_unavailable_not_an_empty_listing(
    kind: ForgeKind, body: bytes, tls: TlsMaterial
) -> None:
    fault = Fault(200, body)
    with StandInForge(kind, held(kind), token=TOKEN, tls=tls, faults=[fault]) as forge:
        lister = forge.lister(OWNER[kind])
        with pytest.raises(SourceUnavailable) as unavailable:
            lister.repositories()
    names_the_source(str(unavailable.value), kind, forge)
    assert lister.stats.errors == 1


def test_a_bitbucket_page_that_is_not_the_last_without_a_next_start_is_unavailable(
    tls: TlsMaterial,
) -> None:
    body = b'{"size": 0, "limit": 100, "isLastPage": false, "start": 0, "values": []}'
    with (
        StandInForge("bitbucket", held("bitbucket"), tls=tls, faults=[Fault(200, body)]) as forge,
        pytest.raises(SourceUnavailable, match="nextPageStart"),
    ):
        forge.lister("TF").repositories()


@pytest.mark.parametrize("kind", ["gitlab", "gitea", "github"])
def test_a_next_page_on_another_host_is_refused_and_never_asked(
    kind: ForgeKind, tls: TlsMaterial
) -> None:
    with SilentListener(tls) as elsewhere:
        other = f"127.0.0.1:{elsewhere.port}"
        forge = StandInForge(kind, held(kind, 6), token=TOKEN, tls=tls, page_size=2)
        with forge:
            forge.next_link = f"https://{other}/steal?page=2"
            with pytest.raises(SourceRefused) as refused:
                forge.lister(OWNER[kind]).repositories()
        assert elsewhere.accepted == 0
    names_the_source(str(refused.value), kind, forge)
    assert other in str(refused.value)
    assert len(forge.asked) == 1


def test_a_next_page_on_another_scheme_of_the_same_host_is_refused(tls: TlsMaterial) -> None:
    with StandInForge("github", held("github", 6), token=TOKEN, tls=tls, page_size=2) as forge:
        forge.next_link = forge.url.replace("https://", "http://") + "/orgs/acme/repos?page=2"
        with pytest.raises(SourceRefused, match="not followed"):
            forge.lister("acme").repositories()
    assert len(forge.asked) == 1


def test_a_redirect_to_another_host_is_refused_and_never_asked(tls: TlsMaterial) -> None:
    with SilentListener(tls) as elsewhere:
        location = {"Location": f"https://127.0.0.1:{elsewhere.port}/orgs/acme/repos"}
        fault = Fault(301, b"", location)
        with (
            StandInForge("github", held("github"), token=TOKEN, tls=tls, faults=[fault]) as forge,
            pytest.raises(SourceRefused),
        ):
            forge.lister("acme").repositories()
        assert elsewhere.accepted == 0


def test_a_redirect_on_the_forge_is_followed(tls: TlsMaterial) -> None:
    """GitHub answers a renamed organization's old name with a 301 to its new one."""
    moved = Fault(301, b"", {"Location": "/orgs/acme/repos?type=all&per_page=100"}, owner="old")
    with StandInForge("github", held("github"), token=TOKEN, tls=tls, faults=[moved]) as forge:
        lister = forge.lister("old")
        found = lister.repositories()
    assert [r.path for r in found] == [r.path for r in held("github")]
    assert lister.stats.api_calls == 2


def test_pages_that_come_back_to_one_already_read_are_unavailable(tls: TlsMaterial) -> None:
    with StandInForge("gitlab", held("gitlab", 6), tls=tls, page_size=2) as forge:
        stuck = f"{forge.url}/api/v4/groups/platform%2Fterraform/projects?per_page=2&page=2"
        forge.next_link = stuck  # page 2's next is page 2 again
        with pytest.raises(SourceUnavailable, match="come back"):
            forge.lister("platform/terraform").repositories()
    assert len(forge.asked) == 2


def test_credentials_in_a_forges_url_are_neither_sent_nor_shown(tls: TlsMaterial) -> None:
    with StandInForge("gitlab", [], tls=tls) as forge:
        url = forge.url.replace("https://", "https://someone:p4ssw0rd@")
        lister = GitLabLister(url, "platform", None, forge.verify)
        with pytest.raises(SourceRefused) as refused:
            lister.repositories()
        lister.close()
    assert "p4ssw0rd" not in str(refused.value)
    assert "authorization" not in forge.asked[0].headers


@pytest.mark.parametrize(
    "url", ["ftp://gitlab.example.com", "https://", "gitlab.example.com", "https://g/?x=1"]
)
def test_a_forge_url_that_is_not_one_is_refused(url: str) -> None:
    with pytest.raises(ValueError, match=r"URL|query"):
        forge_url(url)


def test_a_source_names_itself_kind_url_and_group() -> None:
    site = ForgeSite("GitLab", "https://gitlab.example.com", "group platform/terraform")
    assert str(site) == "GitLab https://gitlab.example.com, group platform/terraform"


def test_a_forge_whose_certificate_is_not_trusted_is_unavailable(tls: TlsMaterial) -> None:
    """The stand-in's certificate is signed by a test CA the system's store does not hold."""
    with StandInForge("gitlab", held("gitlab"), token=TOKEN, tls=tls) as forge:
        lister = GitLabLister(forge.url, "platform/terraform", TOKEN)  # the system's store
        with pytest.raises(SourceUnavailable, match="CERTIFICATE_VERIFY_FAILED"):
            lister.repositories()
        lister.close()
    assert forge.asked == []
