"""A real `gitreg serve --log-level debug` over TLS, asked over HTTP/2 with every kind of secret a
client sends or is given: a bearer token, Basic credentials on /v2/, an MCP client's token, a
person's sign-in through a real OpenID provider (its cookies, its code, the token it ends with)
and the client secret gitreg sends the provider. gitreg's own debug lines are written; no
library's, and none of the secrets, in any line."""

from __future__ import annotations

import base64
import hashlib
import json
import signal
import ssl
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest

from gitreg.process.tlscert import TlsMaterial
from tests.support.login_registry import SECRET_ENV, LoginCatalog
from tests.support.oidc_provider import Provider, oidc_provider, sign_in_as
from tests.support.servers import answers, free_port, start_serve, wait_until
from tests.support.tls_clients import trusting

READER = "reader-secret-0123456789abcdef"  # no prefix: only holding hpack quiet hides it
ROBOT = "robot-secret-0123456789abcdef"  # the password of an OCI client's Basic credentials
ASSISTANT = "assistant-secret-0123456789ab"  # an MCP client's
CLIENT_SECRET = "client-secret-gitreg-sends-the-provider"
REDIRECT = "http://localhost:10007/login"
VERIFIER = "a-verifier-as-terraform-makes-one-0123456789-padded"


def sha(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass
class Run:
    base: str
    verify: ssl.SSLContext
    log: Path
    provider: Provider
    secrets: set[str] = field(default_factory=set)  # every value no line may hold

    def client(self, **kwargs: object) -> httpx.Client:
        """An HTTP/2 client that notes every cookie and code it is handed as a secret."""

        def note(response: httpx.Response) -> None:
            for header in response.headers.get_list("set-cookie"):
                for morsel in SimpleCookie(header).values():
                    if len(morsel.value) >= 8:
                        self.secrets.add(morsel.value)
            location = response.headers.get("location", "")
            self.secrets.update(parse_qs(urlsplit(location).query).get("code", []))

        return httpx.Client(
            base_url=self.base,
            verify=self.verify,
            http2=True,
            timeout=30,
            event_hooks={"response": [note]},
            **kwargs,  # type: ignore[arg-type]
        )


CATALOG = LoginCatalog(
    tokens={"reader": sha(READER), "robot": sha(ROBOT), "assistant": sha(ASSISTANT)},
    top=("oci: {enabled: true}", "mcp: {enabled: true}"),
)


@pytest.fixture
def run(tmp_path: Path, tls: TlsMaterial, monkeypatch: pytest.MonkeyPatch) -> Iterator[Run]:
    monkeypatch.setenv(SECRET_ENV, CLIENT_SECRET)
    verify = trusting(tls.ca_cert)
    with oidc_provider(tls) as provider:
        provider.person("alice", email="alice@acme.example", groups=["platform"])
        port = free_port()
        config = CATALOG.write(tmp_path, provider.url, port, tls.ca_cert)
        log = tmp_path / "serve.log"
        with log.open("w") as output:
            process = start_serve(config, port, tls, output, extra=("--log-level", "debug"))
        base = f"https://127.0.0.1:{port}"
        try:
            wait_until(
                lambda: process.poll() is not None or answers(f"{base}/readyz", verify),
                60,
                "gitreg ready",
            )
            assert process.poll() is None, log.read_text()
            yield Run(base, verify, log, provider, {READER, ROBOT, ASSISTANT, CLIENT_SECRET})
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=60)


def challenge_of(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def test_at_debug_no_secret_reaches_the_log_over_http2(run: Run) -> None:
    with run.client() as client:
        versions = client.get(
            "/v1/modules/platform/net/aws/versions", headers={"Authorization": f"Bearer {READER}"}
        )
        assert versions.status_code == 200 and versions.http_version == "HTTP/2"

        basic = base64.b64encode(f"oras:{ROBOT}".encode()).decode()
        run.secrets.add(basic)
        traded = client.get("/v2/token", headers={"Authorization": f"Basic {basic}"})
        assert traded.status_code == 200, traded.text
        oci_token = traded.json()["token"]
        run.secrets.add(oci_token)
        manifest = client.get(
            "/v2/platform/net/aws/manifests/1.0.0",
            headers={
                "Authorization": f"Bearer {oci_token}",
                "Accept": "application/vnd.oci.image.manifest.v1+json",
            },
        )
        assert manifest.status_code == 200, manifest.text

        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        listed = client.post(
            "/mcp",
            content=json.dumps(call),
            headers={
                "Authorization": f"Bearer {ASSISTANT}",
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2025-06-18",
            },
        )
        assert listed.status_code == 200, listed.text
        assert "search_modules" in listed.text or "tools" in listed.text

    with run.client() as browser:  # a person signs in for the pages: a session cookie
        journey = sign_in_as(browser, f"{run.base}/signin/provider?next=/", "alice")
        assert journey.last.status_code == 200, journey.last.text
        session = browser.cookies.get("gitreg_session")
        assert session, "signed in"
        run.secrets.add(session)
        assert browser.get("/v1/modules/platform/net/aws/versions").status_code == 200

    with run.client() as browser:  # and through `terraform login`'s protocol: a token
        query = {
            "client_id": "terraform-cli",
            "code_challenge": challenge_of(VERIFIER),
            "code_challenge_method": "S256",
            "redirect_uri": REDIRECT,
            "response_type": "code",
            "state": "terraform-state",
        }
        journey = sign_in_as(browser, f"{run.base}/oauth/authorize?{urlencode(query)}", "alice")
        assert journey.leads_to is not None, journey.last.text
        (code,) = parse_qs(urlsplit(journey.leads_to).query)["code"]
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT,
            "client_id": "terraform-cli",
            "code_verifier": VERIFIER,
        }
        issued = browser.post("/oauth/token", data=form)
        assert issued.status_code == 200, issued.text
        token = issued.json()["access_token"]
        run.secrets.add(token)
        answer = browser.get(
            "/v1/modules/platform/net/aws/versions", headers={"Authorization": f"Bearer {token}"}
        )
        assert answer.status_code == 200

    text = run.log.read_text()
    assert " DEBUG gitreg." in text, "gitreg's own debug lines are written"
    assert not [ln for ln in text.splitlines() if " DEBUG " in ln and " DEBUG gitreg" not in ln]
    leaked = sorted(secret for secret in run.secrets if secret in text)
    assert not leaked, leaked
