"""What a crash leaves behind: a `gitreg serve` killed with SIGKILL in the middle of an archive
build, then restarted, leaves no temporary file and serves the archive whole."""

from __future__ import annotations

import io
import signal
import socket
import tarfile
from pathlib import Path

import httpx

from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import answers, free_port, start_gitreg, wait_until

# Zeros: quick to commit, long enough to build to be caught (the build, on every core, takes a
# few tenths of a second; the wait for its temporary file polls every 0.05 s), short enough to
# fetch. 128 MiB took the suite's longest test 25 s.
SIZE = 64 * 2**20


def test_a_kill_during_an_archive_build_leaves_nothing_behind(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.write(module_files("1.0.0"))
    with (repo.path / "big.bin").open("wb") as big:
        big.truncate(SIZE)
    repo.commit("big")
    repo.tag("v1.0.0")
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\nmodules:\n  - {namespace: infra, name: big, system: aws, repo: repo}\n"
    )
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    args = ("serve", "--config", str(tmp_path / "registry.yaml"), "--listen", f"127.0.0.1:{port}")
    archives = tmp_path / "cache" / "archives"

    process = start_gitreg(*args)
    try:
        wait_until(lambda: answers(f"{base}/readyz"), 60, "gitreg ready")
        location = httpx.get(f"{base}/v1/modules/infra/big/aws/1.0.0/download").headers[
            "x-terraform-get"
        ]
        for built in archives.rglob("*.tar.gz"):  # built for the download's digest: again
            built.unlink()
        # The build starts with the request; the client does not wait for the answer.
        with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
            raw.sendall(f"GET {location.split('//')[0]} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            wait_until(lambda: list(archives.rglob(".*.tmp")), 60, "a build in progress")
            process.send_signal(signal.SIGKILL)
    finally:
        process.kill()
        process.wait(timeout=30)
        if process.stdout:
            process.stdout.close()
    assert list(archives.rglob(".*.tmp")), "the kill came after the build"

    process = start_gitreg(*args)
    try:
        wait_until(lambda: answers(f"{base}/readyz"), 60, "gitreg ready again")
        assert not list(archives.rglob(".*.tmp"))
        response = httpx.get(f"{base}{location.split('//')[0]}", timeout=120)
        assert response.status_code == 200
        with tarfile.open(fileobj=io.BytesIO(response.content), mode="r:gz") as tar:
            assert tar.getmember("big.bin").size == SIZE
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
        if process.stdout:
            process.stdout.close()
