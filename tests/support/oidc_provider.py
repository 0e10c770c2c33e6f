"""A real OpenID provider process on 127.0.0.1 for auth.login's tests: `oidc-provider-mock` (its
Flask app under uvicorn, over TLS with the tests' CA, nonces required), its people set with
`PUT /users/<sub>`; and the person's part of a sign-in, played with an HTTP client that keeps
cookies: redirects followed, the provider's form posted as `sub`, until the way leads off the
registry and the provider (Terraform's listener on localhost, or the page signed in to)."""

from __future__ import annotations

import contextlib
import ssl
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

import httpx
import pytest

from gitreg.process.tlscert import TlsMaterial
from tests.support.servers import answers, free_port, wait_until
from tests.support.tls_clients import trusting

# The provider, as `oidc-provider-mock` runs it, with TLS; its own log on stderr.
_RUNNER = """
import sys
import uvicorn
import oidc_provider_mock

port, certfile, keyfile = int(sys.argv[1]), sys.argv[2], sys.argv[3]
app = oidc_provider_mock.app(require_nonce=True, issue_refresh_token=False)
uvicorn.run(app, interface="wsgi", host="127.0.0.1", port=port, ssl_certfile=certfile,
            ssl_keyfile=keyfile, log_level="warning")
"""


@dataclass
class Provider:
    url: str  # the issuer: https://127.0.0.1:PORT
    process: subprocess.Popen[bytes]
    verify: ssl.SSLContext

    def person(self, sub: str, **claims: object) -> None:
        """Who signs in as `sub`, with these claims in their ID token."""
        answer = httpx.put(f"{self.url}/users/{sub}", json=claims, verify=self.verify, timeout=10)
        assert answer.status_code == 204, answer.text

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


@contextlib.contextmanager
def oidc_provider(tls: TlsMaterial) -> Iterator[Provider]:
    pytest.importorskip("oidc_provider_mock", reason="oidc-provider-mock is not installed")
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-c", _RUNNER, str(port), str(tls.certfile), str(tls.keyfile)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    verify = trusting(tls.ca_cert)
    provider = Provider(f"https://127.0.0.1:{port}", process, verify)
    try:
        discovery = f"{provider.url}/.well-known/openid-configuration"
        wait_until(lambda: answers(discovery, verify), 30, "the OpenID provider to answer")
        yield provider
    finally:
        provider.stop()


@dataclass(frozen=True)
class Journey:
    """Where a person's sign-in led: the last answer on the registry or the provider, and the
    address it sent the browser on to (None: it stopped there)."""

    last: httpx.Response
    leads_to: str | None


def sign_in_as(client: httpx.Client, url: str, sub: str, deny: bool = False) -> Journey:
    """Follow `url` as a browser would, signing in at the provider as `sub` (or denying), until
    an answer is no redirect or leads off the registry and the provider: to http://localhost
    (Terraform's listener), which is not asked."""
    response = client.get(url)
    for _ in range(12):  # a sign-in is a handful of hops
        if response.is_redirect:
            target = urljoin(str(response.url), response.headers["location"])
            if urlsplit(target).scheme == "http":
                return Journey(response, target)
            response = client.get(target)
        elif response.status_code == 200 and "/oauth2/authorize" in response.url.path:
            form = {"action": "deny"} if deny else {"sub": sub}
            response = client.post(str(response.url), data=form)
        else:
            return Journey(response, None)
    raise AssertionError(f"the sign-in did not end within 12 hops (at {response.url})")
