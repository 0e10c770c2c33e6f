"""SIGTERM during the start-up fetch, from a Git server that accepts and never answers (over
HTTP and git://): each fetch says it was stopped by the shutdown, at INFO, not a WARNING that
reads as a Git outage, and the exit waits for neither (over HTTP, `git fetch`'s helper
`git remote-http` is ended too: it held the exit until the listener closed)."""

from __future__ import annotations

import signal
from pathlib import Path

from tests.support.listeners import SilentListener
from tests.support.servers import free_port, start_serve, wait_until


def test_a_fetch_ended_by_sigterm_says_the_server_is_shutting_down(tmp_path: Path) -> None:
    config = tmp_path / "registry.yaml"
    log = tmp_path / "serve.log"
    with SilentListener() as stall, log.open("w") as output:
        http = f"http://127.0.0.1:{stall.port}/r.git"
        daemon = f"git://127.0.0.1:{stall.port}/s.git"
        config.write_text(
            "cache_dir: cache\nfetch_timeout: 10m\nmodules:\n"
            f"  - {{namespace: a, name: m, system: x, repo: '{http}'}}\n"
            f"  - {{namespace: a, name: n, system: x, repo: '{daemon}'}}\n"
        )
        process = start_serve(config, free_port(), output=output)
        try:
            wait_until(lambda: stall.accepted >= 2, what="both fetches to connect")
            process.send_signal(signal.SIGTERM)
            # The listener still holds both connections: only the shutdown can end the fetches.
            assert process.wait(timeout=60) == 0
            assert stall.accepted == 2
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)
    lines = log.read_text().splitlines()
    for url in (http, daemon):
        said = [ln for ln in lines if url in ln]
        assert len(said) == 1, lines
        assert (
            f" INFO gitreg.modules.sync: fetch of {url} stopped: the server is shutting down"
            in (said[0])
        )
    assert not [ln for ln in lines if " WARNING " in ln and "plain HTTP" not in ln], lines
    assert not [ln for ln in lines if " ERROR " in ln], lines


def test_a_poll_ended_by_sigterm_says_so_too(tmp_path: Path) -> None:
    config = tmp_path / "registry.yaml"
    log = tmp_path / "serve.log"
    with SilentListener() as stall, log.open("w") as output:
        url = f"http://127.0.0.1:{stall.port}/r.git"
        config.write_text(
            "cache_dir: cache\nrefresh_interval: 200ms\nfetch_timeout: 10m\nmodules:\n"
            f"  - {{namespace: a, name: m, system: x, repo: '{url}'}}\n"
        )
        process = start_serve(config, free_port(), output=output)
        try:
            # The start-up fetch and a poll (`git ls-remote`), both stalled.
            wait_until(lambda: stall.accepted >= 2, what="the fetch and a poll to connect")
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=60) == 0
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)
    lines = log.read_text().splitlines()
    assert [ln for ln in lines if url in ln and " INFO " in ln and "stopped: the server is" in ln]
    assert any(
        f"listing the tags of {url} stopped: the server is shutting down" in ln for ln in lines
    )
    assert not [ln for ln in lines if " WARNING " in ln and "plain HTTP" not in ln], lines
    assert not [ln for ln in lines if " ERROR " in ln], lines
