"""A registry under floods and hung Git servers: a webhook flood costs one or two fetches, a
replayed delivery none, a Git server that never answers delays no archive and no restart."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import (
    RegistryServer,
    answers,
    bare_clone,
    daemon_requests,
    free_port,
    git_daemon,
    start_gitreg,
    wait_until,
)
from tests.support.webhook_payloads import FORGES

SECRET = "flood-test-webhook-secret"


@contextlib.contextmanager
def hung_git_server(port: int) -> Iterator[list[socket.socket]]:
    """Accepts connections on 127.0.0.1:`port` and never answers a byte, until the block ends;
    yields the connections it holds."""
    listener = socket.create_server(("127.0.0.1", port))
    listener.settimeout(0.2)
    stop = threading.Event()
    held: list[socket.socket] = []

    def accept() -> None:
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                held.append(listener.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield held
    finally:
        stop.set()
        thread.join(timeout=5)
        for connection in held:
            connection.close()
        listener.close()


def _released(root: Path, name: str) -> Path:
    work = GitRepo(root / "work" / name)
    work.release("v1.0.0", module_files("1.0.0"))
    return bare_clone(work.path, root / "server" / "org" / f"{name}.git")


def _catalog(root: Path, base: str, *, local: Path | None = None) -> Path:
    path = root / "registry.yaml"
    extra = f"  - {{namespace: org, name: local, system: x, repo: '{local}'}}\n" if local else ""
    path.write_text(
        "cache_dir: cache\nrefresh_interval: 1h\nfresh_reads: 0\nfetch_timeout: 120s\n"
        "webhooks: {secret_env: GITREG_FLOOD_SECRET}\n"
        f"modules:\n  - {{namespace: org, name: repo, system: x, repo: '{base}/org/repo.git'}}\n"
        + extra
    )
    return path


@pytest.fixture(autouse=True)
def _secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITREG_FLOOD_SECRET", SECRET)


def _flood(url: str, copies: int, forge: str = "generic-hmac") -> list[int]:
    body, headers = FORGES[forge].request("127.0.0.1", "org/repo", "v1.1.0", SECRET)

    async def post_all() -> list[int]:
        limits = httpx.Limits(max_connections=50)
        async with httpx.AsyncClient(limits=limits, timeout=60) as client:
            posted = await asyncio.gather(
                *(client.post(url, content=body, headers=headers) for _ in range(copies))
            )
        return [r.status_code for r in posted]

    return asyncio.run(post_all())


def test_a_flood_of_one_webhook_costs_one_fetch_at_a_time(tmp_path: Path) -> None:
    _released(tmp_path, "repo")
    log = tmp_path / "daemon.log"
    with (
        git_daemon(tmp_path / "server", log) as base,
        RegistryServer(load_catalog(_catalog(tmp_path, base))) as server,
    ):
        before = daemon_requests(log)
        statuses = _flood(f"{server.url}/v1/webhooks/generic", 300)
        wait_until(lambda: not server.state.syncs.busy(), 60, "the syncs to finish")
        fetches = daemon_requests(log) - before
    assert statuses == [202] * 300
    # Folded into one running and one waiting as they come: far fewer fetches than deliveries,
    # and every delivery accounted for (one that started a fetch, or one folded in).
    assert 1 <= fetches < 300 // 3, fetches
    assert fetches + sum(server.state.syncs.coalesced.values()) >= 300 - fetches


@pytest.mark.parametrize(
    "forge", ["github", "gitlab", "gitea", "forgejo", "bitbucket-cloud", "bitbucket-server"]
)
def test_a_replayed_delivery_is_answered_without_a_fetch(tmp_path: Path, forge: str) -> None:
    _released(tmp_path, "repo")
    log = tmp_path / "daemon.log"
    with (
        git_daemon(tmp_path / "server", log) as base,
        RegistryServer(load_catalog(_catalog(tmp_path, base))) as server,
    ):
        url = f"{server.url}/v1/webhooks/{FORGES[forge].name}"
        (first,) = _flood(url, 1, forge)
        assert first == 202
        wait_until(lambda: not server.state.syncs.busy(), 60, "the first sync")
        before = daemon_requests(log)
        body, headers = FORGES[forge].request("127.0.0.1", "org/repo", "v1.1.0", SECRET)
        again = httpx.post(url, content=body, headers=headers)
        assert not server.state.syncs.busy()
        assert daemon_requests(log) == before
        metrics = httpx.get(f"{server.url}/metrics").text
    assert again.status_code == 200
    assert "handled before" in again.json()["duplicate"]
    line = f'gitreg_webhooks_total{{forge="{FORGES[forge].name}",result="duplicate"}} 1.0'
    assert line in metrics


def test_a_hung_git_server_holds_no_archive_back(tmp_path: Path) -> None:
    local = GitRepo(tmp_path / "local")
    local.release("v1.0.0", module_files("1.0.0"))
    _released(tmp_path, "repo")
    with git_daemon(tmp_path / "server") as base:
        catalog = _catalog(tmp_path, base, local=local.path)
        with RegistryServer(load_catalog(catalog)):
            pass  # the clones now hold every version
    # The same URL, now a server that accepts and never answers (fetch_timeout is 120 s),
    # closed before the registry stops: the fetch it holds fails then, not after the test.
    with (
        RegistryServer(load_catalog(catalog), fetch_first=False) as server,
        hung_git_server(int(base.rsplit(":", 1)[1])) as held,
    ):
        statuses = _flood(f"{server.url}/v1/webhooks/generic", 100)
        assert set(statuses) == {202}
        wait_until(lambda: len(held) >= 1, 30, "the fetch to reach the hung server")
        location = httpx.get(
            f"{server.url}/v1/modules/org/local/x/1.0.0/download", timeout=30
        ).headers["x-terraform-get"]
        # Built and served while the hung server holds the fetch.
        archive = httpx.get(f"{server.url}{location}", timeout=30)
        assert archive.status_code == 200 and archive.content[:2] == b"\x1f\x8b"
        versions = httpx.get(f"{server.url}/v1/modules/org/repo/x/versions", timeout=30)
        assert versions.json()["modules"][0]["versions"] == [{"version": "1.0.0"}]
        assert server.state.syncs.busy()  # the hung fetch still waits, one other behind it
        assert len(held) == 1  # 100 deliveries, one connection: the rest are folded in


def test_a_restart_with_a_hung_git_server_serves_its_clones_at_once(tmp_path: Path) -> None:
    _released(tmp_path, "repo")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with git_daemon(tmp_path / "server") as served:
        catalog = _catalog(tmp_path, served)
        listed = start_gitreg("list", "--config", str(catalog))
        assert listed.wait(timeout=60) == 0  # the clone now holds 1.0.0
        if listed.stdout:
            listed.stdout.close()
    # The same URL, now a server that accepts and never answers; and a repository never fetched.
    never = f"  - {{namespace: org, name: never, system: x, repo: '{served}/org/never.git'}}\n"
    catalog.write_text(catalog.read_text() + never)
    with hung_git_server(int(served.rsplit(":", 1)[1])):
        process = start_gitreg("serve", "--config", str(catalog), "--listen", f"127.0.0.1:{port}")
        try:
            # Well inside fetch_timeout (120 s), which the start used to wait for.
            wait_until(lambda: answers(f"{base}/healthz"), 30, "gitreg to answer")
            # Read from its clone in the background, while the fetch hangs.
            module = f"{base}/v1/modules/org/repo/x/versions"
            wait_until(lambda: answers(module), 30, "the clone to be served")
            versions = httpx.get(f"{base}/v1/modules/org/repo/x/versions", timeout=10)
            assert versions.status_code == 200
            assert versions.json()["modules"][0]["versions"] == [{"version": "1.0.0"}]
            unknown = httpx.get(f"{base}/v1/modules/org/never/x/versions", timeout=10)
            assert unknown.status_code == 503 and "retry-after" in unknown.headers
            ready = httpx.get(f"{base}/readyz", timeout=10)
            assert ready.status_code == 503
            waiting = [w["repository"] for w in ready.json()["waiting"]]
            assert waiting == [f"{served}/org/never.git"]
        finally:
            process.send_signal(signal.SIGINT)
            output = process.communicate(timeout=30)[0]
    assert process.returncode == 0, output
