"""A real `gitreg serve` over TLS against clients that misbehave at the connection level: an
HTTP/2 rapid-reset flood (CVE-2023-44487) is cut off with GOAWAY (ENHANCE_YOUR_CALM), DATA
after an answer costs nothing, and idle or abandoned TLS connections cost one DEBUG line each,
never an ERROR, a traceback or the exit status."""

from __future__ import annotations

import contextlib
import json
import select
import signal
import socket
import ssl
import struct
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import h2.config
import h2.connection
import h2.errors
import h2.events
import pytest

from gitreg.connections import MAX_RESETS
from gitreg.tlscert import TlsMaterial
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import answers, free_port, start_serve, wait_until

_REQUEST = [(":method", "GET"), (":scheme", "https"), (":authority", "127.0.0.1")]


@dataclass
class Served:
    port: int
    process: subprocess.Popen[str]
    output: Path
    ca: Path

    @property
    def context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca))

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=120)

    def records(self) -> list[dict[str, Any]]:
        """Every line of its output as JSON: a line that is not (a traceback printed by Python
        itself) fails the test."""
        return [json.loads(line) for line in self.output.read_text().splitlines()]


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    GitRepo(tmp_path / "repo").release("v1.0.0", module_files("1.0.0"))
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\nshutdown_grace: 90s\n"
        "modules:\n  - {namespace: infra, name: vpc, system: aws, repo: repo}\n"
    )
    return tmp_path / "registry.yaml"


@contextlib.contextmanager
def serving(catalog: Path, tls: TlsMaterial, tmp_path: Path) -> Iterator[Served]:
    port = free_port()
    output = tmp_path / "logs" / "gitreg.log"  # not beside registry.yaml, which is watched
    output.parent.mkdir()
    with output.open("w") as written:
        process = start_serve(
            catalog, port, tls, written, ("--log-format", "json", "--log-level", "debug")
        )
    try:
        url = f"https://127.0.0.1:{port}/readyz"
        served = Served(port, process, output, tls.ca_cert)
        wait_until(lambda: answers(url, served.context), 60, "gitreg ready")
        yield served
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)


class H2Client:
    """One HTTP/2 connection over TLS, driven frame by frame with the h2 library."""

    def __init__(self, served: Served) -> None:
        context = served.context
        context.set_alpn_protocols(["h2"])
        raw = socket.create_connection(("127.0.0.1", served.port), timeout=30)
        self.sock = context.wrap_socket(raw, server_hostname="127.0.0.1")
        assert self.sock.selected_alpn_protocol() == "h2"
        self.h2 = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        self.h2.initiate_connection()
        self.sock.sendall(self.h2.data_to_send())

    def send(self) -> None:
        self.sock.sendall(self.h2.data_to_send())

    def flood(self, resets: int) -> None:
        """HEADERS then RST_STREAM, `resets` times, as fast as the socket takes them."""
        try:
            for count in range(resets):
                stream = self.h2.get_next_available_stream_id()
                self.h2.send_headers(stream, [*_REQUEST, (":path", "/healthz")], end_stream=True)
                self.h2.reset_stream(stream, h2.errors.ErrorCodes.CANCEL)
                if count % 50 == 49:
                    self.send()
            self.send()
        except OSError:
            pass  # the server closed while we were still sending: what the test expects

    def get(self, path: str, end_stream: bool = True) -> int:
        """The status of GET `path` (`end_stream`: whether the request ends with its HEADERS)."""
        stream = self.h2.get_next_available_stream_id()
        self.h2.send_headers(stream, [*_REQUEST, (":path", path)], end_stream=end_stream)
        self.send()
        status = 0
        for _ in range(1000):
            for event in self.receive():
                if isinstance(event, h2.events.ResponseReceived) and event.stream_id == stream:
                    status = int(dict(event.headers)[b":status"])
                if isinstance(event, h2.events.StreamEnded) and event.stream_id == stream:
                    return status
        raise AssertionError(f"no answer to {path}")

    def receive(self) -> list[h2.events.Event]:
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("closed by the server")
        events = self.h2.receive_data(data)
        self.send()
        return events

    def until_closed(self) -> h2.events.ConnectionTerminated | None:
        """Read until the server closes the connection; its GOAWAY, if it sent one."""
        goaway = None
        for _ in range(100_000):
            try:
                data = self.sock.recv(65536)
            except (ssl.SSLError, ConnectionError):
                break
            if not data:
                break
            with contextlib.suppress(h2.exceptions.ProtocolError):
                for event in self.h2.receive_data(data):
                    if isinstance(event, h2.events.ConnectionTerminated):
                        goaway = event
        return goaway

    def close(self) -> None:
        self.sock.close()


def close_wait(port: int) -> int:
    """Server-side connections on `port` in CLOSE-WAIT: their client closed, gitreg did not."""
    count = 0
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local_port = int(fields[1].split(":")[1], 16)
        if local_port == port and fields[3] == "08":
            count += 1
    return count


def test_a_rapid_reset_flood_is_cut_off_and_sigterm_still_exits_0(
    catalog: Path, tls: TlsMaterial, tmp_path: Path
) -> None:
    with serving(catalog, tls, tmp_path) as served:
        flooder = H2Client(served)
        flooder.flood(20 * MAX_RESETS)
        goaway = flooder.until_closed()
        assert goaway is not None
        assert goaway.error_code == h2.errors.ErrorCodes.ENHANCE_YOUR_CALM
        assert goaway.additional_data == b"too many stream resets"
        # The streams after the last one started were never started: the client may retry them.
        assert goaway.last_stream_id is not None and goaway.last_stream_id <= 2 * MAX_RESETS + 1
        flooder.close()
        wait_until(lambda: close_wait(served.port) == 0, 30, "no connection left in CLOSE-WAIT")
        other = H2Client(served)  # the server, and other clients, are unharmed
        assert other.get("/healthz") == 200
        other.close()
        status = served.stop()
        records = served.records()
    assert status == 0
    assert not [r for r in records if r["level"] in ("ERROR", "CRITICAL") or "exception" in r]
    warnings = [r["message"] for r in records if r["logger"] == "gitreg.connections"]
    assert warnings == [
        "closed an HTTP/2 connection from 127.0.0.1: "
        f"more than {MAX_RESETS} stream resets in a second"
    ]


def test_resets_under_the_bound_and_data_after_an_answer_keep_the_connection(
    catalog: Path, tls: TlsMaterial, tmp_path: Path
) -> None:
    with serving(catalog, tls, tmp_path) as served:
        client = H2Client(served)
        client.flood(MAX_RESETS // 2)  # a browser leaving pages resets some streams
        assert client.get("/healthz") == 200
        # A request whose body comes after its answer (Hypercorn 0.18 dropped the connection).
        stream = client.h2.get_next_available_stream_id()
        assert client.get("/healthz", end_stream=False) == 200
        client.h2.send_data(stream, b"a body after the answer", end_stream=True)
        client.send()
        assert client.get("/v1/modules/infra/vpc/aws/versions") == 200
        client.close()
        status = served.stop()
        records = served.records()
    assert status == 0
    assert not [r for r in records if r["level"] in ("WARNING", "ERROR") or "exception" in r]


def _idle(served: Served) -> ssl.SSLSocket:
    """A TLS connection that asks once, then never reads nor closes: gitreg closes it after
    keep-alive, and its TLS shutdown waits for an answer that never comes."""
    raw = socket.create_connection(("127.0.0.1", served.port), timeout=30)
    sock = served.context.wrap_socket(raw, server_hostname="127.0.0.1")
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    answer = b""
    for _ in range(100):
        answer += sock.recv(65536)
        if answer.endswith(b"}"):
            return sock
    raise AssertionError(f"no whole answer: {answer!r}")


def _dropped(served: Served) -> None:
    """A TLS connection that asks, then vanishes: a reset, no close-notify."""
    raw = socket.create_connection(("127.0.0.1", served.port), timeout=30)
    sock = served.context.wrap_socket(raw, server_hostname="127.0.0.1")
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def _all_readable(socks: list[ssl.SSLSocket]) -> bool:
    """Whether gitreg has written to each (its close-notify: the answer was read already)."""
    for sock in socks:
        readable, _, _ = select.select([sock], [], [], 0)
        if not (readable or sock.pending()):
            return False
    return True


def test_idle_and_abandoned_tls_connections_are_debug_lines_and_the_exit_is_0(
    catalog: Path, tls: TlsMaterial, tmp_path: Path
) -> None:
    idle = 60
    held: list[ssl.SSLSocket] = []
    with serving(catalog, tls, tmp_path) as served, contextlib.ExitStack() as closing:
        for _ in range(idle):
            held.append(closing.enter_context(_idle(served)))
        for _ in range(60):
            _dropped(served)
        # Past Hypercorn's keep-alive (5 s) gitreg closes the idle ones: their TLS shutdowns
        # then wait 30 s for the client's close-notify, and time out during the shutdown, where
        # Hypercorn re-raised the first connection's failure (exit status 1, a traceback).
        wait_until(lambda: _all_readable(held), 60, "gitreg closing the idle connections")
        status = served.stop()
        records = served.records()
    assert status == 0
    assert not [r for r in records if r["level"] in ("ERROR", "CRITICAL") or "exception" in r]
    ended = [
        r["message"]
        for r in records
        if r["logger"] == "gitreg.connections" and r["level"] == "DEBUG"
    ]
    assert (
        ended.count("connection from 127.0.0.1 ended: TimeoutError: SSL shutdown timed out") == idle
    )
    assert records[-1]["message"] == "stopped"
