"""`terraform login`'s protocol over real HTTPS, against a real OpenID provider process: the
authorization request checked, the person sent to the provider and back, a one-time code
exchanged once with the right PKCE verifier for a token of gitreg's own, which opens what the
person's groups open; every refusal a clear 4xx (a page for the person, JSON for the token
endpoint), never a 500, and no secret in a log line."""

from __future__ import annotations

import base64
import hashlib
import logging
import secrets
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest

from gitreg.process.tlscert import TlsMaterial
from gitreg.state.issued_tokens import IssuedTokenFiles
from tests.support.login_registry import LoginCatalog, login_registry
from tests.support.oidc_provider import Provider, oidc_provider, sign_in_as
from tests.support.servers import free_port, run_gitreg
from tests.support.site_snippets import claimed
from tests.support.tls_clients import trusting

SECRET = "the-client-secret-of-gitreg"
REDIRECT = "http://localhost:10003/login"


@dataclass
class Served:
    url: str
    provider: Provider
    verify: ssl.SSLContext
    root: Path

    def browser(self) -> httpx.Client:
        return httpx.Client(verify=self.verify, timeout=15)


CATALOG = LoginCatalog(
    modules=("platform/net/aws", "shared-net/vpc/aws"),
    tokens={"ci": "0" * 64},
    claims=(
        '{match: {groups: platform}, read: [platform, "shared-*"]}',
        '{match: {groups: "*"}, read: ["shared-*"]}',
    ),
    login=("token_ttl: 30d",),
)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, tls: TlsMaterial) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("login")
    with oidc_provider(tls) as provider:
        provider.person(
            "alice", email="alice@acme.example", email_verified=True, groups=["platform", "dev"]
        )
        provider.person("bob", email="bob@acme.example", email_verified=True, groups=["dev"])
        provider.person("eve", email="eve@elsewhere.example", email_verified=True)
        provider.person(
            "carol", email="carol@acme.example", email_verified=True, groups=["platform"]
        )
        provider.person("ci", groups=["platform"])  # no email: named by its sub
        registry = login_registry(root, provider.url, tls, CATALOG, secret=SECRET, access_log=True)
        with registry as (server, _):
            yield Served(server.url, provider, trusting(tls.ca_cert), root)


def pkce() -> tuple[str, str]:
    """A verifier as Terraform makes one, and its S256 challenge."""
    verifier = f"{secrets.token_hex(16)}.{secrets.randbelow(10**9):09d}-padding-to-43"
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
    return verifier, challenge.rstrip(b"=").decode()


def authorize_url(served: Served, challenge: str, **changes: str) -> str:
    query = {
        "client_id": "terraform-cli",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "redirect_uri": REDIRECT,
        "response_type": "code",
        "state": "terraform-state-1",
        **changes,
    }
    return f"{served.url}/oauth/authorize?{urlencode({k: v for k, v in query.items() if v})}"


def code_for(served: Served, browser: httpx.Client, sub: str, challenge: str) -> str:
    journey = sign_in_as(browser, authorize_url(served, challenge), sub)
    assert journey.leads_to is not None, journey.last.text
    target = urlsplit(journey.leads_to)
    assert f"{target.scheme}://{target.netloc}{target.path}" == REDIRECT
    query = parse_qs(target.query)
    assert query["state"] == ["terraform-state-1"]
    return query["code"][0]


def exchange(served: Served, code: str, verifier: str, /, **changes: str) -> httpx.Response:
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT,
        "client_id": "terraform-cli",
        "code_verifier": verifier,
        **changes,
    }
    return httpx.post(f"{served.url}/oauth/token", data=form, verify=served.verify, timeout=15)


def token_of(served: Served, sub: str) -> str:
    verifier, challenge = pkce()
    with served.browser() as browser:
        code = code_for(served, browser, sub, challenge)
    answer = exchange(served, code, verifier)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["token_type"] == "bearer" and body["expires_in"] == 30 * 86400
    token: str = body["access_token"]
    return token


def status(served: Served, path: str, token: str) -> int:
    """The status of GET `path` with `token` as a bearer token."""
    answer = httpx.get(
        f"{served.url}{path}",
        headers={"Authorization": f"Bearer {token}"},
        verify=served.verify,
        timeout=15,
    )
    return answer.status_code


def versions(served: Served, module: str, token: str) -> int:
    return status(served, f"/v1/modules/{module}/versions", token)


def test_discovery_offers_login_v1(served: Served) -> None:
    answer = httpx.get(f"{served.url}/.well-known/terraform.json", verify=served.verify)
    assert answer.json()["login.v1"] == {
        "client": "terraform-cli",
        "grant_types": ["authz_code"],
        "authz": "/oauth/authorize",
        "token": "/oauth/token",
        "ports": [10000, 10010],
    }


def test_a_person_gets_a_token_that_opens_their_groups_namespaces(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    alice = token_of(served, "alice")
    assert alice.startswith("gitreg_")
    assert versions(served, "platform/net/aws", alice) == 200
    assert versions(served, "shared-net/vpc/aws", alice) == 200
    bob = token_of(served, "bob")
    assert versions(served, "shared-net/vpc/aws", bob) == 200
    assert versions(served, "platform/net/aws", bob) == 403
    eve = token_of(served, "eve")  # outside every group: a token that reads nothing
    assert versions(served, "shared-net/vpc/aws", eve) == 403
    logged = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("gitreg"))
    for secret in (alice, bob, eve, SECRET):
        assert secret not in logged


def test_a_code_is_spent_once(served: Served, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    verifier, challenge = pkce()
    with served.browser() as browser:
        code = code_for(served, browser, "alice", challenge)
    first = exchange(served, code, verifier)
    assert first.status_code == 200
    again = exchange(served, code, verifier)
    assert again.status_code == 400
    assert again.json()["error"] == "invalid_grant"
    assert "already used" in again.json()["error_description"]
    # gitreg's logs (the access log too) saw every step, and no code, verifier or token; the
    # test's own client logs what it was sent at DEBUG, which is not gitreg's to keep quiet.
    logged = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("gitreg"))
    assert "/oauth/callback" in logged and "/oauth/token" in logged
    for secret in (code, verifier, first.json()["access_token"], SECRET):
        assert secret not in logged


@pytest.mark.parametrize(
    ("changes", "error", "says"),
    [
        ({"code_verifier": "x" * 43}, "invalid_grant", "code_verifier does not match"),
        ({"code_verifier": ""}, "invalid_grant", "code_verifier does not match"),
        ({"redirect_uri": "http://localhost:10004/login"}, "invalid_grant", "redirect_uri"),
        ({"client_id": "someone-else"}, "invalid_client", "client_id"),
        ({"grant_type": "password"}, "unsupported_grant_type", "grant_type"),
        ({"code": "made-up"}, "invalid_grant", "not one this registry gave"),
    ],
)
def test_a_token_request_that_fails_a_check_gets_no_token(
    served: Served, changes: dict[str, str], error: str, says: str
) -> None:
    verifier, challenge = pkce()
    with served.browser() as browser:
        code = code_for(served, browser, "alice", challenge)
    refused = exchange(served, code, verifier, **changes)
    assert refused.status_code == 400
    assert refused.json()["error"] == error and says in refused.json()["error_description"]
    assert "access_token" not in refused.json()
    # A refusal spent nothing: the right request still gets its token.
    assert exchange(served, code, verifier).status_code == 200


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"redirect_uri": "https://evil.example/login"}, "redirect_uri must be"),
        ({"redirect_uri": "http://localhost:9999/login"}, "redirect_uri must be"),
        ({"redirect_uri": "http://localhost:10011/login"}, "redirect_uri must be"),
        ({"redirect_uri": "http://localhost:10003/elsewhere"}, "redirect_uri must be"),
        ({"redirect_uri": "http://evil.example:10003/login"}, "redirect_uri must be"),
        ({"redirect_uri": "http://localhost@evil.example:10003/login"}, "redirect_uri must be"),
        ({"redirect_uri": ""}, "redirect_uri must be"),
        ({"client_id": "other"}, "client_id must be"),
        ({"code_challenge_method": "plain"}, "PKCE is required"),
        ({"code_challenge": ""}, "code_challenge must be"),
        ({"state": ""}, "state is required"),
        ({"response_type": "token"}, "response_type must be code"),
    ],
)
def test_a_bad_authorization_request_is_a_page_and_no_redirect(
    served: Served, changes: dict[str, str], says: str
) -> None:
    _, challenge = pkce()
    with served.browser() as browser:
        answer = browser.get(authorize_url(served, challenge, **changes))
    assert answer.status_code == 400
    assert "location" not in answer.headers
    assert answer.headers["content-type"].startswith("text/html")
    assert "Sign-in failed" in answer.text and says in answer.text


def test_a_forged_or_missing_state_ends_the_sign_in(served: Served) -> None:
    _, challenge = pkce()
    with served.browser() as browser:
        to_provider = browser.get(authorize_url(served, challenge))
        assert to_provider.status_code == 302
        forged = browser.get(f"{served.url}/oauth/callback?code=abc&state=forged")
        assert forged.status_code == 400 and "is not this sign-in" in forged.text
        missing = browser.get(f"{served.url}/oauth/callback?code=abc")
        assert missing.status_code == 400
    with served.browser() as stranger:  # no sign-in under way in this browser
        answer = stranger.get(f"{served.url}/oauth/callback?code=abc&state=x")
        assert answer.status_code == 400 and "no sign-in under way" in answer.text


def refused_login(served: Served, sub: str) -> httpx.Response:
    """`terraform login` as `sub`, refused once the provider sent them back: the browser goes on
    to Terraform's listener all the same (which would wait for ever otherwise), with a code
    whose exchange is refused (Terraform then stops, printing why): that exchange's answer."""
    verifier, challenge = pkce()
    with served.browser() as browser:
        journey = sign_in_as(browser, authorize_url(served, challenge), sub)
        assert journey.leads_to is not None, journey.last.text
        assert "gitreg_login=" in journey.last.headers.get("set-cookie", "")  # ended: removed
    target = urlsplit(journey.leads_to)
    assert f"{target.scheme}://{target.netloc}{target.path}" == REDIRECT
    query = parse_qs(target.query)
    assert query["state"] == ["terraform-state-1"]
    answer = exchange(served, query["code"][0], verifier)
    assert answer.status_code == 400 and answer.json()["error"] == "access_denied"
    return answer


def test_no_one_signs_in_under_a_client_tokens_name(served: Served) -> None:
    refused = refused_login(served, "ci")
    said = refused.json()["error_description"]
    assert said.startswith("the sign-in was refused: 'ci' is the name of a client token or issuer")
    with served.browser() as browser:  # for the pages, the refusal is the page
        journey = sign_in_as(browser, f"{served.url}/signin/provider?next=/", "ci")
    assert journey.leads_to is None and journey.last.status_code == 400
    assert "is the name of a client token or issuer" in journey.last.text


def test_the_provider_refusing_is_a_page(served: Served) -> None:
    _, challenge = pkce()
    with served.browser() as browser:
        journey = sign_in_as(browser, authorize_url(served, challenge), "alice", deny=True)
    assert journey.leads_to is None
    assert journey.last.status_code == 400
    assert "said access_denied" in journey.last.text, journey.last.text


def test_a_revoked_token_is_refused_at_once(served: Served) -> None:
    with claimed("private.md", "test_a_revoked_token_is_refused_at_once") as page:
        listing, revoking = (
            line.split()[1:] for line in page.take("sh", "gitreg token list").splitlines()
        )
    token = token_of(served, "bob")
    assert versions(served, "shared-net/vpc/aws", token) == 200
    config = str(served.root / "registry.yaml")
    listed = run_gitreg(*listing, "--config", config)
    assert listed.returncode == 0, listed.stderr
    token_id = hashlib.sha256(token.encode()).hexdigest()[:16]
    line = next(line for line in listed.stdout.splitlines() if line.startswith(token_id))
    assert "bob@acme.example" in line and "terraform" in line and "shared-*" in line
    assert token not in listed.stdout
    revoked = run_gitreg(*revoking, "--config", config)  # bob's every token, by his name
    assert revoked.returncode == 0 and f"revoked {token_id}" in revoked.stdout
    assert versions(served, "shared-net/vpc/aws", token) == 401
    again = run_gitreg("token", "revoke", token_id, "--config", config)
    assert again.returncode == 1 and "no live token" in again.stderr


def test_a_page_session_opens_by_signing_in_and_ends_when_revoked(served: Served) -> None:
    page = f"{served.url}/modules/platform/net/aws"
    with served.browser() as browser:
        assert browser.get(page).status_code == 401
        start = f"{served.url}/signin/provider?next=/modules/platform/net/aws"
        journey = sign_in_as(browser, start, "carol")
        assert journey.leads_to is None and journey.last.status_code == 200
        moving_on = journey.last.text  # a page that moves on (a same-site navigation)
        assert 'http-equiv="refresh"' in moving_on and "next=%2Fmodules%2Fplatform" in moving_on
        cookie = journey.last.headers["set-cookie"]
        assert "gitreg_session=" in cookie and "SameSite=strict" in cookie and "Secure" in cookie
        shown = browser.get(page)
        assert shown.status_code == 200 and "Signed in as <strong>carol@acme.example</strong>" in (
            shown.text
        )
        # What `gitreg token revoke carol@acme.example` does (run as a command above), here
        # without a process of its own: the session's token is carol's "browser" one.
        ended_tokens = IssuedTokenFiles(served.root / "cache").revoke("carol@acme.example")
        assert [t.via for t in ended_tokens] == ["browser"]
        ended = browser.get(page)
        assert ended.status_code == 401 and "Sign in again" in ended.text


def test_check_reaches_the_providers_discovery_document(served: Served) -> None:
    config = served.root / "registry.yaml"
    done = run_gitreg("check", "--config", str(config), "--listen", f"127.0.0.1:{free_port()}")
    assert "auth.login" not in done.stdout, done.stdout
    assert done.returncode == 0, done.stdout + done.stderr
    gone = served.root / "gone.yaml"
    port = free_port()
    gone.write_text(config.read_text().replace(served.provider.url, f"https://127.0.0.1:{port}"))
    failed = run_gitreg("check", "--config", str(gone), "--listen", f"127.0.0.1:{free_port()}")
    assert failed.returncode == 1
    assert "auth.login.issuer: the OpenID provider's discovery document" in failed.stdout
    assert f"https://127.0.0.1:{port}/.well-known/openid-configuration cannot be read" in (
        failed.stdout
    )
    assert SECRET not in failed.stdout + failed.stderr


def test_sign_ins_are_limited_per_address(served: Served) -> None:
    # Last in this file: it spends 127.0.0.1's sign-ins for the minute.
    _, challenge = pkce()
    with served.browser() as browser:
        statuses = [browser.get(authorize_url(served, challenge)).status_code for _ in range(25)]
    assert 429 in statuses and 500 not in statuses
    assert set(statuses) <= {302, 429}


def test_a_provider_that_is_down_is_a_503_page(tmp_path: Path, tls: TlsMaterial) -> None:
    down = f"https://127.0.0.1:{free_port()}"
    verify = trusting(tls.ca_cert)
    with login_registry(tmp_path, down, tls, CATALOG, secret=SECRET) as (server, _):
        served = Served(server.url, Provider(down, None, verify), verify, tmp_path)  # type: ignore[arg-type]
        _, challenge = pkce()
        with served.browser() as browser:
            for url in (f"{server.url}/signin/provider", authorize_url(served, challenge)):
                answer = browser.get(url)
                assert answer.status_code == 503, answer.text
                assert "Cannot sign in now" in answer.text and "cannot be read" in answer.text
                assert 'http-equiv="refresh"' not in answer.text  # a retry would not mend it
                assert "gitreg_login" not in answer.headers.get("set-cookie", "")
