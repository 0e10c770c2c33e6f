"""Nothing waits on a forge's release list: a start serves what cache_dir holds of a provider's
releases at once and reads the forge beside (a held forge delays no answer); a new replica, with
none in cache_dir, answers 503 and is not ready until its first read ends; what the reads cost
is counted in /v1/status and /metrics, labelled by the provider, never by a token."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import httpx
import pgpy
import pytest

from gitreg.catalog.load import load_catalog
from gitreg.catalog.settings import TlsFiles
from gitreg.process.tlscert import TlsMaterial
from gitreg.providers.hosted import Providers
from tests.support.forge_providers import SECRET, TOKEN, NoRepositories, released, write_registry
from tests.support.forges import Fault, StandInForge
from tests.support.provider_releases import new_key, write_key
from tests.support.servers import RegistryServer, wait_until
from tests.support.state import serving_state
from tests.support.tls_clients import served_over_tls, trusting

ASKED = "/v1/providers/acme/widget/versions"


@pytest.fixture
def key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> pgpy.PGPKey:
    monkeypatch.setenv("WIDGET_FORGE_TOKEN", TOKEN)
    monkeypatch.setenv("HOOK_SECRET", SECRET)
    signer = new_key("ci")
    write_key(signer, tmp_path / "ci.asc", public=True)
    return signer


def _serving(tmp_path: Path, forge: StandInForge, tls: TlsMaterial) -> RegistryServer:
    """gitreg as `serve` starts: answering at once, its background work running."""
    catalog = load_catalog(write_registry(tmp_path, forge, tls))
    files = TlsFiles(tls.certfile, tls.keyfile)
    return RegistryServer(catalog, files, refresh=True, fetch_first=None)


def test_a_held_forge_does_not_delay_the_first_answer_of_a_fetched_provider(
    tmp_path: Path, tls: TlsMaterial, key: pgpy.PGPKey
) -> None:
    with StandInForge(
        "github", token=TOKEN, tls=tls, releases=[released(tmp_path, key, "1.0.0")]
    ) as forge:
        catalog = load_catalog(write_registry(tmp_path, forge, tls))
        serving_state(catalog)  # a first life: 1.0.0 fetched into cache_dir
        forge.releases = [*forge.releases, released(tmp_path, key, "1.1.0")]
        connected = forge.connections
        context = trusting(tls.ca_cert)
        with ExitStack() as held:
            held.enter_context(forge.held())  # every answer of the forge waits until it ends
            server = _serving(tmp_path, forge, tls)
            with server, httpx.Client(base_url=server.url, verify=context, timeout=10) as client:
                reads = server.state.background.release_reads
                # The start's read is under way, held by the forge...
                wait_until(lambda: forge.connections > connected, 30, "the forge asked")
                assert reads.busy()
                # ...and what cache_dir holds answers meanwhile, and the replica is ready.
                wait_until(lambda: client.get(ASKED).status_code == 200, 30, "an answer")
                listed = client.get(ASKED).json()["versions"]
                assert [v["version"] for v in listed] == ["1.0.0"]
                assert client.get("/readyz").status_code == 200
                assert reads.busy()
                # The read ends before the server and the forge do: a stop leaves a read under
                # way to its thread, which would meet a forge gone (and leak a socket in
                # Python 3.11's ssl, whose reset before a handshake leaves its socket open).
                held.close()
                wait_until(lambda: not reads.busy(), 30, "the read ended")


def test_a_replica_without_the_releases_answers_503_until_its_first_read(
    tmp_path: Path, tls: TlsMaterial, key: pgpy.PGPKey
) -> None:
    with StandInForge(
        "gitlab", token=TOKEN, tls=tls, releases=[released(tmp_path, key, "1.0.0")]
    ) as forge:
        context = trusting(tls.ca_cert)
        with ExitStack() as held:
            # Held from before the start: its first read cannot end before the test looks.
            held.enter_context(forge.held())
            server = _serving(tmp_path, forge, tls)
            with server, httpx.Client(base_url=server.url, verify=context, timeout=10) as client:
                wait_until(lambda: server.state.background.release_reads.busy(), 30, "a read")
                assert client.get(ASKED).status_code == 503
                ready = client.get("/readyz")
                assert ready.status_code == 503
                assert {
                    "provider": "acme/widget",
                    "reason": "its releases are being read from its forge (none in cache_dir yet)",
                } in ready.json()["waiting"]
                held.close()
                wait_until(lambda: client.get(ASKED).status_code == 200, 30, "the first read")
                versions = client.get(ASKED).json()["versions"]
                assert [v["version"] for v in versions] == ["1.0.0"]
                wait_until(lambda: client.get("/readyz").status_code == 200, 30, "ready")


def test_the_reads_are_counted_in_status_and_metrics(
    tmp_path: Path, tls: TlsMaterial, key: pgpy.PGPKey
) -> None:
    with StandInForge(
        "gitea", token=TOKEN, tls=tls, releases=[released(tmp_path, key, "1.0.0")]
    ) as forge:
        forge.release_faults = [Fault(429, headers={"Retry-After": "0"})]
        catalog = load_catalog(write_registry(tmp_path, forge, tls))
        providers = Providers(catalog, NoRepositories())
        providers.refresh(poll_forges=True)  # a rate limit: a wait, nothing fetched
        with served_over_tls(catalog, tls) as (_, client):  # read again
            (report,) = client.get("/v1/status").json()["providers"]
            metrics = client.get("/metrics").text
    assert report["versions"] == ["1.0.0"]
    assert report["releases"] == {
        "forge": f"gitea {forge.url} acme/terraform-provider-widget",
        "read": True,
        "reads": 1,
        # The list, the release's two zips, SHA256SUMS, .sig, manifest, and .gitreg.yaml at its tag.
        "api_calls": 1 + 5 + 1,
        "rate_limit_waits": 0,
        "errors": 0,
        "fetched": 1,
        "refused": 0,
    }
    counted = {
        "reads": 1,
        "api_calls": 7,
        "rate_limit_waits": 0,
        "errors": 0,
        "fetches": 1,
        "fetches_refused": 0,
    }
    for name, value in counted.items():
        line = f'gitreg_provider_release_{name}_total{{provider="acme/widget"}} {value:.1f}'
        assert line in metrics, name
    assert TOKEN not in metrics and TOKEN not in str(report)
    # The first process's read met the rate limit: counted as a wait, not an error.
    fetcher = providers.fetchers[("acme", "widget")]
    assert (fetcher.stats.rate_limit_waits, fetcher.stats.errors, fetcher.stats.fetched) == (
        1,
        0,
        0,
    )
