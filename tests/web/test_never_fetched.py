"""A module whose repository was never fetched answers 503 with Retry-After and the reason,
not an empty version list a client would take for "no versions"; a repository that was read
and has no matching tag still answers 200 with an empty list. Real repositories, a real git
daemon on 127.0.0.1, the real app over HTTP."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from gitreg.modules.sync import ModuleSync
from gitreg.repeated_causes import RepeatedCauses
from gitreg.web import errors
from tests.support.clock import Clock
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import RegistryServer, bare_clone, free_port, git_daemon, wait_until

TOKEN = "s3cret-token-never-shown"


@pytest.mark.parametrize("fresh_reads", ["5s", "0"])
def test_a_repository_never_fetched_answers_503(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_reads: str
) -> None:
    monkeypatch.setenv("GITREG_TEST_TOKEN", TOKEN)
    base = f"http://127.0.0.1:{free_port()}/"  # nothing listens there
    path = tmp_path / "registry.yaml"
    path.write_text(
        f"cache_dir: cache\nrefresh_interval: 1h\nfresh_reads: {fresh_reads}\n"
        f"credentials:\n  - {{url: '{base}', token_env: GITREG_TEST_TOKEN}}\n"
        f"modules:\n  - {{namespace: a, name: m, system: x, repo: '{base}repo.git'}}\n"
    )
    server = RegistryServer(load_catalog(path))
    with server, httpx.Client(base_url=server.url) as client:
        for url in ("/v1/modules/a/m/x/versions", "/v1/modules/a/m/x/1.0.0/download"):
            response = client.get(url)
            assert response.status_code == 503, response.text
            assert response.headers["Retry-After"].isdigit()
            message = response.json()["errors"][0]
            assert "a/m/x: its versions are not known yet" in message
            assert f"fetch from {base}repo.git failed" in message or "cannot reach" in message
            assert TOKEN not in response.text
        report = client.get("/v1/status").json()["repositories"][0]
        assert report["state"] == "never fetched" and report["last_error"]
        assert report["last_success"] is None and TOKEN not in str(report)
        assert client.get("/v1/modules/a/other/x/versions").status_code == 404


def test_300_requests_for_a_repository_never_fetched_make_two_warnings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Not an ERROR a request: one WARNING, then one with the count once the minute is over."""
    clock = Clock(0.0)
    monkeypatch.setattr(errors, "unavailable", RepeatedCauses(errors.log, clock=clock))
    caplog.set_level(logging.INFO)
    path = tmp_path / "registry.yaml"
    path.write_text(
        "cache_dir: cache\nrefresh_interval: 1h\nfresh_reads: 0\nmodules:\n"
        f"  - {{namespace: a, name: m, system: x, repo: 'http://127.0.0.1:{free_port()}/r.git'}}\n"
    )
    server = RegistryServer(load_catalog(path))
    caplog.clear()
    with server, httpx.Client(base_url=server.url) as client:
        for _ in range(299):
            assert client.get("/v1/modules/a/m/x/versions").status_code == 503
        clock.now += 60
        assert client.get("/v1/modules/a/m/x/versions").status_code == 503
    said = [r for r in caplog.records if r.name == errors.log.name]
    assert [r.levelno for r in said] == [logging.WARNING] * 2
    assert "a/m/x: its versions are not known yet" in said[0].getMessage()
    assert said[1].getMessage().endswith("(and 298 more requests in the last 60 s)")
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_a_repository_read_with_no_matching_tag_answers_200(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "r")
    repo.release("nightly", module_files("nightly"))
    path = tmp_path / "registry.yaml"
    path.write_text(
        f"cache_dir: cache\nmodules:\n  - {{namespace: a, name: m, system: x, repo: {repo.path}}}\n"
    )
    server = RegistryServer(load_catalog(path))
    with server, httpx.Client(base_url=server.url) as client:
        response = client.get("/v1/modules/a/m/x/versions")
        assert response.status_code == 200
        assert response.json() == {"modules": [{"versions": []}]}
        assert client.get("/v1/modules/a/m/x/1.0.0/download").status_code == 404
        report = client.get("/v1/status").json()["repositories"][0]
        assert report["state"] == "ok" and report["last_error"] is None


def test_a_repository_known_before_an_outage_still_answers_200(tmp_path: Path) -> None:
    """Fetched once with no tag, then unreachable: its versions are known, there are none."""
    work = GitRepo(tmp_path / "work")
    work.commit("no tag yet")
    bare_clone(work.path, tmp_path / "server" / "repo.git")
    path = tmp_path / "registry.yaml"
    with git_daemon(tmp_path / "server") as base:
        path.write_text(
            "cache_dir: cache\nfresh_reads: 0\nmodules:\n"
            f"  - {{namespace: a, name: m, system: x, repo: '{base}/repo.git'}}\n"
        )
        catalog = load_catalog(path)
        ModuleSync(catalog).refresh()  # reads the repository once, into cache_dir
    with RegistryServer(catalog) as server, httpx.Client(base_url=server.url) as client:
        assert client.get("/v1/modules/a/m/x/versions").json() == {"modules": [{"versions": []}]}
        report = client.get("/v1/status").json()["repositories"][0]
        assert report["state"] == "failing" and report["last_error"]


def test_a_repository_that_appears_is_served(tmp_path: Path) -> None:
    work = GitRepo(tmp_path / "work")
    work.release("v1.0.0", module_files("1.0.0"))
    (tmp_path / "server").mkdir()
    path = tmp_path / "registry.yaml"
    with git_daemon(tmp_path / "server") as base:
        path.write_text(
            "cache_dir: cache\nrefresh_interval: 200ms\nmax_backoff: 200ms\nfresh_reads: 0\n"
            f"modules:\n  - {{namespace: a, name: m, system: x, repo: '{base}/repo.git'}}\n"
        )
        server = RegistryServer(load_catalog(path), refresh=True)
        with server, httpx.Client(base_url=server.url) as client:
            url = "/v1/modules/a/m/x/versions"
            assert client.get(url).status_code == 503
            # Whole at once, as a push makes it: a copy half made has no tag yet.
            bare_clone(work.path, tmp_path / "repo.git").rename(tmp_path / "server" / "repo.git")
            wait_until(lambda: client.get(url).status_code == 200, what="a poll to fetch it")
            assert client.get(url).json() == {"modules": [{"versions": [{"version": "1.0.0"}]}]}


def test_gitreg_list_says_never_fetched(tmp_path: Path) -> None:
    path = tmp_path / "registry.yaml"
    path.write_text(
        "cache_dir: cache\nmodules:\n"
        f"  - {{namespace: a, name: m, system: x, repo: 'http://127.0.0.1:{free_port()}/r.git'}}\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "gitreg", "list", "--config", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr  # nothing could be read: nothing would be served
    assert "    state: never fetched" in done.stdout
    assert "    last error: fetch from" in done.stdout
    assert "could not read 1 of 1 repositories:" in done.stdout
