"""A server answers from its first second: while its clones are read, `/healthz` is 200, `/readyz`
says what it still reads, and a module not read yet answers 503 with Retry-After, never 404; then
everything is served as read."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from gitreg.git.location import RepoLocation
from gitreg.modules.sync import ModuleSync
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import RegistryServer, wait_until


def test_the_port_answers_while_the_clones_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    GitRepo(tmp_path / "r").release("v1.0.0", module_files("1"))
    config = tmp_path / "registry.yaml"
    config.write_text(
        # No fresh reads: a request for a module would read its repository itself.
        f"cache_dir: cache\nrefresh_interval: 1h\nfresh_reads: 0\nmodules:\n"
        f"  - {{namespace: a, name: m, system: x, repo: {tmp_path / 'r'}}}\n"
    )
    catalog = load_catalog(config)
    ModuleSync(catalog).refresh()  # a warm clone, as after a restart
    reading, go_on = threading.Event(), threading.Event()
    read_clones = ModuleSync.read_clones

    def held(sync: ModuleSync, locations: Iterable[RepoLocation] | None = None) -> int:
        reading.set()  # a long start: 10,000 modules take a while
        go_on.wait(30)
        return read_clones(sync, locations)

    monkeypatch.setattr(ModuleSync, "read_clones", held)
    with (
        RegistryServer(catalog, fetch_first=None) as server,
        httpx.Client(base_url=server.url, timeout=10) as client,
    ):
        try:
            assert reading.wait(10)
            assert client.get("/healthz").status_code == 200
            ready = client.get("/readyz")
            assert ready.status_code == 503
            assert "being read" in ready.text
            versions = client.get("/v1/modules/a/m/x/versions")
            assert versions.status_code == 503
            assert versions.headers["retry-after"]
            assert client.get("/v1/modules/a/absent/x/versions").status_code == 404
        finally:
            go_on.set()
        wait_until(lambda: client.get("/v1/modules/a/m/x/versions").status_code == 200)
        body = client.get("/v1/modules/a/m/x/versions").json()
        assert body["modules"][0]["versions"] == [{"version": "1.0.0"}]
        wait_until(lambda: client.get("/readyz").status_code == 200)
