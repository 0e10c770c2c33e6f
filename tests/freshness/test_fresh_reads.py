"""Fresh reads: a `versions` request checks the remote's tags when no read did for a while, so
a tag pushed a moment ago is listed without a webhook or a poll; one check per repository at a
time, none within the window, later and later against a failing remote. A real git daemon on
127.0.0.1 whose own log counts the requests it answered, the real app over HTTP."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from gitreg.catalog.model import Catalog
from gitreg.freshness.fresh_reads import FreshReads
from gitreg.modules.sync import ModuleSync
from tests.conftest import WriteCatalog
from tests.support.clock import Clock
from tests.support.gitrepo import GitRepo, git, module_files
from tests.support.servers import (
    RegistryServer,
    bare_clone,
    daemon_requests,
    free_port,
    git_daemon,
    wait_until,
)

PATIENT = 60.0  # a request's wait for a check, in tests that must see its result


@dataclass
class Remote:
    work: GitRepo
    bare: Path
    url: str
    log: Path
    root: Path

    def push(self, tag: str) -> str:
        commit = self.work.release(tag, module_files(tag))
        git(self.work.path, "push", "-q", str(self.bare), f"refs/tags/{tag}")
        return commit

    def catalog(self, fresh_reads: str) -> Catalog:
        """Polling once an hour, no webhook secret, a repository that is not watched (git://)."""
        path = self.root / "registry.yaml"
        path.write_text(
            f"cache_dir: cache\nrefresh_interval: 1h\nfresh_reads: {fresh_reads}\nmodules:\n"
            f"  - {{namespace: org, name: repo, system: x, repo: '{self.url}'}}\n"
        )
        return load_catalog(path)

    def requests(self) -> int:
        return daemon_requests(self.log)


@pytest.fixture
def remote(tmp_path: Path) -> Iterator[Remote]:
    work = GitRepo(tmp_path / "work")
    work.release("v1.0.0", module_files("v1.0.0"))
    bare = bare_clone(work.path, tmp_path / "server" / "org" / "repo.git")
    log = tmp_path / "daemon.log"
    with git_daemon(tmp_path / "server", log) as base:
        yield Remote(work, bare, f"{base}/org/repo.git", log, tmp_path)


def versions(client: httpx.Client) -> list[str]:
    response = client.get("/v1/modules/org/repo/x/versions")
    assert response.status_code == 200, response.text
    return [v["version"] for v in response.json()["modules"][0]["versions"]]


def test_a_tag_pushed_a_moment_ago_is_listed_by_the_next_read(remote: Remote) -> None:
    server = RegistryServer(remote.catalog("5s"), fresh_wait=PATIENT)  # no polling, no watching
    with server, httpx.Client(base_url=server.url, timeout=PATIENT) as client:
        commit = remote.push("v1.1.0")
        assert versions(client) == ["1.1.0", "1.0.0"]
        download = client.get("/v1/modules/org/repo/x/1.1.0/download")
        assert download.status_code == 200 and commit in download.json()["location"]
        report = client.get("/v1/status").json()["repositories"][0]
        assert report["mechanism"] == "fresh-read"
        metrics = client.get("/metrics").text
        assert 'gitreg_syncs_total{mechanism="fresh-read",result="ok"} 1.0' in metrics


def test_reads_within_the_window_ask_git_nothing(remote: Remote) -> None:
    server = RegistryServer(remote.catalog("1h"), fresh_wait=PATIENT)
    with server, httpx.Client(base_url=server.url, timeout=PATIENT) as client:
        before = remote.requests()
        assert versions(client) == ["1.0.0"]  # checked: one ls-remote, no fetch (no change)
        assert remote.requests() == before + 1
        remote.push("v1.1.0")
        for _ in range(10):
            assert versions(client) == ["1.0.0"]  # the index as it is, read as always
        assert remote.requests() == before + 1


def test_concurrent_reads_share_one_check(remote: Remote) -> None:
    server = RegistryServer(remote.catalog("1h"), fresh_wait=PATIENT)

    async def read_all(n: int) -> list[list[str]]:
        async with httpx.AsyncClient(base_url=server.url, timeout=PATIENT) as client:
            responses = await asyncio.gather(
                *(client.get("/v1/modules/org/repo/x/versions") for _ in range(n))
            )
        return [[v["version"] for v in r.json()["modules"][0]["versions"]] for r in responses]

    with server:
        remote.push("v1.1.0")
        before = remote.requests()
        assert asyncio.run(read_all(20)) == [["1.1.0", "1.0.0"]] * 20
        assert remote.requests() == before + 2  # one ls-remote, then one fetch: for all 20


def test_fresh_reads_can_be_turned_off(remote: Remote) -> None:
    server = RegistryServer(remote.catalog("0"), fresh_wait=PATIENT)
    with server, httpx.Client(base_url=server.url, timeout=PATIENT) as client:
        before = remote.requests()
        remote.push("v1.1.0")
        assert versions(client) == ["1.0.0"]
        assert remote.requests() == before


def test_a_failing_remote_is_checked_later_and_later(write_catalog: WriteCatalog) -> None:
    nobody = f"git://127.0.0.1:{free_port()}/repo.git"  # nothing listens there
    sync = ModuleSync(
        write_catalog(
            "fresh_reads: 5s\nmax_backoff: 60s\nmodules:\n"
            f"  - {{namespace: a, name: m, system: x, repo: '{nobody}'}}\n"
        )
    )
    clock = Clock()
    fresh = FreshReads(sync, clock, wait=PATIENT)
    location = next(iter(sync.snapshot.clones))
    try:
        for checks, delay in enumerate([10, 20, 40, 60, 60], start=1):  # 5 s doubled, up to 60
            assert fresh.due(location)
            asyncio.run(fresh.check(location))
            assert sync.sync_counts[("fresh-read", "failed")] == checks
            clock.now += delay - 0.5
            assert not fresh.due(location)
            asyncio.run(fresh.check(location))  # a read meanwhile does not ask
            assert sync.sync_counts[("fresh-read", "failed")] == checks
            clock.now += 1
        assert "cannot reach" in (sync.status[location].last_error or "")
    finally:
        fresh.close()


def test_a_slow_remote_is_not_waited_for(write_catalog: WriteCatalog) -> None:
    with socket.socket() as silent:  # accepts connections (the kernel does), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"git://127.0.0.1:{silent.getsockname()[1]}/repo.git"
        sync = ModuleSync(
            write_catalog(
                f"fetch_timeout: 2s\nmodules:\n  - {{namespace: a, name: m, system: x, repo: '{url}'}}\n"
            )
        )
        fresh = FreshReads(sync, wait=0.05)
        location = next(iter(sync.snapshot.clones))
        try:
            asyncio.run(fresh.check(location))
            assert fresh.checking(location)  # the request went on; the check goes on too
            wait_until(lambda: not fresh.checking(location), what="the check to time out")
            assert sync.sync_counts[("fresh-read", "failed")] == 1
            assert not fresh.due(location)  # and backs off
        finally:
            fresh.close()
