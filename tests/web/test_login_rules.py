"""Who a sign-in names and what its tokens read later, over real HTTPS against a real OpenID
provider process: an email names a person only when the provider verified it (else the `sub`
does), or `auth.login.name_claim` names them; a name that is a registry.yaml token's, in any
case, is refused; `gitreg token list` shows each token's subject, and `revoke` ends one token
by its id, or refuses a name that people of different subjects share. A claims rule removed
from registry.yaml narrows, at the reload, every token and browser session already issued."""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from gitreg.auth.tokens import digest, new_token
from gitreg.process.tlscert import TlsMaterial
from gitreg.state.issued_tokens import IssuedToken, IssuedTokenFiles
from tests.support.login_registry import LoginCatalog, claim_line, login_registry
from tests.support.oidc_provider import Provider, oidc_provider, sign_in_as
from tests.support.servers import RegistryServer, run_gitreg
from tests.support.tls_clients import trusting
from tests.web.test_login import SECRET, Served, refused_login, status, token_of

PLATFORM = "{match: {groups: platform}, read: [platform], mirror: true}"
SHARED = '{match: {groups: "*"}, read: ["shared-*"]}'
PLATFORM_RULE, SHARED_RULE = claim_line(PLATFORM), claim_line(SHARED)  # as registry.yaml has them
CATALOG = LoginCatalog(
    modules=("platform/net/aws", "shared-net/vpc/aws"),
    tokens={"Priv-Reader": "0" * 64, "deploy": "1" * 64},
    scopes=("openid", "email", "profile"),
    claims=(PLATFORM, SHARED),
    login=("token_ttl: 30d",),
)


@pytest.fixture(scope="module")
def provider(tls: TlsMaterial) -> Iterator[Provider]:
    with oidc_provider(tls) as provider:
        provider.person("dana", email="dana@acme.example", email_verified=False, groups=["dev"])
        provider.person("erin", email="erin@acme.example", email_verified=True, groups=["dev"])
        provider.person("gus", email="gus@acme.example", email_verified="true", groups=["dev"])
        provider.person("priv-reader", groups=["dev"])  # named by its sub: a token's, in lower case
        provider.person("DEPLOY", groups=["dev"])  # and a token's in upper case
        provider.person("hal-1", preferred_username="hal", groups=["dev"])
        provider.person("hal-2", preferred_username="hal", groups=["dev"])
        provider.person("alice", email="alice@acme.example", email_verified=True,
                        groups=["platform", "dev"])  # fmt: skip
        many = [f"group-{i:03d}-of-a-large-company" for i in range(300)]
        provider.person("mo", email="mo@acme.example", email_verified=True, groups=many)
        yield provider


Serve = Callable[[str], AbstractContextManager[tuple[Served, RegistryServer]]]


@pytest.fixture
def serve(tmp_path: Path, tls: TlsMaterial, provider: Provider) -> Serve:
    """A registry of its own for a test, with `extra`, a key of auth.login, as a line."""

    @contextmanager
    def served(extra: str = "") -> Iterator[tuple[Served, RegistryServer]]:
        catalog = replace(CATALOG, login=(*CATALOG.login, *([extra] if extra else [])))
        with login_registry(tmp_path, provider.url, tls, catalog, secret=SECRET) as (server, _):
            yield Served(server.url, provider, trusting(tls.ca_cert), tmp_path), server

    return served


def listed(served: Served) -> str:
    done = run_gitreg("token", "list", "--config", str(served.root / "registry.yaml"))
    assert done.returncode == 0, done.stderr
    return done.stdout


def line_of(listing: str, token: str) -> str:
    token_id = hashlib.sha256(token.encode()).hexdigest()[:16]
    return next(line for line in listing.splitlines() if line.startswith(token_id))


def test_an_email_names_a_person_only_when_the_provider_verified_it(serve: Serve) -> None:
    with serve("") as (served, _):
        tokens = {sub: token_of(served, sub) for sub in ("dana", "erin", "gus")}
        listing = listed(served)
    header = ["ID", "NAME", "SUBJECT", "VIA", "ISSUED", "EXPIRES", "READS"]
    assert listing.splitlines()[0].split() == header  # each column apart from the next
    line = line_of(listing, tokens["dana"])
    assert not re.search(r"UTC\S", line), line  # EXPIRES is not run into READS
    assert line_of(listing, tokens["dana"]).split()[1:3] == ["dana", "dana"]
    assert line_of(listing, tokens["erin"]).split()[1:3] == ["erin@acme.example", "erin"]
    # The text "true", which some providers send for the boolean, is taken as their word.
    assert line_of(listing, tokens["gus"]).split()[1:3] == ["gus@acme.example", "gus"]
    assert "dana@acme.example" not in listing


def test_the_name_claim_names_people(serve: Serve) -> None:
    with serve("name_claim: preferred_username") as (served, _):
        hal = token_of(served, "hal-1")
        erin = token_of(served, "erin")  # no preferred_username: named by the sub
        listing = listed(served)
    assert line_of(listing, hal).split()[1:3] == ["hal", "hal-1"]
    assert line_of(listing, erin).split()[1:3] == ["erin", "erin"]


def test_no_one_signs_in_under_a_token_name_in_another_case(serve: Serve) -> None:
    with serve("") as (served, _):
        for sub in ("priv-reader", "DEPLOY"):  # the tokens are Priv-Reader and deploy
            refused = refused_login(served, sub)
            assert refused.status_code == 400
            assert "is the name of a client token or issuer" in refused.text


def test_revoke_by_id_ends_that_token_alone(serve: Serve) -> None:
    with serve("") as (served, _):
        first, second = token_of(served, "erin"), token_of(served, "erin")
        path = "/v1/modules/shared-net/vpc/aws/versions"
        config = str(served.root / "registry.yaml")
        first_id = hashlib.sha256(first.encode()).hexdigest()[:16]
        revoked = run_gitreg("token", "revoke", first_id, "--config", config)
        assert revoked.returncode == 0, revoked.stderr
        assert revoked.stdout.count("revoked ") == 1 and "subject erin" in revoked.stdout
        assert status(served, path, first) == 401 and status(served, path, second) == 200


def test_a_name_two_people_share_is_not_revoked_on_a_guess(serve: Serve) -> None:
    with serve("name_claim: preferred_username") as (served, _):
        one, other = token_of(served, "hal-1"), token_of(served, "hal-2")
        path = "/v1/modules/shared-net/vpc/aws/versions"
        config = str(served.root / "registry.yaml")
        refused = run_gitreg("token", "revoke", "hal", "--config", config)
        assert refused.returncode == 1
        assert "nothing was revoked" in refused.stderr and "different subjects" in refused.stderr
        assert "hal-1" in refused.stderr and "hal-2" in refused.stderr
        assert status(served, path, one) == 200 and status(served, path, other) == 200
        other_id = hashlib.sha256(other.encode()).hexdigest()[:16]
        assert run_gitreg("token", "revoke", other_id, "--config", config).returncode == 0
        assert status(served, path, one) == 200 and status(served, path, other) == 401


def test_a_rule_removed_narrows_tokens_and_sessions_at_the_reload(serve: Serve) -> None:
    with serve("") as (served, server):
        token = token_of(served, "alice")
        platform, shared = "/v1/modules/platform/net/aws/versions", "/v1/modules/shared-net/vpc/aws"
        mirror = "/v1/mirror/registry.terraform.io/hashicorp/null/index.json"
        assert status(served, platform, token) == 200 and status(served, shared, token) == 200
        assert status(served, mirror, token) == 404  # the mirror opens to it, and has none
        with served.browser() as browser:
            journey = sign_in_as(browser, f"{served.url}/signin/provider?next=/", "alice")
            assert journey.last.status_code == 200, journey.last.text
            page = f"{served.url}/modules/platform/net/aws"
            assert browser.get(page).status_code == 200
            config = served.root / "registry.yaml"
            config.write_text(config.read_text().replace(PLATFORM_RULE, ""))
            assert server.reload()
            assert status(served, platform, token) == 403
            assert status(served, shared, token) == 200  # a rule still there keeps working
            assert status(served, mirror, token) == 403  # given by the rule removed alone
            names = [m["namespace"] for m in _modules(served, token)]
            assert names == ["shared-net"]
            assert browser.get(page).status_code in (403, 404)
            assert browser.get(f"{served.url}/modules/shared-net/vpc/aws").status_code == 200
            # The rule put back: the token reads what it was issued for again, no more.
            config.write_text(config.read_text().replace(SHARED_RULE, PLATFORM_RULE + SHARED_RULE))
            assert server.reload()
            assert status(served, platform, token) == 200
            assert browser.get(page).status_code == 200


def test_a_token_recorded_before_claims_were_kept_reads_nothing(serve: Serve) -> None:
    with serve("") as (served, _):
        token, now = new_token(), int(time.time())
        old = IssuedToken(
            "alice@acme.example", digest(token).hex(), ("platform",), False, False, now,
            now + 60, "terraform",
        )  # fmt: skip
        IssuedTokenFiles(served.root / "cache").keep(old)
        assert status(served, "/v1/modules/platform/net/aws/versions", token) == 403


def _modules(served: Served, token: str) -> list[dict[str, str]]:
    answer = httpx.get(
        f"{served.url}/v1/modules",
        headers={"Authorization": f"Bearer {token}"},
        verify=served.verify,
        timeout=15,
    )
    assert answer.status_code == 200, answer.text
    found: list[dict[str, str]] = answer.json()["modules"]
    return found


def test_a_person_in_hundreds_of_groups_signs_in(serve: Serve) -> None:
    # What the rules read is kept with the code Terraform carries: a witness per glob, not
    # every group, so that the code stays within what a code may be.
    with serve("") as (served, _):
        token = token_of(served, "mo")
        assert status(served, "/v1/modules/shared-net/vpc/aws/versions", token) == 200
