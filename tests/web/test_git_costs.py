"""What auth.git costs the Git servers, through the real app over TLS: the requests a real Git
server (`git http-backend` behind HTTPS, checking Basic credentials) receives are counted. Made-up
tokens cost at most one login per Git host, whatever the number of repositories; a token of no
forge's form costs none; a module that does not exist answers as one that does; a client
address has a bounded number of logins a minute; made-up tokens from many addresses do not lock
out an address the Git server took a token from. Clients connect from other loopback addresses
(127.0.0.N) to stand for other machines."""

from __future__ import annotations

import contextlib
import secrets
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from gitreg.auth.gate import Gate
from gitreg.process.tlscert import TlsMaterial
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import GitHttpTap, bare_clone, git_http_server
from tests.support.tls_clients import served_over_tls, trusting

TOKEN = "glpat-the-teams-own-0123456789"  # what the Git server takes
CI_JOBS = [f"glpat-ci-job-{i}-0123456789abcdef" for i in range(3)]  # so are these, new each job
REPOSITORIES = 6


def made_up() -> str:
    return "glpat-" + secrets.token_urlsafe(15)


async def no_wait(delay: float) -> None:
    pass


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@dataclass
class Served:
    client: httpx.Client
    tap: GitHttpTap
    git: contextlib.ExitStack  # closing it stops the Git server
    url: str
    verify: ssl.SSLContext

    def asked(self) -> int:
        return len(self.tap.requests)

    def client_at(self, stack: contextlib.ExitStack, address: str) -> httpx.Client:
        """A client whose connections come from `address` (one of 127.0.0.0/8)."""
        transport = httpx.HTTPTransport(local_address=address, verify=self.verify)
        return stack.enter_context(httpx.Client(base_url=self.url, timeout=20, transport=transport))


@pytest.fixture
def served(
    tls: TlsMaterial,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> Iterator[Served]:
    """REPOSITORIES private modules of namespace team, each in its own repository on one Git
    server; background work and fresh reads off, so that the server sees only auth checks once
    the registry has fetched. Its parameter: auth.git's settings, by default no limit that these
    tests meet unless they set it."""
    limits = {"checks_per_minute": 1000, "failed_logins_per_minute": 1000}
    limits.update(getattr(request, "param", {}))
    git_settings = ", ".join(f"{key}: {value}" for key, value in limits.items())
    work = GitRepo(tmp_path / "work")
    work.release("v1.0.0", module_files("1.0.0"))
    for i in range(REPOSITORIES):
        bare_clone(work.path, tmp_path / "server" / "team" / f"m{i}.git")
    monkeypatch.setenv("GITREG_TEST_GIT_TOKEN", TOKEN)
    tap = GitHttpTap()
    with contextlib.ExitStack() as git, contextlib.ExitStack() as stack:
        base = git.enter_context(
            git_http_server(
                tmp_path / "server",
                token=TOKEN,
                tls=tls,
                username="oauth2",
                tap=tap,
                other_tokens=CI_JOBS,
            )
        )
        modules = "\n".join(
            f'  - {{namespace: team, name: m{i}, system: aws, repo: "{base}/team/m{i}.git"}}'
            for i in range(REPOSITORIES)
        )
        (tmp_path / "registry.yaml").write_text(f"""
cache_dir: cache
fresh_reads: 0
credentials:
  - {{url: "{base}/", token_env: GITREG_TEST_GIT_TOKEN, ca_file: {tls.ca_cert}}}
modules:
{modules}
auth:
  git: {{cache: 5m, {git_settings}, ca_file: {tls.ca_cert}}}
""")
        server, client = stack.enter_context(
            served_over_tls(tmp_path / "registry.yaml", tls, timeout=20)
        )
        tap.requests.clear()  # the registry's own fetches
        # Wrong tokens are slowed (tests/auth/test_wrong_tokens.py): not waited for here.
        gate = server.state.current.world.gate
        assert isinstance(gate, Gate)
        gate.wrong_tokens.sleep = no_wait
        yield Served(client, tap, git, server.url, trusting(tls.ca_cert))


def test_made_up_tokens_cost_one_login_per_host_whatever_the_repositories(
    served: Served,
) -> None:
    client = served.client
    tokens = [made_up() for _ in range(5)]
    for token in tokens:
        listed = client.get("/v1/modules", headers=bearer(token))
        assert listed.status_code == 200 and listed.json()["modules"] == []
        for i in range(REPOSITORIES):
            answer = client.get(f"/v1/modules/team/m{i}/aws/versions", headers=bearer(token))
            assert answer.status_code == 403
    # Before: one login per module per token (30 here); now one per token at this host.
    assert served.asked() == len(tokens)
    # A token of no forge's form is never taken to a Git server.
    for token in ("password123", "gitreg_" + secrets.token_urlsafe(32), "glpat-short"):
        assert client.get("/v1/modules", headers=bearer(token)).status_code == 401
        answer = client.get("/v1/modules/team/m0/aws/versions", headers=bearer(token))
        assert answer.status_code == 401
    assert served.asked() == len(tokens)
    # The token the host takes is asked about each repository once, then from the cache.
    listed = client.get("/v1/modules", headers=bearer(TOKEN))
    assert len(listed.json()["modules"]) == REPOSITORIES
    assert served.asked() == len(tokens) + REPOSITORIES
    assert client.get("/v1/modules/team/m3/aws/versions", headers=bearer(TOKEN)).status_code == 200
    assert served.asked() == len(tokens) + REPOSITORIES


def test_a_missing_module_answers_as_an_existing_one(served: Served) -> None:
    client = served.client
    existing, missing = "/v1/modules/team/m4/aws/versions", "/v1/modules/team/nope/aws/versions"
    elsewhere = "/v1/modules/made-up-namespace/nope/aws/versions"
    for path in (existing, missing, elsewhere):
        before = served.asked()
        assert client.get(path, headers=bearer(made_up())).status_code == 403
        assert served.asked() == before + 1  # the same cost: one login
    # Only a token the Git server takes tells them apart (and not in another namespace).
    assert client.get(existing, headers=bearer(TOKEN)).status_code == 200
    assert client.get(missing, headers=bearer(TOKEN)).status_code == 404
    assert client.get(elsewhere, headers=bearer(TOKEN)).status_code == 403
    page = client.get("/modules/team/nope/aws", headers=bearer(made_up()))
    assert page.status_code == 403
    served.git.close()  # the Git server goes away: a new token is a 503 whatever it asks for
    for path in (existing, missing, elsewhere):
        down = client.get(path, headers=bearer(made_up()))
        assert down.status_code == 503 and down.headers["retry-after"]


@pytest.mark.parametrize("served", [{"checks_per_minute": 2}], indirect=True)
def test_a_client_address_has_a_bounded_number_of_logins_a_minute(served: Served) -> None:
    client = served.client
    path = "/v1/modules/team/m0/aws/versions"
    assert [client.get(path, headers=bearer(made_up())).status_code for _ in range(2)] == [403] * 2
    over = client.get(path, headers=bearer(made_up()))
    assert over.status_code == 429 and 1 <= int(over.headers["retry-after"]) <= 60
    assert "checks_per_minute" in over.json()["errors"][0]
    listed = client.get("/v1/modules", headers=bearer(made_up()))
    assert listed.status_code == 429 and listed.headers["retry-after"]
    assert served.asked() == 2
    # Answers already known cost nothing: they still come.
    assert client.get(path, headers=bearer(TOKEN)).status_code == 429  # a new login, too


@pytest.mark.parametrize(
    "served", [{"checks_per_minute": 3, "failed_logins_per_minute": 8}], indirect=True
)
def test_made_up_tokens_from_many_addresses_do_not_lock_out_a_known_one(served: Served) -> None:
    path = "/v1/modules/team/m0/aws/versions"
    with contextlib.ExitStack() as stack:
        runner = served.client_at(stack, "127.0.0.2")  # a CI runner, its jobs' tokens new each time
        assert runner.get(path, headers=bearer(TOKEN)).status_code == 200
        # Nine made-up tokens from nine addresses (was: 403 x8, then every new token a 503).
        junk = [
            served.client_at(stack, f"127.0.0.{10 + i}").get(path, headers=bearer(made_up()))
            for i in range(9)
        ]
        assert [answer.status_code for answer in junk] == [403] * 4 + [503] * 5
        assert served.asked() == 1 + 4
        # The runner's next job brings a token new to the Git server: checked, and opens.
        assert runner.get(path, headers=bearer(CI_JOBS[0])).status_code == 200
        # An address the Git server never took a token from waits, and is told why and how long.
        new = served.client_at(stack, "127.0.0.30").get(path, headers=bearer(CI_JOBS[1]))
        assert new.status_code == 503 and 1 <= int(new.headers["retry-after"]) <= 60
        said = new.json()["errors"][0]
        assert "too many refused logins at this module's Git server in the last minute" in said
        assert f"checked again in {new.headers['retry-after']}s" in said
        assert "cannot be asked" not in said  # the Git server is not down
        assert served.asked() == 1 + 4 + 1
        # The runner's address still has its own limit: 3 logins a minute here.
        assert runner.get(path, headers=bearer(made_up())).status_code == 403
        over = runner.get(path, headers=bearer(CI_JOBS[2]))
        assert over.status_code == 429 and "checks_per_minute" in over.json()["errors"][0]
        assert served.asked() == 1 + 4 + 1 + 1
