"""Sign-in requests another party shapes, against the real app over TLS and a real OpenID
provider process: a redirect_uri that Python's URL parser would read otherwise than it is sent
(refused, 400, before anyone is sent to the provider); a callback link with another sign-in's
state or an error (it ends nothing: the sign-in under way still finishes); and sign-ins another
site's page starts (refused, 403, without spending the address's sign-ins a minute)."""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import httpx
import pytest

from gitreg.auth.login import SIGN_INS_PER_MINUTE
from gitreg.process.tlscert import TlsMaterial
from tests.support.login_registry import LoginCatalog, login_registry
from tests.support.oidc_provider import Provider, oidc_provider, sign_in_as
from tests.support.tls_clients import trusting

CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"  # RFC 7636's example
REDIRECT = "http://localhost:10004/login"


@dataclass
class Served:
    url: str
    verify: ssl.SSLContext

    def browser(self) -> httpx.Client:
        return httpx.Client(verify=self.verify, timeout=15)


@pytest.fixture(scope="module")
def provider(tls: TlsMaterial) -> Iterator[Provider]:
    with oidc_provider(tls) as provider:
        provider.person("alice", email="alice@acme.example", groups=["dev"])
        yield provider


@contextlib.contextmanager
def registry(root: Path, provider: Provider, tls: TlsMaterial) -> Iterator[Served]:
    """A registry whose sign-in goes through `provider`, served over TLS until the block ends."""
    catalog = LoginCatalog(
        modules=("dev/net/aws",),
        name=None,
        scopes=None,
        claims=("{match: {groups: dev}, read: [dev]}",),
    )
    with login_registry(root, provider.url, tls, catalog) as (server, _):
        yield Served(server.url, trusting(tls.ca_cert))


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, provider: Provider, tls: TlsMaterial
) -> Iterator[Served]:
    with registry(tmp_path_factory.mktemp("forgeries"), provider, tls) as served:
        yield served


def authorize(served: Served, redirect_uri: str) -> str:
    query = {
        "client_id": "terraform-cli",
        "code_challenge": CHALLENGE,
        "code_challenge_method": "S256",
        "redirect_uri": redirect_uri,
        "response_type": "code",
        "state": "terraform-state",
    }
    return f"{served.url}/oauth/authorize?{urlencode(query)}"


@pytest.mark.parametrize(
    "redirect_uri",
    [
        " http://localhost:10004/login",  # urlsplit strips leading spaces ...
        "\thttp://localhost:10004/login",
        "\r\nhttp://localhost:10004/login",
        "http://local\thost:10004/login",  # ... and drops tabs, CR and LF anywhere
        "http://localhost:10004/lo\ngin",
        "http://localhost:10004/login\x00",
        "http://localhost:10004/login ",
        "http://l\u043ecalhost:10004/login",  # a Cyrillic o
    ],
)
def test_a_redirect_uri_is_checked_as_it_is_sent(served: Served, redirect_uri: str) -> None:
    with served.browser() as browser:
        answer = browser.get(authorize(served, redirect_uri))
    assert answer.status_code == 400, answer.text
    assert "location" not in answer.headers  # nobody sent to the provider
    assert "without spaces or control characters" in answer.text


def started(served: Served, browser: httpx.Client) -> str:
    """A sign-in for the pages begun in `browser` and left at the provider: the state gitreg
    gave it (what only the provider and this browser's cookie know)."""
    answer = browser.get(f"{served.url}/signin/provider?next=/")
    assert answer.status_code == 302, answer.text
    (state,) = parse_qs(urlsplit(answer.headers["location"]).query)["state"]
    return state


def test_a_callback_ends_only_its_own_sign_in(served: Served) -> None:
    with served.browser() as browser:
        state = started(served, browser)
        callback = f"{served.url}/oauth/callback"
        for forged in (
            {"error": "access_denied", "state": "guessed"},
            {"code": "the-attackers-own-code", "state": "guessed"},
            {"code": "the-attackers-own-code"},
        ):
            answer = browser.get(f"{callback}?{urlencode(forged)}")
            assert answer.status_code == 400, answer.text
            assert "which goes on" in answer.text
            assert "said access_denied" not in answer.text
        # An error that names no sign-in (as some providers send one) is said, and ends nothing.
        answer = browser.get(f"{callback}?error=access_denied")
        assert answer.status_code == 400
        assert "naming no sign-in" in answer.text and "under way goes on" in answer.text
        # The person's own sign-in, under way all along, finishes.
        journey = sign_in_as(browser, f"{served.url}/signin/provider?next=/", "alice")
        assert journey.last.status_code == 200 and browser.cookies.get("gitreg_session")

    with served.browser() as browser:  # with its own state, an error ends the sign-in
        state = started(served, browser)
        answer = browser.get(f"{callback}?{urlencode({'error': 'access_denied', 'state': state})}")
        assert answer.status_code == 400 and "said access_denied" in answer.text


def test_the_same_sign_in_still_finishes_after_a_forged_callback(served: Served) -> None:
    """The forged link arrives while the person is at the provider: they come back and are in."""
    with served.browser() as browser:
        first = browser.get(f"{served.url}/signin/provider?next=/")
        at_provider = urljoin(str(first.url), first.headers["location"])
        forged = browser.get(f"{served.url}/oauth/callback?error=access_denied")
        assert forged.status_code == 400
        journey = sign_in_as(browser, at_provider, "alice")
        assert journey.last.status_code == 200, journey.last.text
        assert browser.cookies.get("gitreg_session")


@pytest.mark.parametrize("site", ["cross-site", "same-site"])
def test_another_sites_page_cannot_start_a_sign_in(served: Served, site: str) -> None:
    headers = {"Sec-Fetch-Site": site, "Sec-Fetch-Mode": "navigate"}
    with served.browser() as browser:
        for url in (f"{served.url}/signin/provider?next=/", authorize(served, REDIRECT)):
            answer = browser.get(url, headers=headers)
            assert answer.status_code == 403, answer.text
            assert "location" not in answer.headers
            assert "not from a link on another site" in answer.text


def test_refused_starts_spend_none_of_the_addresss_sign_ins(
    tmp_path: Path, provider: Provider, tls: TlsMaterial
) -> None:
    with registry(tmp_path, provider, tls) as served, served.browser() as browser:
        start = f"{served.url}/signin/provider?next=/"
        for _ in range(SIGN_INS_PER_MINUTE + 5):  # another site's page, again and again
            refused = browser.get(start, headers={"Sec-Fetch-Site": "cross-site"})
            assert refused.status_code == 403
        own_pages = {"Sec-Fetch-Site": "same-origin"}
        for _ in range(SIGN_INS_PER_MINUTE):  # the address's every sign-in is still there
            assert browser.get(start, headers=own_pages).status_code == 302
        over = browser.get(start, headers=own_pages)
        assert over.status_code == 429  # and then spent: the budget is real
        outside = browser.get(authorize(served, REDIRECT), headers={"Sec-Fetch-Site": "none"})
        assert outside.status_code == 429
