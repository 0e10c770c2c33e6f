"""Installs counted over real HTTP against the real app, in a real SQLite file: each kind of
install answer (modules.v1 download, kept or not; providers.v1 download; the network mirror's
archive) counted once by version, principal and client; HEADs and archives not; the counts
read back in the public registry's shapes, kept across a restart, never across namespaces; and a
store out of reach losing counts, never a request."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from gitreg.state.download_counts import PrincipalCount, today
from tests.support.counted_registry import (
    HOSTNAME,
    MIRROR,
    OPS,
    OTHER,
    READER,
    TERRAFORM,
    TOFU,
    WIDGET_ZIP,
    bearer,
    write_counted_registry,
)
from tests.support.servers import RegistryServer
from tests.support.site_snippets import claimed

OPEN = "/v1/modules/open/single/generic"
SECRET = "/v1/modules/secret/single/generic"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    write_counted_registry(tmp_path)
    return tmp_path


@pytest.fixture
def server(root: Path) -> Iterator[RegistryServer]:
    with RegistryServer(load_catalog(root / "registry.yaml")) as running:
        yield running


def client(server: RegistryServer) -> httpx.Client:
    return httpx.Client(base_url=server.url, timeout=20)


def principals(server: RegistryServer, kind: str, address: str) -> list[PrincipalCount]:
    server.state.downloads.write()
    return server.state.downloads.store.principals(kind, address)  # type: ignore[arg-type]


def install(http: httpx.Client, path: str, headers: dict[str, str]) -> None:
    answer = http.get(path, headers=headers)
    assert answer.status_code in (200, 204), answer.text


def test_each_install_answer_is_counted_once(server: RegistryServer) -> None:
    with client(server) as http:
        install(http, f"{OPEN}/1.0.0/download", TERRAFORM)
        kept = server.state.kept.get(server.state.current.world, f"{OPEN}/1.0.0/download")
        assert kept is not None  # the next is answered before routing, and counted there
        install(http, f"{OPEN}/1.0.0/download", TERRAFORM)
        install(http, f"{OPEN}/v1.1.0/download", TOFU)
        install(http, f"{SECRET}/1.0.0/download", bearer(READER, TOFU))
        install(http, f"{SECRET}/1.0.0/download", bearer(READER, {"User-Agent": "curl/8.0"}))
        assert http.head(f"{OPEN}/1.0.0/download", headers=TERRAFORM).status_code in (200, 405)
        location = http.get(f"{OPEN}/1.0.0/download").headers["x-terraform-get"]
        archive = http.get(location.split("?")[0], headers=TERRAFORM)  # not an install of its own
        assert archive.status_code == 200
        install(http, "/v1/providers/open/widget/1.0.0/download/linux/amd64", TERRAFORM)
        install(http, "/v1/providers/secret/widget/1.0.0/download/linux/amd64", bearer(READER))
        mirror = f"/v1/mirror/{HOSTNAME}/open/widget/{WIDGET_ZIP}"
        install(http, mirror, bearer(MIRROR))

    today_ = today()
    assert principals(server, "module", "open/single/generic") == [
        PrincipalCount("anonymous", "1.0.0", "terraform", "1.11.4", 2, today_),
        PrincipalCount("anonymous", "1.0.0", "other", "", 1, today_),
        PrincipalCount("anonymous", "1.1.0", "opentofu", "1.10.0", 1, today_),
    ]
    assert principals(server, "module", "secret/single/generic") == [
        PrincipalCount("reader", "1.0.0", "opentofu", "1.10.0", 1, today_),
        PrincipalCount("reader", "1.0.0", "other", "", 1, today_),
    ]
    assert principals(server, "provider", "open/widget") == [
        PrincipalCount("anonymous", "1.0.0", "terraform", "1.11.4", 1, today_),
        PrincipalCount("mirror", "1.0.0", "terraform", "1.11.4", 1, today_),
    ]
    assert principals(server, "provider", "secret/widget") == [
        PrincipalCount("reader", "1.0.0", "terraform", "1.11.4", 1, today_),
    ]
    store = server.state.downloads.store
    assert store.downloaded("module", "secret/single/generic", "1.0.0", "reader")
    assert not store.downloaded("module", "secret/single/generic", "1.1.0", "reader")
    assert not store.downloaded("module", "secret/single/generic", "1.0.0", "ops")


def test_counts_are_answered_as_the_public_registry_does(server: RegistryServer) -> None:
    with client(server) as http:
        for _ in range(3):
            install(http, f"{OPEN}/1.0.0/download", TERRAFORM)
        install(http, f"{OPEN}/1.1.0/download", TERRAFORM)
        server.state.downloads.write()
        summary = http.get(f"{OPEN}/downloads/summary").json()
        assert summary == {
            "data": {
                "type": "module-downloads-summary",
                "id": "open/single/generic",
                "attributes": {"week": 4, "month": 4, "year": 4, "total": 4},
            }
        }
        with claimed("usage.md", "test_counts_are_answered_as_the_public_registry_does") as page:
            shown = json.loads(page.take("json", "module-downloads-summary"))
        assert shown["data"].keys() == summary["data"].keys()
        assert shown["data"]["attributes"].keys() == summary["data"]["attributes"].keys()
        details = http.get(OPEN).json()
        assert details["downloads"] == 4
        assert details["version_downloads"] == {"1.1.0": 1, "1.0.0": 3}
        assert "downloaded_by" not in details  # anyone's: counts only
        listed = http.get("/v1/modules", params={"q": "single"}).json()["modules"]
        assert [(m["id"], m["downloads"]) for m in listed] == [("open/single/generic/1.1.0", 4)]


def test_counts_are_kept_across_a_restart(root: Path) -> None:
    catalog = load_catalog(root / "registry.yaml")
    with RegistryServer(catalog) as first, client(first) as http:
        install(http, f"{OPEN}/1.0.0/download", TERRAFORM)
        install(http, f"{OPEN}/1.0.0/download", TERRAFORM)
    # Stopped: its lifespan wrote what it counted, with no write asked for.
    assert (catalog.cache_dir / "downloads.sqlite3").is_file()
    with RegistryServer(catalog) as second, client(second) as http:
        summary = http.get(f"{OPEN}/downloads/summary").json()["data"]["attributes"]
        assert summary["total"] == 2
        install(http, f"{OPEN}/1.0.0/download", TERRAFORM)
        second.state.downloads.write()
        assert http.get(f"{OPEN}/downloads/summary").json()["data"]["attributes"]["week"] == 3


def test_who_downloaded_is_shown_to_ops_tokens_alone(server: RegistryServer) -> None:
    with client(server) as http:
        install(http, f"{SECRET}/1.0.0/download", bearer(READER))
        server.state.downloads.write()
        assert "downloaded_by" not in http.get(SECRET, headers=bearer(READER)).json()
        shown = http.get(SECRET, headers=bearer(OPS)).json()["downloaded_by"]
        assert shown == [
            {
                "principal": "reader",
                "version": "1.0.0",
                "client": "terraform",
                "client_version": "1.11.4",
                "downloads": 1,
                "last_day": time.strftime("%Y-%m-%d", time.gmtime()),
            }
        ]


def test_readers_see_who_downloaded_when_the_setting_says_so(root: Path) -> None:
    write_counted_registry(root, "  show_principals: true\n")
    with RegistryServer(load_catalog(root / "registry.yaml")) as server, client(server) as http:
        install(http, f"{SECRET}/1.0.0/download", bearer(READER))
        install(http, f"{OPEN}/1.0.0/download", TERRAFORM)
        server.state.downloads.write()
        shown = http.get(SECRET, headers=bearer(READER)).json()["downloaded_by"]
        assert [p["principal"] for p in shown] == ["reader"]
        # Anyone is no one in particular: not shown who downloaded, even of a public module.
        assert "downloaded_by" not in http.get(OPEN).json()


def test_no_count_crosses_a_namespace(server: RegistryServer) -> None:
    with client(server) as http:
        install(http, f"{SECRET}/1.0.0/download", bearer(READER))
        server.state.downloads.write()
        for path in (
            f"{SECRET}/downloads/summary",
            "/v1/modules/secret/absent/generic/downloads/summary",
        ):
            refused = http.get(path, headers=bearer(OTHER))
            assert refused.status_code == 403, path
            assert "downloads" not in refused.text and "reader" not in refused.text
            assert http.get(path).status_code == 401
        listed = http.get("/v1/modules", headers=bearer(OTHER)).json()["modules"]
        assert [m["id"] for m in listed] == ["open/single/generic/1.1.0"]
        assert listed[0]["downloads"] == 0
        reader = http.get(f"{SECRET}/downloads/summary", headers=bearer(READER))
        assert reader.json()["data"]["attributes"]["total"] == 1


def test_counting_off_counts_nothing(root: Path) -> None:
    with claimed("usage.md", "test_counting_off_counts_nothing") as page:
        section = page.take("yaml", "downloads:")
    assert section == "downloads: {enabled: false}\n"
    write_counted_registry(root, "  enabled: false\n")
    with RegistryServer(load_catalog(root / "registry.yaml")) as server, client(server) as http:
        install(http, f"{OPEN}/1.0.0/download", TERRAFORM)
        server.state.downloads.write()
        assert server.state.downloads.status().counted == 0
        assert http.get(f"{OPEN}/downloads/summary").json()["data"]["attributes"]["total"] == 0


def test_a_store_out_of_reach_loses_counts_never_a_request(root: Path) -> None:
    catalog = load_catalog(root / "registry.yaml")
    catalog.cache_dir.mkdir(parents=True, exist_ok=True)
    (catalog.cache_dir / "downloads.sqlite3").write_bytes(b"not a database, " * 512)
    with RegistryServer(catalog) as server, client(server) as http:
        for _ in range(3):
            install(http, f"{OPEN}/1.0.0/download", TERRAFORM)
        server.state.downloads.write()
        status = http.get("/v1/status", headers=bearer(OPS)).json()["downloads"]
        assert status["counted"] == 3
        assert status["written"] == 0
        assert (status["lost_events"], status["lost_batches"]) == (3, 1)
        assert "not a database" in status["problem"]
        metrics = http.get("/metrics", headers=bearer(OPS)).text
        assert "gitreg_downloads_lost_total 3.0" in metrics
        # The counts' readers answer too: nothing counted, rather than an error.
        assert http.get(OPEN).json()["downloads"] == 0
        assert http.get(f"{OPEN}/downloads/summary").status_code == 503
        install(http, f"{OPEN}/1.0.0/download", TERRAFORM)


def test_an_oci_manifest_by_tag_is_an_install_by_digest_is_not(root: Path) -> None:
    path = root / "registry.yaml"
    path.write_text(path.read_text() + "oci: {enabled: true}\n")
    with RegistryServer(load_catalog(path)) as server, client(server) as http:
        tofu = {**TOFU, "Accept": "application/vnd.oci.image.manifest.v1+json"}
        manifest = http.get("/v2/open/single/generic/manifests/1.0.0", headers=tofu)
        assert manifest.status_code == 200, manifest.text
        digest = manifest.headers["docker-content-digest"]
        assert http.head("/v2/open/single/generic/manifests/1.0.0", headers=tofu).status_code == 200
        by_digest = http.get(f"/v2/open/single/generic/manifests/{digest}", headers=tofu)
        assert by_digest.status_code == 200
        index = http.get("/v2/providers/open/widget/manifests/1.0.0", headers=tofu)
        assert index.status_code == 200, index.text
        assert principals(server, "module", "open/single/generic") == [
            PrincipalCount("anonymous", "1.0.0", "opentofu", "1.10.0", 1, today())
        ]
        assert principals(server, "provider", "open/widget") == [
            PrincipalCount("anonymous", "1.0.0", "opentofu", "1.10.0", 1, today())
        ]
