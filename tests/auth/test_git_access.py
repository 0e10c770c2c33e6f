"""auth.git against a real Git server: `git http-backend` over HTTPS on 127.0.0.1 that checks
Basic credentials, asked by GitAccess alone and through the gate."""

from __future__ import annotations

import asyncio
import base64
import logging
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitreg.auth.gate import Gate, GitQuestion, Target
from gitreg.auth.git_access import GitAccess, check_url
from gitreg.auth.principal import GIT
from gitreg.catalog.auth_settings import AuthSettings, GitCheck
from gitreg.errors import AuthUnavailable, Forbidden, TooManyRequests, Unauthorized
from gitreg.git.credential import Credential
from gitreg.git.location import RepoLocation
from gitreg.process.tlscert import TlsMaterial
from tests.conftest import require
from tests.support.clock import Clock
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import GitHttpTap, bare_clone, git_http_server

TOKEN = "glpat-right-token-4b1d-0123456789"
WRONG = "glpat-wrong-token-77aa-0123456789"
REFS = "GET /infra/vpc.git/info/refs?service=git-upload-pack"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The server-side root holding one bare repository, infra/vpc.git."""
    require("git")
    work = GitRepo(tmp_path / "work")
    work.release("v1.0.0", module_files("vpc-1.0.0"))
    served = tmp_path / "server"
    bare_clone(work.path, served / "infra" / "vpc.git")
    return served


@pytest.fixture
def tap() -> GitHttpTap:
    return GitHttpTap()


@pytest.fixture
def server(root: Path, tls: TlsMaterial, tap: GitHttpTap) -> Iterator[str]:
    """The repository's URL on a Git server that wants oauth2:TOKEN."""
    with git_http_server(root, token=TOKEN, tls=tls, username="oauth2", tap=tap) as base:
        yield f"{base}/infra/vpc.git"


def _access(tls: TlsMaterial, clock: Clock | None = None, **settings: object) -> GitAccess:
    check = GitCheck(ca_file=tls.ca_cert, **settings)  # type: ignore[arg-type]
    return GitAccess(check, clock=clock or Clock())


def test_the_right_token_may_read_and_a_wrong_one_may_not(
    server: str, tls: TlsMaterial, tap: GitHttpTap
) -> None:
    access = _access(tls)

    async def ask() -> list[bool]:
        return [await access(TOKEN, server), await access(WRONG, server)]

    assert asyncio.run(ask()) == [True, False]
    assert tap.requests == [REFS, REFS]


def test_yes_and_no_are_kept_for_the_cache_time(
    server: str, tls: TlsMaterial, tap: GitHttpTap
) -> None:
    clock = Clock()
    access = _access(tls, clock, cache=60.0)

    async def ask() -> list[bool]:
        return [await access(TOKEN, server), await access(WRONG, server)]

    assert asyncio.run(ask()) == [True, False]
    clock.now += 59
    assert asyncio.run(ask()) == [True, False]
    assert len(tap.requests) == 2  # both answers came from the cache
    clock.now += 2
    assert asyncio.run(ask()) == [True, False]
    assert len(tap.requests) == 4  # expired: both asked again


def test_concurrent_checks_of_one_token_share_one_request(
    server: str, tls: TlsMaterial, tap: GitHttpTap
) -> None:
    access = _access(tls)

    async def ask() -> list[bool]:
        return list(await asyncio.gather(*(access(TOKEN, server) for _ in range(20))))

    assert asyncio.run(ask()) == [True] * 20
    assert tap.requests == [REFS]


def test_the_cache_is_bounded_oldest_first(server: str, tls: TlsMaterial, tap: GitHttpTap) -> None:
    access = GitAccess(GitCheck(ca_file=tls.ca_cert), clock=Clock(), max_entries=2)

    async def ask(*tokens: str) -> list[bool]:
        return [await access(t, server) for t in tokens]

    assert asyncio.run(ask(TOKEN, "other-1", "other-2")) == [True, False, False]
    assert asyncio.run(ask("other-2", "other-1")) == [False, False]
    assert len(tap.requests) == 3  # the two newest are still kept
    assert asyncio.run(ask(TOKEN)) == [True]
    assert len(tap.requests) == 4  # the oldest was evicted: asked again


def test_a_server_that_stops_is_unavailable_never_yes(
    root: Path, tls: TlsMaterial, tap: GitHttpTap
) -> None:
    clock = Clock()
    access = _access(tls, clock, cache=60.0)
    with git_http_server(root, token=TOKEN, tls=tls, tap=tap) as base:
        url = f"{base}/infra/vpc.git"
        assert asyncio.run(access(TOKEN, url)) is True
    # Stopped: an answer still within its lifetime holds; nothing else can be told.
    assert asyncio.run(access(TOKEN, url)) is True
    for token in (WRONG, "never-seen"):
        with pytest.raises(AuthUnavailable):
            asyncio.run(access(token, url))
    clock.now += 61
    with pytest.raises(AuthUnavailable):
        asyncio.run(access(TOKEN, url))
    with pytest.raises(AuthUnavailable):  # the failure was not kept as an answer either
        asyncio.run(access(TOKEN, url))


@pytest.mark.parametrize("status", [500, 502, 503, 429, 408])
def test_a_failing_server_is_unavailable_and_not_kept(
    server: str, tls: TlsMaterial, tap: GitHttpTap, status: int
) -> None:
    access = _access(tls)
    tap.faults.append(status)
    with pytest.raises(AuthUnavailable):
        asyncio.run(access(TOKEN, server))
    assert asyncio.run(access(TOKEN, server)) is True  # asked again once it answers
    assert len(tap.requests) == 2


@pytest.mark.parametrize("status", [401, 403, 404, 410])
def test_a_refusal_is_a_no(server: str, tls: TlsMaterial, tap: GitHttpTap, status: int) -> None:
    tap.faults.append(status)
    assert asyncio.run(_access(tls)(TOKEN, server)) is False


def test_a_login_page_is_not_a_yes(root: Path, tls: TlsMaterial, tap: GitHttpTap) -> None:
    access = _access(tls)
    with git_http_server(root, token=TOKEN, tls=tls, tap=tap, login_page=True) as base:
        url = f"{base}/infra/vpc.git"
        assert asyncio.run(access(WRONG, url)) is False  # 200, text/html
        assert asyncio.run(access(TOKEN, url)) is True
    assert len(tap.requests) == 2


def test_the_username_is_the_one_configured(server: str, tls: TlsMaterial) -> None:
    assert asyncio.run(_access(tls, username="x-token-auth")(TOKEN, server)) is False
    assert asyncio.run(_access(tls, username="oauth2")(TOKEN, server)) is True


def test_http_is_never_asked(
    root: Path, tap: GitHttpTap, tls: TlsMaterial, caplog: pytest.LogCaptureFixture
) -> None:
    access = _access(tls)
    with (
        caplog.at_level(logging.WARNING, "gitreg.auth.git_access"),
        git_http_server(root, token=TOKEN, tap=tap) as base,
    ):
        url = f"{base}/infra/vpc.git"
        assert asyncio.run(access(TOKEN, url)) is False
        assert asyncio.run(access(TOKEN, url)) is False
    assert tap.requests == []  # the token was never sent in clear
    said = [r.getMessage() for r in caplog.records if url in r.getMessage()]
    assert len(said) == 1 and "not an https URL" in said[0]


def test_the_certificate_is_checked(server: str, tls: TlsMaterial, tap: GitHttpTap) -> None:
    # Not trusted (the system store does not know the test CA): unavailable, not a yes.
    with pytest.raises(AuthUnavailable):
        asyncio.run(GitAccess(GitCheck())(TOKEN, server))
    # The CA of the catalog's credential for that server is trusted when auth.git has none.
    credential = Credential(url=server.rsplit("/", 2)[0] + "/", ca_file=tls.ca_cert)
    access = GitAccess(
        GitCheck(), lambda url: credential if url.startswith(credential.url) else None
    )
    assert asyncio.run(access(TOKEN, server)) is True


def test_the_token_is_in_no_log_line_nor_exception(
    root: Path, tls: TlsMaterial, tap: GitHttpTap, caplog: pytest.LogCaptureFixture
) -> None:
    secrets = [TOKEN, base64.b64encode(f"oauth2:{TOKEN}".encode()).decode()]
    access = _access(tls)
    raised: list[BaseException] = []
    with caplog.at_level(logging.DEBUG):  # every logger: httpx's and httpcore's too
        with git_http_server(root, token=TOKEN, tls=tls, tap=tap, login_page=True) as base:
            url = f"{base}/infra/vpc.git"
            assert asyncio.run(access(TOKEN, url)) is True
            tap.faults += [503, 429]
            for token in (f"{TOKEN}x", TOKEN):
                with pytest.raises(AuthUnavailable) as caught:
                    asyncio.run(access(token, f"{base}/infra/other.git"))
                raised.append(caught.value)
        with pytest.raises(AuthUnavailable) as caught:  # stopped
            asyncio.run(access(f"{TOKEN}y", url))
        raised.append(caught.value)
    texts = [caplog.text, *(str(e) for e in raised), *(repr(e) for e in raised)]
    assert caplog.records and all(s not in t for s in secrets for t in texts)
    # Nothing chained either: httpx's exception holds the request, and so the token.
    assert all(
        e.__cause__ is None and (e.__context__ is None or e.__suppress_context__) for e in raised
    )


@pytest.mark.parametrize(
    ("check", "repo", "git_url", "expected"),
    [
        (
            "repo",
            "https://git.example.com/infra/vpc.git",
            None,
            "https://git.example.com/infra/vpc.git",
        ),
        (
            "repo",
            "https://git.example.com/infra/vpc.git/",
            "ssh://git@x/y.git",
            "https://git.example.com/infra/vpc.git",
        ),
        ("repo", "http://git.example.com/infra/vpc.git", None, None),
        ("repo", "ssh://git@git.example.com/infra/vpc.git", None, None),
        ("repo", "git@git.example.com:infra/vpc.git", "https://x/y.git", None),
        (
            "git_url",
            "ssh://git@git.example.com/infra/vpc.git",
            "https://git.example.com/infra/vpc.git",
            "https://git.example.com/infra/vpc.git",
        ),
        ("git_url", "https://git.example.com/infra/vpc.git", None, None),
        ("git_url", "https://git.example.com/infra/vpc.git", "ssh://git@x/y.git", None),
        ("git_url", "https://git.example.com/infra/vpc.git", "http://x/y.git", None),
    ],
)
def test_check_url(
    tmp_path: Path, check: str, repo: str, git_url: str | None, expected: str | None
) -> None:
    settings = GitCheck(check=check)  # type: ignore[arg-type]
    assert check_url(settings, RepoLocation.parse(repo, tmp_path), git_url) == expected


def test_the_gate_opens_a_module_to_a_token_its_git_server_accepts(
    server: str, tls: TlsMaterial, tmp_path: Path, tap: GitHttpTap
) -> None:
    counts: Counter[tuple[str, str]] = Counter()
    settings = AuthSettings(public=("open",), git=GitCheck(ca_file=tls.ca_cert))
    gate = Gate.build(settings, tmp_path / "cache", counts)
    vpc = Target("read", "module infra/vpc/aws", "infra", git=lambda: GitQuestion(server))
    no_repo = Target("read", "module infra/dns/aws", "infra", git=lambda: None)

    async def admit(token: str, target: Target) -> object:
        return await gate.admit(f"Bearer {token}", target)

    assert asyncio.run(admit(TOKEN, vpc)) == GIT
    with pytest.raises(Forbidden, match="its Git server did not accept this token"):
        asyncio.run(admit(WRONG, vpc))
    with pytest.raises(Forbidden):  # nothing to ask: no
        asyncio.run(admit(TOKEN, no_repo))
    with pytest.raises(Forbidden):  # the mirror is never the Git server's to open
        asyncio.run(admit(TOKEN, Target("mirror", "the network mirror")))
    assert tap.requests == [REFS, REFS]
    assert counts[("git", "allowed")] == 1 and counts[("git", "refused")] == 3


def test_the_gate_says_unavailable_when_the_git_server_is_down(
    root: Path, tls: TlsMaterial, tmp_path: Path
) -> None:
    counts: Counter[tuple[str, str]] = Counter()
    gate = Gate.build(AuthSettings(git=GitCheck(ca_file=tls.ca_cert)), tmp_path / "c", counts)
    with git_http_server(root, token=TOKEN, tls=tls) as base:
        url = f"{base}/infra/vpc.git"
    target = Target("read", "module infra/vpc/aws", "infra", git=lambda: GitQuestion(url))
    with pytest.raises(AuthUnavailable):
        asyncio.run(gate.admit(f"Bearer {TOKEN}", target))
    assert counts == Counter({("unknown", "unavailable"): 1})


def _repositories(root: Path, count: int) -> list[str]:
    """`count` more repositories on the server that holds infra/vpc.git: their paths."""
    names = [f"infra/repo{i}.git" for i in range(count)]
    for name in names:
        bare_clone(root / "infra" / "vpc.git", root / name)
    return names


def _made_up(i: int) -> str:
    return f"glpat-made-up-{i:04d}-0123456789abcdef"


def test_a_token_a_host_rejects_costs_one_login_whatever_the_repositories(
    root: Path, tls: TlsMaterial, tap: GitHttpTap
) -> None:
    names = _repositories(root, 12)
    access = _access(tls, checks_per_minute=1000, failed_logins_per_minute=1000)
    with git_http_server(root, token=TOKEN, tls=tls, username="oauth2", tap=tap) as base:
        urls = [f"{base}/{name}" for name in names]

        async def ask(token: str) -> list[bool]:
            return list(await asyncio.gather(*(access(token, url) for url in urls)))

        for i in range(10):  # ten made-up tokens, each asked about every repository at once
            assert asyncio.run(ask(_made_up(i))) == [False] * len(urls)
        assert len(tap.requests) == 10  # one failed login per token, not one per repository
        assert asyncio.run(ask(TOKEN)) == [True] * len(urls)
        assert len(tap.requests) == 10 + len(urls)  # a token the host takes: each one asked


def test_no_access_to_one_repository_is_kept_for_it_alone(
    root: Path, tls: TlsMaterial, tap: GitHttpTap
) -> None:
    names = _repositories(root, 2)
    access = _access(tls)
    with git_http_server(root, token=TOKEN, tls=tls, username="oauth2", tap=tap) as base:
        first, second = (f"{base}/{name}" for name in names)
        tap.faults.append(404)  # the token is good, this repository is not for it
        assert asyncio.run(access(TOKEN, first)) is False
        assert asyncio.run(access(TOKEN, second)) is True  # the host was still asked
        assert asyncio.run(access(TOKEN, first)) is False  # kept: not asked again
    assert len(tap.requests) == 2


def test_logins_are_counted_per_client_address(
    root: Path, tls: TlsMaterial, tap: GitHttpTap
) -> None:
    names = _repositories(root, 3)
    clock = Clock()
    access = _access(tls, clock, checks_per_minute=3, failed_logins_per_minute=1000)
    with git_http_server(root, token=TOKEN, tls=tls, username="oauth2", tap=tap) as base:
        urls = [f"{base}/{name}" for name in names]

        def ask(token: str, url: str = urls[0], client: str = "192.0.2.7") -> bool:
            return asyncio.run(access(token, url, client))

        assert [ask(_made_up(i)) for i in range(3)] == [False] * 3
        with pytest.raises(TooManyRequests) as caught:
            ask(_made_up(3))
        assert caught.value.retry_after == 60 and "checks_per_minute" in str(caught.value)
        assert len(tap.requests) == 3  # the refused one was not asked
        # Answers kept, and a token the host took asked about its other repositories: free.
        assert ask(_made_up(0)) is False and ask(_made_up(1), urls[2]) is False
        assert ask(TOKEN, client="192.0.2.8") is True
        assert [ask(TOKEN, url, "192.0.2.8") for url in urls[1:]] == [True, True]
        # Another address has its own count (an IPv6 one by its /64) ...
        assert ask(_made_up(4), client="2001:db8::1") is False
        assert ask(_made_up(5), client="2001:db8::2") is False
        assert ask(_made_up(6), client="2001:db8::3") is False
        with pytest.raises(TooManyRequests):
            ask(_made_up(7), client="2001:db8::ffff")
        # ... and a minute later, the first address may again.
        clock.now += 60
        assert ask(_made_up(3)) is False


def test_the_gate_takes_only_a_forge_token_to_a_git_server(
    server: str, tls: TlsMaterial, tmp_path: Path, tap: GitHttpTap
) -> None:
    counts: Counter[tuple[str, str]] = Counter()
    gate = Gate.build(AuthSettings(git=GitCheck(ca_file=tls.ca_cert)), tmp_path / "c", counts)
    vpc = Target("read", "module infra/vpc/aws", "infra", git=lambda: GitQuestion(server))
    for token in ("random-guess", "gitreg_" + "x" * 43, "glpat-short", "ghp_" + "x" * 2000):
        with pytest.raises(Unauthorized, match="not one this registry knows"):
            asyncio.run(gate.admit(f"Bearer {token}", vpc))
    assert tap.requests == []
    assert counts == Counter({("unknown", "unknown_token"): 4})
    # Only a custom pattern's tokens, when one is set.
    custom = GitCheck(ca_file=tls.ca_cert, token_pattern="corp_[a-z]{8}")
    gate = Gate.build(AuthSettings(git=custom), tmp_path / "c", counts)
    with pytest.raises(Unauthorized):
        asyncio.run(gate.admit(f"Bearer {TOKEN}", vpc))
    with pytest.raises(Forbidden, match="Git server did not accept"):
        asyncio.run(gate.admit("Bearer corp_abcdefgh", vpc))
    assert tap.requests == [REFS]


def test_a_stand_in_of_another_namespace_opens_nothing(
    server: str, tls: TlsMaterial, tmp_path: Path, tap: GitHttpTap
) -> None:
    gate = Gate.build(AuthSettings(git=GitCheck(ca_file=tls.ca_cert)), tmp_path / "c", Counter())
    stand_in = GitQuestion(server, opens=False)
    target = Target("read", "module nowhere/x/aws", "nowhere", git=lambda: stand_in)
    with pytest.raises(Forbidden):
        asyncio.run(gate.admit(f"Bearer {TOKEN}", target))
    assert tap.requests == [REFS]  # asked all the same: it costs what a real module costs


def test_an_answer_that_says_nothing_of_the_host_lets_the_next_login_go(
    root: Path, tls: TlsMaterial, tap: GitHttpTap
) -> None:
    names = _repositories(root, 3)
    access = _access(tls)
    with git_http_server(root, token=TOKEN, tls=tls, username="oauth2", tap=tap) as base:
        urls = [f"{base}/{name}" for name in names]
        tap.faults.append(410)  # neither a login refused nor one taken

        async def ask() -> list[bool]:
            return list(await asyncio.gather(*(access(TOKEN, url) for url in urls)))

        assert sorted(asyncio.run(ask())) == [False, True, True]
    assert len(tap.requests) == 3


def test_a_host_sees_a_bounded_number_of_refused_logins_whoever_sends_them(
    root: Path, tls: TlsMaterial, tap: GitHttpTap
) -> None:
    clock = Clock()
    access = _access(tls, clock, failed_logins_per_minute=4)
    with git_http_server(root, token=TOKEN, tls=tls, username="oauth2", tap=tap) as base:
        url = f"{base}/infra/vpc.git"

        def ask(token: str, client: str) -> bool:
            return asyncio.run(access(token, url, client))

        assert ask(TOKEN, "192.0.2.1") is True  # taken: it counts for nothing
        # Addresses the host took no token from may use half of the 4: two refused, then none.
        assert [ask(_made_up(i), f"192.0.2.{10 + i}") for i in range(2)] == [False] * 2
        clock.now += 10
        for token in (_made_up(2), f"{TOKEN}-another"):
            with pytest.raises(AuthUnavailable) as caught:
                ask(token, "192.0.2.99")
            assert caught.value.retry_after == 50  # when the first refusal leaves the minute
            assert "too many refused logins" in str(caught.value)
        # The address the host took a token from has the other half, and no more.
        assert [ask(_made_up(i), "192.0.2.1") for i in (3, 4)] == [False] * 2
        with pytest.raises(AuthUnavailable):
            ask(_made_up(5), "192.0.2.1")
        assert len(tap.requests) == 5  # 4 refused logins in the minute, whoever sent them
        assert ask(TOKEN, "192.0.2.99") is True  # what is known still answers
        clock.now += 50
        assert ask(_made_up(6), "192.0.2.99") is False
        assert len(tap.requests) == 6


def test_made_up_tokens_from_new_addresses_do_not_lock_out_a_known_one(
    root: Path, tls: TlsMaterial, tap: GitHttpTap
) -> None:
    clock = Clock()
    access = _access(tls, clock)  # the defaults: 8 refused logins a minute, 10 per address
    ci_job = "glpat-ci-job-0002-0123456789abcdef"  # a new token the host takes
    with git_http_server(
        root, token=TOKEN, tls=tls, username="oauth2", tap=tap, other_tokens=[ci_job]
    ) as base:
        url = f"{base}/infra/vpc.git"

        def ask(token: str, client: str) -> bool:
            return asyncio.run(access(token, url, client))

        assert ask(TOKEN, "192.0.2.1") is True
        clock.now += 3600  # a known address stays known for a day
        junk: list[bool | None] = []
        for i in range(9):
            try:
                junk.append(ask(_made_up(i), f"198.51.100.{i}"))
            except AuthUnavailable:
                junk.append(None)
        assert junk == [False] * 4 + [None] * 5
        assert ask(ci_job, "192.0.2.1") is True  # a token new to the host, from a known address
        with pytest.raises(AuthUnavailable):  # ... but not from an address never seen
            ask(f"{ci_job}x", "203.0.113.5")
        assert len(tap.requests) == 1 + 4 + 1
        clock.now += 24 * 3600  # a day without a token taken: no longer known
        assert [ask(_made_up(10 + i), f"198.51.100.{i}") for i in range(4)] == [False] * 4
        with pytest.raises(AuthUnavailable):
            ask(_made_up(20), "192.0.2.1")


def test_logins_started_at_once_are_counted_before_they_start(
    root: Path, tls: TlsMaterial, tap: GitHttpTap
) -> None:
    access = _access(tls, failed_logins_per_minute=4)
    with git_http_server(root, token=TOKEN, tls=tls, username="oauth2", tap=tap) as base:
        url = f"{base}/infra/vpc.git"

        async def ask() -> list[bool | BaseException]:
            asked = (access(_made_up(i), url, f"198.51.100.{i}") for i in range(6))
            return list(await asyncio.gather(*asked, return_exceptions=True))

        answers = asyncio.run(ask())
    assert answers[:2] == [False, False]
    assert all(isinstance(a, AuthUnavailable) and a.retry_after == 1 for a in answers[2:])
    assert len(tap.requests) == 2
