"""A real `gitreg serve --workers 2` stopped with SIGTERM at once after its installs: once it has
ended, every install either worker counted is in the one SQLite file under cache_dir that the
workers share (what a batch had not written yet, the stop wrote)."""

from __future__ import annotations

import signal
from pathlib import Path

import httpx

from gitreg.catalog.load import load_catalog
from gitreg.state.sqlite_downloads import SqliteDownloads
from tests.support.counted_registry import TERRAFORM, write_counted_registry
from tests.support.servers import answers, free_port, start_serve, wait_until


def test_sigterm_writes_every_worker_s_counts(tmp_path: Path) -> None:
    config = write_counted_registry(tmp_path)
    port = free_port()
    log = (tmp_path / "serve.log").open("w")
    process = start_serve(config, port, output=log, extra=("--workers", "2"))
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until(lambda: answers(f"{base}/readyz"), 60, "the workers to serve")
        for _ in range(6):
            # A connection each, so that both workers may take some.
            with httpx.Client(base_url=base, timeout=20) as http:
                answer = http.get(
                    "/v1/modules/open/single/generic/1.0.0/download", headers=TERRAFORM
                )
                assert answer.status_code == 200, answer.text
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0, (tmp_path / "serve.log").read_text()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        log.close()
    store = SqliteDownloads(load_catalog(config).cache_dir / "downloads.sqlite3")
    assert store.by_version("module", "open/single/generic") == {"1.0.0": 6}
    store.close()
