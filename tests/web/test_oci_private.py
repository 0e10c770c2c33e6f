"""The OCI API behind the gate, as modules.v1 is: public namespaces anonymous, a Bearer
challenge whose realm is the registry's own /v2/token (traded for Basic with a gitreg token),
the token sent straight as Bearer, and a namespace outside a token's scope refused the same way
whether it holds the repository or not."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from gitreg.process.tlscert import TlsMaterial
from tests.support.oci_client import MANIFEST, Refused, TofuOci
from tests.support.private_registry import OTHER, READER, WIDGET_ZIP, write_private_registry
from tests.support.tls_clients import served_over_tls


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory, tls: TlsMaterial) -> Iterator[httpx.Client]:
    root = tmp_path_factory.mktemp("oci-private")
    path = write_private_registry(root, "  signing_key_file: new.key\n")
    with path.open("a") as config:
        config.write("oci: {enabled: true}\n")
    with served_over_tls(path, tls) as (_, client):
        yield client


def test_a_public_namespace_is_pulled_anonymously(client: httpx.Client) -> None:
    tofu = TofuOci(client)
    assert "main.tf" in tofu.module("open/single/generic", "1.0.0").namelist()
    assert tofu.token is None


def test_a_private_namespace_challenges_with_a_realm_on_the_same_host(client: httpx.Client) -> None:
    answer = client.head("/v2/secret/single/generic/manifests/1.0.0")
    assert answer.status_code == 401
    host = f"127.0.0.1:{client.base_url.port}"
    assert answer.headers["www-authenticate"] == (
        f'Bearer realm="https://{host}/v2/token",service="{host}",'
        'scope="repository:secret/single/generic:pull"'
    )
    listed = client.get("/v2/secret/single/generic/tags/list")
    assert listed.json()["errors"][0]["code"] == "UNAUTHORIZED"
    with pytest.raises(Refused):
        TofuOci(client).module("secret/single/generic", "1.0.0")  # no credentials to offer


def test_basic_credentials_are_traded_at_the_realm(client: httpx.Client) -> None:
    tofu = TofuOci(client, ("anything", READER))
    assert "main.tf" in tofu.module("secret/single/generic", "1.0.0").namelist()
    assert tofu.token == READER
    statuses = [status for _, _, status in tofu.requests]
    assert statuses == [200, 401, 200, 200, 200]  # ping, challenge, HEAD, GET, blob


def test_a_token_sent_as_bearer_needs_no_realm(client: httpx.Client) -> None:
    tofu = TofuOci(client)
    tofu.token = READER
    assert tofu.module("secret/vpc/generic", "1.0.0").namelist()
    blob = tofu.requests[-1][1]
    answer = client.get(blob, headers={"Authorization": f"Bearer {READER}"})
    assert answer.headers["cache-control"].startswith("private")


def test_the_realm_refuses_what_the_gate_refuses(client: httpx.Client) -> None:
    anonymous = client.get("/v2/token").json()["token"]
    assert anonymous == "gitreg-anonymous"
    as_anonymous = {"Authorization": f"Bearer {anonymous}"}
    assert client.get("/v2/open/single/generic/tags/list", headers=as_anonymous).status_code == 200
    refused = client.get("/v2/secret/single/generic/tags/list", headers=as_anonymous)
    assert refused.status_code == 401
    wrong = client.get("/v2/token", auth=("x", "not-a-token"))
    assert wrong.status_code == 401
    assert wrong.json()["errors"][0]["code"] == "UNAUTHORIZED"
    assert "not-a-token" not in wrong.text


def test_outside_its_scope_a_token_learns_nothing(client: httpx.Client) -> None:
    other = {"Authorization": f"Bearer {OTHER}"}
    answers = [
        client.get(f"/v2/secret/{name}/generic/{what}", headers=other)
        for name in ("single", "nothing")
        for what in ("tags/list", "manifests/1.0.0", f"blobs/sha256:{'0' * 64}")
    ]
    assert {a.status_code for a in answers} == {403}
    assert {a.json()["errors"][0]["code"] for a in answers} == {"DENIED"}
    messages = {a.json()["errors"][0]["message"].replace("nothing", "single") for a in answers}
    assert len(messages) == 1
    provider = client.get("/v2/providers/secret/widget/tags/list", headers=other)
    assert provider.status_code == 403


def test_a_digest_opens_nothing_of_another_repository(client: httpx.Client) -> None:
    reader = TofuOci(client)
    reader.token = READER
    secret = reader.resolve("secret/vpc/generic", "1.0.0", MANIFEST)
    under_open = client.get(f"/v2/open/single/generic/manifests/{secret.digest}")
    assert under_open.status_code == 404
    assert under_open.json()["errors"][0]["code"] == "MANIFEST_UNKNOWN"


def test_a_private_provider_through_the_oci_mirror(client: httpx.Client) -> None:
    tofu = TofuOci(client, ("oauth2", READER))
    assert tofu.provider_versions("providers/secret/widget") == ["1.0.0"]
    data = tofu.provider_zip("providers/secret/widget", "1.0.0", "linux", "amd64")
    files = client.get(
        "/v1/providers/secret/widget/1.0.0/download/linux/amd64",
        headers={"Authorization": f"Bearer {READER}"},
    ).json()
    assert files["filename"] == WIDGET_ZIP
    assert client.get(files["download_url"]).content == data
