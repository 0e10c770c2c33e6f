"""Where the network mirror's read-through may go, against the real app over TLS, with local
listeners that count the connections gitreg makes: nowhere by default, only to the origins
registry.yaml allows, never where a redirect or a discovery answer points elsewhere, and never
so many at once that the rest of the registry waits."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from gitreg.process.tlscert import TlsMaterial
from tests.support.listeners import SilentListener, on_port_443
from tests.support.origin_server import Answer, ScriptedOrigin
from tests.support.provider_releases import new_key, write_key, write_release
from tests.support.servers import RegistryServer
from tests.support.tls_clients import served_over_tls

HOST = "origin.example.test"
KEY = new_key("origin")


@contextlib.contextmanager
def registry(
    tmp_path: Path, tls: TlsMaterial, mirror: str | None
) -> Iterator[tuple[RegistryServer, httpx.Client]]:
    """gitreg over TLS, hosting acme/widget 1.0.0, with `mirror` as its mirror: section (None:
    none, the default catalog)."""
    key = new_key("gitreg")
    write_key(key, tmp_path / "gitreg.asc")
    write_release(tmp_path / "releases" / "1.0.0", "widget", "1.0.0", ("linux_amd64",), signer=key)
    (tmp_path / "registry.yaml").write_text(
        "hostname: registry.example.test\ncache_dir: cache\nsigning: {keys: [gitreg.asc]}\n"
        "providers:\n  - {namespace: acme, type: widget, artifacts: releases}\n"
        + (f"mirror:\n{mirror}" if mirror is not None else "")
    )
    with served_over_tls(tmp_path / "registry.yaml", tls, timeout=60) as (server, client):
        yield server, client
        server.state.current.world.side.mirror.close()


def allowing(origin_url: str, tls: TlsMaterial, extra: str = "") -> str:
    return (
        f"  read_through: true\n  ca_file: {tls.ca_cert}\n"
        f"  origins: {{{HOST}: '{origin_url}'}}\n{extra}"
    )


def asked_hosts(client: httpx.Client) -> list[str]:
    return [h["host"] for h in client.get("/v1/status").json()["mirror_origins"]]


@pytest.fixture
def port_443() -> Iterator[SilentListener]:
    with on_port_443() as listener:
        yield listener


@pytest.mark.parametrize("mirror", [None, "  folders: []\n", f"  origins: [{HOST}]\n"])
def test_the_default_catalog_reads_through_from_nowhere(
    tmp_path: Path, tls: TlsMaterial, port_443: SilentListener, mirror: str | None
) -> None:
    with registry(tmp_path, tls, mirror) as (_, client):
        for file in ("index.json", "1.0.0.json", "terraform-provider-widget_1.0.0_linux_amd64.zip"):
            response = client.get(f"/v1/mirror/127.0.0.1/acme/widget/{file}")
            assert response.status_code == 404, response.text
            assert "read-through is off" in response.json()["errors"][0]
        assert client.get("/v1/mirror/registry.example.test/acme/widget/index.json").json() == {
            "versions": {"1.0.0": {}}
        }  # the hosted providers are served all the same
        assert asked_hosts(client) == []
    assert port_443.accepted == 0
    assert not (tmp_path / "cache" / "mirror").exists()


def test_a_host_not_named_is_refused_with_the_reason_and_costs_nothing(
    tmp_path: Path, tls: TlsMaterial, port_443: SilentListener
) -> None:
    with (
        ScriptedOrigin(tls) as origin,
        registry(tmp_path, tls, allowing(origin.url, tls)) as (
            _,
            client,
        ),
    ):
        origin.publish(KEY, "widget", {"1.0.0": ("linux_amd64",)})
        assert client.get(f"/v1/mirror/{HOST}/acme/widget/1.0.0.json").status_code == 200
        named = [f"made-up-{i}.example.test" for i in range(30)] + ["127.0.0.1", "localhost"]
        for host in named:
            response = client.get(f"/v1/mirror/{host}/acme/widget/index.json")
            assert response.status_code == 404, response.text
            reason = response.json()["errors"][0]
            assert f"not {host}" in reason and "(mirror.origins" in reason
        metrics = client.get("/metrics").text
        assert asked_hosts(client) == [origin.url.removeprefix("https://").rstrip("/")]
    assert "made-up" not in metrics and "localhost" not in metrics
    assert port_443.accepted == 0
    assert sorted(p.name for p in (tmp_path / "cache" / "mirror").iterdir()) == [HOST]


@pytest.mark.parametrize("scheme", ["https", "http"])
def test_a_redirect_to_another_host_or_port_is_never_followed(
    tmp_path: Path, tls: TlsMaterial, scheme: str
) -> None:
    with (
        SilentListener() as elsewhere,
        ScriptedOrigin(tls) as origin,
        registry(tmp_path, tls, allowing(origin.url, tls)) as (_, client),
    ):
        target = f"{scheme}://127.0.0.1:{elsewhere.port}/internal-admin/delete?id=1"
        origin.answers["/.well-known/terraform.json"] = Answer(302, headers={"Location": target})
        response = client.get(f"/v1/mirror/{HOST}/acme/widget/index.json")
        assert response.status_code == 404, response.text
        assert origin.asked["/.well-known/terraform.json"] == 1
    assert elsewhere.accepted == 0


def test_a_redirect_from_https_to_http_on_the_origin_itself_is_refused(
    tmp_path: Path, tls: TlsMaterial
) -> None:
    with (
        ScriptedOrigin(tls) as origin,
        registry(tmp_path, tls, allowing(origin.url, tls)) as (
            _,
            client,
        ),
    ):
        origin.publish(KEY, "widget", {"1.0.0": ("linux_amd64",)})
        plain = origin.url.replace("https://", "http://") + "v1/providers/acme/widget/versions"
        origin.answers["/v1/providers/acme/widget/versions"] = Answer(
            301, headers={"Location": plain}
        )
        assert client.get(f"/v1/mirror/{HOST}/acme/widget/index.json").status_code == 404
        assert origin.asked["/v1/providers/acme/widget/versions"] == 1  # and nothing after it


def test_a_redirect_within_the_origin_is_followed(tmp_path: Path, tls: TlsMaterial) -> None:
    with (
        ScriptedOrigin(tls) as origin,
        registry(tmp_path, tls, allowing(origin.url, tls)) as (
            _,
            client,
        ),
    ):
        origin.publish(KEY, "widget", {"1.0.0": ("linux_amd64",)})
        origin.answers["/.well-known/terraform.json"] = Answer(
            302, headers={"Location": "/moved/terraform.json"}
        )
        origin.json("/moved/terraform.json", {"providers.v1": "/v1/providers/"})
        response = client.get(f"/v1/mirror/{HOST}/acme/widget/index.json")
        assert response.json() == {"versions": {"1.0.0": {}}}


@pytest.mark.parametrize(
    "providers_v1",
    [
        "https://127.0.0.1:{port}/v1/providers/",  # another port
        "http://127.0.0.1:{port}/v1/providers/",  # plain HTTP, another port
        "http://127.0.0.1:{origin_port}/v1/providers/",  # plain HTTP on the origin's port
        "https://elsewhere.example.test/v1/providers/",  # a host not allowed
    ],
)
def test_a_providers_service_elsewhere_is_refused(
    tmp_path: Path, tls: TlsMaterial, providers_v1: str
) -> None:
    with (
        SilentListener() as elsewhere,
        ScriptedOrigin(tls) as origin,
        registry(tmp_path, tls, allowing(origin.url, tls)) as (_, client),
    ):
        origin.publish(KEY, "widget", {"1.0.0": ("linux_amd64",)})
        origin_port = origin.server.server_address[1]
        url = providers_v1.format(port=elsewhere.port, origin_port=origin_port)
        origin.json("/.well-known/terraform.json", {"providers.v1": url})
        response = client.get(f"/v1/mirror/{HOST}/acme/widget/index.json")
        assert response.status_code == 404, response.text
        assert origin.asked["/v1/providers/acme/widget/versions"] == 0
    assert elsewhere.accepted == 0


def test_a_package_is_downloaded_only_from_an_allowed_host(
    tmp_path: Path, tls: TlsMaterial
) -> None:
    with (
        ScriptedOrigin(tls) as files,
        ScriptedOrigin(tls) as origin,
        registry(tmp_path, tls, allowing(origin.url, tls)) as (_, client),
    ):
        ((name, _),) = origin.publish(KEY, "widget", {"1.0.0": ("linux_amd64",)}).items()
        # The zip's download_url points at a host and port registry.yaml does not name.
        download = "/v1/providers/acme/widget/1.0.0/download/linux/amd64"
        answer = json.loads(origin.answers[download].body)
        origin.json(download, {**answer, "download_url": f"{files.url}files/1.0.0/linux_amd64.zip"})
        response = client.get(f"/v1/mirror/{HOST}/acme/widget/{name}")
        assert response.status_code == 502, response.text
        assert f"is neither {HOST}'s host and port nor a download host" in response.text
        assert sum(files.asked.values()) == 0


INTERNAL = "internal.example.test"  # another origin: a private registry, with a token
SECRET = "secret-internal-token-xyz"
DOWNLOAD = "/v1/providers/acme/widget/1.0.0/download/linux/amd64"


def two_origins(origin_url: str, internal_url: str, tls: TlsMaterial) -> str:
    """The reviewer's setting: HOST, an origin whose answers an attacker writes, and INTERNAL."""
    return (
        f"  read_through: true\n  ca_file: {tls.ca_cert}\n  origins:\n    {HOST}: '{origin_url}'\n"
        f"    {INTERNAL}: {{url: '{internal_url}', token_env: GITREG_TEST_INTERNAL_TOKEN}}\n"
    )


def bend_versions(origin: ScriptedOrigin, internal: str) -> str:
    """Its versions list redirects to the other origin."""
    target = f"{internal}internal-admin/delete?id=2"
    origin.answers["/v1/providers/acme/widget/versions"] = Answer(302, headers={"Location": target})
    return "index.json"


def bend_discovery(origin: ScriptedOrigin, internal: str) -> str:
    """Its discovery names the other origin's host and port as its providers.v1 service."""
    origin.json("/.well-known/terraform.json", {"providers.v1": f"{internal}internal-admin/"})
    return "index.json"


def bend_shasums(origin: ScriptedOrigin, internal: str) -> str:
    """Its download answer puts SHA256SUMS on the other origin."""
    answer = json.loads(origin.answers[DOWNLOAD].body)
    origin.json(DOWNLOAD, {**answer, "shasums_url": f"{internal}internal-admin/delete?id=3"})
    return "1.0.0.json"


def bend_zip(origin: ScriptedOrigin, internal: str) -> str:
    """Its download answer puts the zip on the other origin."""
    answer = json.loads(origin.answers[DOWNLOAD].body)
    origin.json(DOWNLOAD, {**answer, "download_url": f"{internal}internal-admin/delete?id=4"})
    return "terraform-provider-widget_1.0.0_linux_amd64.zip"


@pytest.mark.parametrize("bend", [bend_versions, bend_discovery, bend_shasums, bend_zip])
def test_an_origins_answer_never_sends_read_through_to_another_origin(
    tmp_path: Path,
    tls: TlsMaterial,
    monkeypatch: pytest.MonkeyPatch,
    bend: Callable[[ScriptedOrigin, str], str],
) -> None:
    """Work for one origin asks that origin's own host and port, and download hosts; another
    origin named in registry.yaml (reachable at its private address, given a token) gets nothing
    from it, neither a request nor the token."""
    monkeypatch.setenv("GITREG_TEST_INTERNAL_TOKEN", SECRET)
    with (
        ScriptedOrigin(tls, token=SECRET) as internal,
        ScriptedOrigin(tls) as origin,
        registry(tmp_path, tls, two_origins(origin.url, internal.url, tls)) as (_, client),
    ):
        origin.publish(KEY, "widget", {"1.0.0": ("linux_amd64",)})
        internal.publish(KEY, "widget", {"1.0.0": ("linux_amd64",)})
        file = bend(origin, internal.url)
        response = client.get(f"/v1/mirror/{HOST}/acme/widget/{file}")
        assert response.status_code in (404, 502), response.text
        assert SECRET not in response.text
        assert sum(internal.asked.values()) == 0
        # The other origin itself is read, with its token: only its own work carries it there.
        answer = client.get(f"/v1/mirror/{INTERNAL}/acme/widget/1.0.0.json")
        assert answer.status_code == 200, answer.text
        assert not [path for path in internal.asked if "internal-admin" in path]
        assert set(internal.authorization.values()) == {f"Bearer {SECRET}"}
        assert SECRET not in client.get("/metrics").text


def test_stalled_origins_leave_the_rest_of_the_registry_answering(
    tmp_path: Path, tls: TlsMaterial
) -> None:
    with (
        SilentListener(tls) as stalled,
        registry(tmp_path, tls, allowing(f"https://127.0.0.1:{stalled.port}/", tls)) as (
            server,
            client,
        ),
        ThreadPoolExecutor(8) as pool,
    ):
        asked = [
            pool.submit(client.get, f"/v1/mirror/{HOST}/acme/t{i}/index.json") for i in range(8)
        ]
        read_through = server.state.current.world.side.mirror.read_through
        assert read_through is not None
        cap = read_through.settings.per_origin
        refused: list[httpx.Response] = []
        # The requests past the origin's cap are answered at once, 503 with Retry-After.
        for _ in range(200):  # bounded: until the four over the cap have their answers
            refused = [f.result() for f in asked if f.done()]
            if len(refused) >= 8 - cap and stalled.accepted >= cap:
                break
            time.sleep(0.05)
        assert [r.status_code for r in refused] == [503] * (8 - cap)
        assert all(r.headers["retry-after"] == "5" for r in refused)
        assert "mirror.per_origin" in refused[0].json()["errors"][0]
        assert stalled.accepted == cap  # the others never connected
        # The hosted providers and a reload do not wait for the stalled ones: both are
        # answered while every stalled read-through is still waiting on its 30 s deadline
        # (an order of events, not a stopwatch: the 1 s bound is met with room).
        hosted = client.get("/v1/mirror/registry.example.test/acme/widget/index.json")
        assert hosted.json() == {"versions": {"1.0.0": {}}}
        assert server.reload()
        assert sum(not f.done() for f in asked) == cap  # still stalled, all of them
        stalled.close()  # the origin hangs up: the stalled ones end, as a miss, never a 500
        statuses = sorted(f.result(timeout=30).status_code for f in asked)
        assert statuses == [404] * cap + [503] * (8 - cap)
