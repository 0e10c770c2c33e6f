"""An OIDC issuer on 127.0.0.1 for each test, the auth.oidc entries that name it, and a verifier."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gitreg.auth.oidc import OidcVerifier
from gitreg.catalog.auth_settings import OidcIssuer
from gitreg.process.tlscert import TlsMaterial
from tests.support.oidc_issuer import AUDIENCE, Clock, Issuer
from tests.support.origin_server import ScriptedOrigin


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def issuer(tls: TlsMaterial, clock: Clock, caplog: pytest.LogCaptureFixture) -> Iterator[Issuer]:
    caplog.set_level("DEBUG")
    with ScriptedOrigin(tls) as origin:
        made = Issuer(origin, clock)
        yield made
    for token in made.minted:  # no token, nor its signature, is ever logged
        signature = token.split(".")[2]
        assert token not in caplog.text and (not signature or signature not in caplog.text)


def entries(issuer: Issuer, tls: TlsMaterial) -> tuple[OidcIssuer, ...]:
    return (
        OidcIssuer(
            name="deploy",
            issuer=issuer.url,
            audience=AUDIENCE,
            claims=(("namespace_path", "platform"), ("ref_protected", "true")),
            read=("shared-*",),
            mirror=True,
            ca_file=tls.ca_cert,
        ),
        OidcIssuer(
            name="ci",
            issuer=issuer.url,
            audience=AUDIENCE,
            read=("{namespace_path}", "ci-{project_id}"),
            ca_file=tls.ca_cert,
        ),
        OidcIssuer(
            name="other-audience",
            issuer=issuer.url,
            audience="other",
            read=("*",),
            ops=True,
            ca_file=tls.ca_cert,
        ),
    )


@pytest.fixture
def verifier(issuer: Issuer, tls: TlsMaterial, clock: Clock) -> Iterator[OidcVerifier]:
    made = OidcVerifier(entries(issuer, tls), clock)
    yield made
    made.close()
