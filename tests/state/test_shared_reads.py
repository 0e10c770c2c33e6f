"""Under state: postgres, each replica shares its reads of the repositories in the database, and
a replica with an empty cache_dir answers `versions` from them before its clones exist; an
archive waits for the clone, with a 503 and Retry-After."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urljoin

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from gitreg.catalog.secrets import SecretRef
from gitreg.catalog.settings import PostgresSettings
from gitreg.modules.persisted import decode
from gitreg.state.database import Database
from gitreg.state.shared_reads import saved_reads
from tests.support.gitrepo import GitRepo, git, module_files
from tests.support.listeners import SilentListener
from tests.support.servers import RegistryServer, git_daemon, wait_until

DSN = "GITREG_SHARED_READS_DSN"
VERSIONS = "/v1/modules/org/repo/x/versions"


def _catalog(folder: Path, url: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "registry.yaml"
    path.write_text(
        f"cache_dir: cache\nrefresh_interval: 1h\nfresh_reads: 0\nfetch_timeout: 5s\n"
        f"state:\n  postgres: {{dsn_env: {DSN}}}\n"
        f"modules:\n  - {{namespace: org, name: repo, system: x, repo: '{url}'}}\n"
    )
    return path


@pytest.fixture
def url(tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """A repository one replica read (and shared) while its Git server answered; the Git
    server is gone since."""
    monkeypatch.setenv(DSN, database_url)
    work = GitRepo(tmp_path / "work")
    work.release("v1.0.0", module_files("1.0.0"))
    git(tmp_path, "clone", "--bare", "-q", str(work.path), str(tmp_path / "server" / "repo.git"))
    with git_daemon(tmp_path / "server") as base:
        repo = f"{base}/repo.git"
        catalog = load_catalog(_catalog(tmp_path / "first", repo))
        with (
            RegistryServer(catalog, fetch_first=None) as first,
            httpx.Client(base_url=first.url, timeout=10) as client,
        ):
            wait_until(lambda: client.get(VERSIONS).status_code == 200)
            # Its download recorded the archive's digest for every replica.
            client.get("/v1/modules/org/repo/x/1.0.0/download").raise_for_status()
    return repo


def test_a_replica_with_an_empty_cache_dir_answers_versions(tmp_path: Path, url: str) -> None:
    catalog = load_catalog(_catalog(tmp_path / "new", url))
    # The Git server accepts connections and never answers; closed before the registry
    # stops, so that the fetch it holds fails then, not after the test.
    port = int(url.split(":")[2].split("/")[0])
    with (
        SilentListener(port=port) as silent,
        RegistryServer(catalog, fetch_first=None) as server,
    ):
        try:
            assert set(server.sync.shared.saved_reads()) == {url}
            with httpx.Client(base_url=server.url, timeout=10) as client:
                wait_until(lambda: client.get(VERSIONS).status_code == 200)
                assert client.get(VERSIONS).json()["modules"][0]["versions"] == [
                    {"version": "1.0.0"}
                ]
                download = client.get("/v1/modules/org/repo/x/1.0.0/download")
                assert download.status_code == 200  # the digest the other replica recorded
                assert "?checksum=sha256:" in download.headers["x-terraform-get"]
                archive = client.get(urljoin(server.url + "/", download.headers["x-terraform-get"]))
                assert archive.status_code == 503
                assert archive.headers["retry-after"]
                assert "clone" in archive.text  # not cloned yet, or its commit not fetched yet
        finally:
            silent.close()


def test_a_line_in_the_database_is_what_the_reading_replica_served(
    tmp_path: Path, url: str
) -> None:
    db = Database(PostgresSettings(SecretRef(env=DSN)))
    try:
        lines = saved_reads(db)
    finally:
        db.close()
    line = decode(lines[url])
    assert line.url == url
    index = (tmp_path / "first" / "cache" / "index.jsonl").read_text().splitlines()
    assert [decode(text).read_from for text in index] == [line.read_from]
