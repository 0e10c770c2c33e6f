"""HTTP/2 clients for tests, over TLS to 127.0.0.1: one driven frame by frame with the h2
library, and frames written by hand where h2 refuses to send them."""

from __future__ import annotations

import contextlib
import socket
import ssl
from typing import Protocol

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import hpack
from hyperframe.frame import DataFrame, Frame, GoAwayFrame, HeadersFrame

_REQUEST = [(":method", "GET"), (":scheme", "https"), (":authority", "127.0.0.1")]


class Listening(Protocol):
    """A server on 127.0.0.1 over TLS: `gitreg serve`, or Hypercorn in this process."""

    @property
    def port(self) -> int: ...

    @property
    def context(self) -> ssl.SSLContext: ...


class H2Client:
    """One HTTP/2 connection over TLS, driven frame by frame with the h2 library."""

    def __init__(self, served: Listening) -> None:
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

    def get_all(self, paths: list[str]) -> list[int]:
        """The statuses of GET each of `paths`, all asked at once on streams of their own."""
        streams = []
        for path in paths:
            streams.append(self.h2.get_next_available_stream_id())
            self.h2.send_headers(streams[-1], [*_REQUEST, (":path", path)], end_stream=True)
        self.send()
        statuses: dict[int, int] = {}
        ended: set[int] = set()
        for _ in range(10_000):
            for event in self.receive():
                if isinstance(event, h2.events.ResponseReceived) and event.stream_id is not None:
                    statuses[event.stream_id] = int(dict(event.headers)[b":status"])
                if isinstance(event, h2.events.StreamEnded):
                    ended.add(event.stream_id or 0)
            if ended >= set(streams):
                return [statuses.get(stream, 0) for stream in streams]
        raise AssertionError(f"answers to {len(ended)} of {len(paths)} requests")

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


class RawFrames:
    """Frames written by hand on an H2Client's connection, where h2 refuses to send them (DATA
    after a request's END_STREAM), and the server's frames read without a client state."""

    def __init__(self, client: H2Client) -> None:
        self.sock = client.sock  # only its preface and SETTINGS were sent: no HPACK state yet
        self.encoder = hpack.Encoder()
        self.next_stream = client.h2.get_next_available_stream_id()
        self.frames: list[Frame] = []  # the server's, in order

    def request(self, data_after_end: bool) -> bytes:
        """GET /healthz on a new stream, ending with its HEADERS; with `data_after_end`, a DATA
        frame follows on the closed side of the stream (MadeYouReset): h2 in the server answers
        it with RST_STREAM(STREAM_CLOSED)."""
        stream, self.next_stream = self.next_stream, self.next_stream + 2
        headers = HeadersFrame(stream, flags=["END_HEADERS", "END_STREAM"])
        headers.data = self.encoder.encode([*_REQUEST, (":path", "/healthz")])
        written = headers.serialize()
        if data_after_end:
            written += DataFrame(stream, data=b"x").serialize()
        return written

    def made_you_reset(self, streams: int) -> None:
        """`streams` requests, each followed by DATA on its closed side, as fast as they go."""
        try:
            for first in range(0, streams, 50):
                batch = min(50, streams - first)
                self.sock.sendall(b"".join(self.request(True) for _ in range(batch)))
        except OSError:
            pass  # the server closed while we were still sending: what the test expects

    def until_closed(self) -> GoAwayFrame | None:
        """Read until the server closes the connection; its GOAWAY, if it sent one."""
        buffer = b""
        for _ in range(100_000):
            try:
                data = self.sock.recv(65536)
            except (ssl.SSLError, ConnectionError):
                break
            if not data:
                break
            buffer += data
            while len(buffer) >= 9:
                frame, length = Frame.parse_frame_header(memoryview(buffer[:9]))
                if len(buffer) < 9 + length:
                    break
                frame.parse_body(memoryview(buffer[9 : 9 + length]))
                self.frames.append(frame)
                buffer = buffer[9 + length :]
        goaways = [frame for frame in self.frames if isinstance(frame, GoAwayFrame)]
        return goaways[-1] if goaways else None
