"""SIGTERM on a real `gitreg serve`: it stops accepting connections at once, lets a download in
flight finish within shutdown_grace, stops its background work, and exits 0; a client that never
finishes is cut off once the grace has passed, and the exit is still 0."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import socket
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.gitrepo import GitRepo, git, module_files
from tests.support.servers import answers, free_port, start_serve, wait_until


def _in_flight_bytes() -> int:
    """More than the kernel can hold between the server and a client that reads slowly (four
    times the server's largest send buffer), so that a download of this size is still being
    sent while the client reads."""
    try:
        most = int(Path("/proc/sys/net/ipv4/tcp_wmem").read_text().split()[2])
    except (OSError, ValueError, IndexError):
        most = 4 << 20
    return 4 * most + (8 << 20)


@dataclass
class Big:
    root: Path
    archive_path: str  # /v1/archives/...tar.gz
    archive_sha: str
    archive_size: int

    def catalog(self, extra: str) -> Path:
        """A registry.yaml on the same cache_dir (the archive is built already)."""
        path = self.root / f"registry-{abs(hash(extra))}.yaml"
        path.write_text(
            f"cache_dir: cache\n{extra}"
            "modules:\n  - {namespace: a, name: big, system: x, repo: repo}\n"
        )
        return path


@dataclass
class Served:
    port: int
    process: subprocess.Popen[str]
    output: Path

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.output.read_text().splitlines()]


@contextlib.contextmanager
def serving(catalog: Path, extra: tuple[str, ...] = ()) -> Iterator[Served]:
    port = free_port()
    output = catalog.with_suffix(".log")
    with output.open("w") as written:
        process = start_serve(
            catalog, port, output=written, extra=("--log-format", "json", "--access-log", *extra)
        )
    try:
        wait_until(lambda: answers(f"http://127.0.0.1:{port}/readyz"), 60, "gitreg ready")
        yield Served(port, process, output)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Big:
    """A module whose archive is larger than sockets can buffer, its archive built once."""
    root = tmp_path_factory.mktemp("shutdown")
    repo = GitRepo(root / "repo")
    # Nor can zlib: stored as it is, it is committed and fetched in half the time.
    git(repo.path, "config", "core.compression", "0")
    repo.write(module_files("1.0.0"))
    (repo.path / "blob.bin").write_bytes(os.urandom(_in_flight_bytes()))  # gzip cannot shrink it
    repo.commit("big")
    repo.tag("v1.0.0")
    made = Big(root, "", "", 0)
    with serving(made.catalog("")) as served:
        base = f"http://127.0.0.1:{served.port}"
        download = httpx.get(f"{base}/v1/modules/a/big/x/1.0.0/download")
        location = download.headers["x-terraform-get"]
        archive = httpx.get(f"{base}{location}", timeout=120)
        assert archive.status_code == 200
        served.process.send_signal(signal.SIGTERM)
        served.process.wait(timeout=60)
    made.archive_path = location
    made.archive_sha = hashlib.sha256(archive.content).hexdigest()
    made.archive_size = len(archive.content)
    return made


class SlowClient:
    """A download over a raw socket with a small receive window, read only when told to."""

    def __init__(self, port: int, path: str) -> None:
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.sock.settimeout(60)
        self.sock.connect(("127.0.0.1", port))
        self.sock.sendall(
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()
        )
        received = b""
        while b"\r\n\r\n" not in received:
            chunk = self.sock.recv(4096)
            assert chunk, "the server closed before answering"
            received += chunk
        head, _, self.body = received.partition(b"\r\n\r\n")
        self.head = head.decode("latin-1")
        lengths = [
            line.split(":", 1)[1]
            for line in self.head.lower().splitlines()
            if line.startswith("content-length:")
        ]
        self.length = int(lengths[0])

    def read_rest(self) -> bytes:
        """Everything up to the end of the response, or until the server closes."""
        body = bytearray(self.body)
        while len(body) < self.length:
            try:
                chunk = self.sock.recv(1 << 16)
            except ConnectionResetError:
                break
            if not chunk:
                break
            body += chunk
        self.sock.close()
        return bytes(body)


def refused(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return False
    except ConnectionRefusedError:
        return True


def test_sigterm_lets_a_download_in_flight_finish_and_refuses_new_connections(big: Big) -> None:
    with serving(big.catalog("shutdown_grace: 60s\n")) as served:
        client = SlowClient(served.port, big.archive_path)
        assert client.head.startswith("HTTP/1.1 200") and client.length == big.archive_size
        served.process.send_signal(signal.SIGTERM)
        wait_until(lambda: refused(served.port), 30, "new connections refused")
        body = client.read_rest()
        status = served.process.wait(timeout=60)
    assert status == 0
    assert len(body) == big.archive_size and hashlib.sha256(body).hexdigest() == big.archive_sha
    lines = served.lines()
    messages = [line["message"] for line in lines]
    stopping = next(i for i, m in enumerate(messages) if m.startswith("stopping:"))
    (download,) = [
        i
        for i, line in enumerate(lines)
        if line["logger"] == "gitreg.access" and line["path"] == big.archive_path.split("?")[0]
    ]
    assert stopping < download < messages.index("stopped")
    assert lines[download]["status"] == 200 and lines[download]["bytes"] == big.archive_size
    assert "background work stopped: no more polls, watches or syncs" in messages
    assert not [line for line in lines if line["level"] in ("ERROR", "CRITICAL")]


def test_a_client_that_never_finishes_is_cut_off_after_the_grace_and_the_exit_is_0(
    big: Big,
) -> None:
    with serving(big.catalog("shutdown_grace: 1s\n")) as served:
        client = SlowClient(served.port, big.archive_path)
        served.process.send_signal(signal.SIGTERM)
        # The client reads nothing more: the server must not wait for it beyond the grace.
        status = served.process.wait(timeout=60)
        body = client.read_rest()
    assert status == 0
    assert len(body) < big.archive_size  # cut off
    lines = served.lines()
    messages = [line["message"] for line in lines]
    assert "the grace period is over: closed the 1 connections still open" in messages
    assert messages[-1] == "stopped"
    (cut,) = [line for line in lines if line.get("path", "").startswith("/v1/archives/")]
    assert cut["bytes"] < big.archive_size  # its access line says how much was sent


def test_a_second_signal_closes_the_connections_in_flight_at_once(big: Big) -> None:
    with serving(big.catalog("shutdown_grace: 10m\n")) as served:
        client = SlowClient(served.port, big.archive_path)
        served.process.send_signal(signal.SIGTERM)
        wait_until(lambda: refused(served.port), 30, "new connections refused")
        served.process.send_signal(signal.SIGINT)  # a second Ctrl-C: no waiting for the grace
        status = served.process.wait(timeout=60)
        body = client.read_rest()
    assert status == 0 and len(body) < big.archive_size
    messages = [line["message"] for line in served.lines()]
    assert "stopping now, without waiting for requests in flight" in messages
    assert "a second signal: closed the 1 connections still open" in messages
    assert messages[-1] == "stopped"


def test_connections_open_at_a_refreeze_are_still_closed_after_the_grace(big: Big) -> None:
    """A swap's refreeze (gitreg.process.heap) freezes the connections open at that moment, and
    frozen objects are not listed by gc.get_objects(): the shutdown must find them all the same."""
    catalog = big.catalog("shutdown_grace: 2s\n")
    with serving(catalog, ("--log-level", "debug")) as served:
        client = SlowClient(served.port, big.archive_path)
        GitRepo.existing(big.root / "repo").tag("v1.1.0")
        url = f"http://127.0.0.1:{served.port}/v1/modules/a/big/x/versions"
        wait_until(  # each read a fresh one, once its window has passed
            lambda: {"version": "1.1.0"} in httpx.get(url).json()["modules"][0]["versions"],
            30,
            "the new tag listed",
        )
        wait_until(
            lambda: any(line["message"].startswith("heap refrozen") for line in served.lines()),
            30,
            "the refreeze after the swap",
        )
        served.process.send_signal(signal.SIGTERM)
        status = served.process.wait(timeout=60)
        body = client.read_rest()
    assert status == 0 and len(body) < big.archive_size
    messages = [line["message"] for line in served.lines()]
    assert "the grace period is over: closed the 1 connections still open" in messages
