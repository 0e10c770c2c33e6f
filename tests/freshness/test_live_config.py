"""registry.yaml edited while serving: a valid edit is applied live without dropping requests,
an invalid one is refused and the previous catalog keeps serving; SIGHUP reloads too."""

from __future__ import annotations

import hashlib
import shutil
import signal
import threading
import time
from pathlib import Path

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import RegistryServer, free_port, public_cas, start_gitreg, wait_until


def _catalog(root: Path, modules: list[str], extra: str = "") -> str:
    lines = "".join(
        f"  - {{namespace: org, name: {name}, system: x, repo: {root / name}}}\n"
        for name in modules
    )
    return f"cache_dir: cache\nrefresh_interval: 1h\n{extra}modules:\n{lines}"


@pytest.fixture
def repos(tmp_path: Path) -> Path:
    for name in ("one", "two"):
        GitRepo(tmp_path / name).release("v1.0.0", module_files(f"{name}-1.0.0"))
    return tmp_path


def _versions(base: str, name: str) -> int:
    # polled: one SSL context, not one made for each request (see public_cas)
    return httpx.get(f"{base}/v1/modules/org/{name}/x/versions", verify=public_cas()).status_code


def test_valid_edit_applies_live_without_dropping_requests(repos: Path) -> None:
    path = repos / "registry.yaml"
    path.write_text(_catalog(repos, ["one"]))
    with RegistryServer(load_catalog(path), refresh=True) as server:
        statuses: list[int] = []
        stop = threading.Event()

        def hammer() -> None:
            with httpx.Client(base_url=server.url) as client:
                for _ in range(2000):  # bounded; stops early when the edit has landed
                    if stop.is_set():
                        return
                    statuses.append(client.get("/v1/modules/org/one/x/versions").status_code)

        worker = threading.Thread(target=hammer)
        worker.start()
        time.sleep(0.3)
        path.write_text(_catalog(repos, ["one", "two"]))
        wait_until(lambda: _versions(server.url, "two") == 200)
        stop.set()
        worker.join(timeout=30)
        assert statuses and set(statuses) == {200}
        report = httpx.get(f"{server.url}/v1/status").json()["repositories"]
        assert {r["modules"][0]: r["mechanism"] for r in report} == {
            "org/one/x": "startup",
            "org/two/x": "reload",
        }
        # Removing a module stops serving it.
        path.write_text(_catalog(repos, ["two"]))
        wait_until(lambda: _versions(server.url, "one") == 404)


def test_invalid_edit_is_refused_and_the_old_catalog_serves(
    repos: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = repos / "registry.yaml"
    path.write_text(_catalog(repos, ["one"]))
    with RegistryServer(load_catalog(path), refresh=True) as server:
        time.sleep(0.3)
        path.write_text(_catalog(repos, ["one", "two"]) + "colour: blue\n")
        # Its own reason: a write truncates first, so the watch may also read an empty file.
        wait_until(lambda: "colour (line" in caplog.text, what="the edit refused")
        assert "unknown key" in caplog.text and "still serving the previous catalog" in caplog.text
        assert _versions(server.url, "one") == 200 and _versions(server.url, "two") == 404


def test_sighup_reloads(repos: Path) -> None:
    path = repos / "registry.yaml"
    path.write_text(_catalog(repos, ["one"], "watch_catalog: false\n"))
    port = free_port()
    log = repos / "serve.log"
    with log.open("w") as output:
        process = start_gitreg(
            "serve", "--config", str(path), "--listen", f"127.0.0.1:{port}", output=output
        )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: _safe_status(base, "one") == 200, timeout=60)
        path.write_text(_catalog(repos, ["one", "two"], "watch_catalog: false\n"))
        time.sleep(0.5)
        assert _versions(base, "two") == 404  # not watched: nothing happens until the signal
        process.send_signal(signal.SIGHUP)
        wait_until(lambda: _versions(base, "two") == 200)
        # Logged once the reload's fetch of the new repository ended, after it is served.
        wait_until(lambda: "catalog reloaded: 2 modules" in log.read_text(), what="the summary")
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert process.returncode == 0, log.read_text()


def _safe_status(base: str, name: str) -> int:
    try:
        return _versions(base, name)
    except httpx.HTTPError:
        return 0


def test_an_auth_section_applies_live_and_its_removal_opens_the_registry(
    repos: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = repos / "registry.yaml"
    path.write_text(_catalog(repos, ["one"]))
    token = "live-token-0123456789"
    digest = hashlib.sha256(token.encode()).hexdigest()
    private = f"auth:\n  tokens: [{{name: live, token_sha256: '{digest}', read: [org]}}]\n"
    with RegistryServer(load_catalog(path), refresh=True) as server:
        assert _versions(server.url, "one") == 200
        path.write_text(_catalog(repos, ["one"], private))
        wait_until(lambda: _versions(server.url, "one") == 401, what="auth turned on")
        url = f"{server.url}/v1/modules/org/one/x/versions"
        assert httpx.get(url, headers={"Authorization": f"Bearer {token}"}).status_code == 200
        path.write_text(_catalog(repos, ["one"], "auth:\n  public: [org]\n"))
        wait_until(lambda: _versions(server.url, "one") == 200, what="org made public")
        path.write_text(_catalog(repos, ["one"], private))
        wait_until(lambda: _versions(server.url, "one") == 401, what="org private again")
        path.write_text(_catalog(repos, ["one"], "auth: {tokens: [{name: x}]}\n"))  # refused
        refused = "give one of token_sha256, token_env or token_file"  # this edit's own reason
        wait_until(lambda: refused in caplog.text, what="the edit refused")
        # A refused edit changes nothing: the token still opens it.
        assert httpx.get(url, headers={"Authorization": f"Bearer {token}"}).status_code == 200
        path.write_text(_catalog(repos, ["one"]))
        wait_until(lambda: _versions(server.url, "one") == 200, what="auth turned off")


def test_a_kubernetes_configmap_update_is_applied_live(repos: Path) -> None:
    """A ConfigMap volume: registry.yaml -> ..data/registry.yaml, ..data -> a timestamped
    folder; an update writes a new folder and swaps ..data in one rename."""
    mount = repos / "etc"
    mount.mkdir()

    def publish(version: str, text: str) -> None:
        folder = mount / f"..{version}"
        folder.mkdir()
        (folder / "registry.yaml").write_text(text)
        (mount / "..data_tmp").symlink_to(folder.name)
        (mount / "..data_tmp").rename(mount / "..data")

    cache = f"cache_dir: {repos / 'cache'}"
    publish("2026_11_23_01", _catalog(repos, ["one"]).replace("cache_dir: cache", cache))
    (mount / "registry.yaml").symlink_to("..data/registry.yaml")
    with RegistryServer(load_catalog(mount / "registry.yaml"), refresh=True) as server:
        assert _versions(server.url, "two") == 404
        publish("2026_11_23_02", _catalog(repos, ["one", "two"]).replace("cache_dir: cache", cache))
        shutil.rmtree(mount / "..2026_11_23_01")  # as the kubelet does
        wait_until(lambda: _versions(server.url, "two") == 200, what="the update applied")
