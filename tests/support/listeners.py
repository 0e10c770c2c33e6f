"""A listener on 127.0.0.1 that counts the connections made to it and never answers: where a
test proves gitreg never went (the count stays 0), or an origin that accepts and then stalls
(with `tls`, it completes the handshake first, so the client waits for an answer)."""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading

import pytest

from gitreg.process.tlscert import TlsMaterial


class SilentListener:
    def __init__(self, tls: TlsMaterial | None = None, port: int = 0) -> None:
        self.socket = socket.create_server(("127.0.0.1", port))
        self.socket.settimeout(0.1)
        self.context: ssl.SSLContext | None = None
        if tls is not None:
            self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            self.context.load_cert_chain(tls.certfile, tls.keyfile)
        self._accepted = 0
        self._held: list[socket.socket] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    @property
    def port(self) -> int:
        return int(self.socket.getsockname()[1])

    @property
    def accepted(self) -> int:
        with self._lock:
            return self._accepted

    def __enter__(self) -> SilentListener:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop accepting and close every connection held: the clients stalled on it fail."""
        self._stop.set()
        self._thread.join(timeout=5)
        self.socket.close()
        with self._lock:
            for connection in self._held:
                with contextlib.suppress(OSError):
                    connection.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.socket.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self._lock:
                self._accepted += 1
                self._held.append(connection)
            if self.context is not None:
                threading.Thread(target=self._handshake, args=(connection,), daemon=True).start()

    def _handshake(self, connection: socket.socket) -> None:
        assert self.context is not None
        connection.settimeout(5)
        with contextlib.suppress(OSError):
            secure = self.context.wrap_socket(connection, server_side=True)
            with self._lock:
                self._held.append(secure)  # held open, and never answered


def on_port_443() -> SilentListener:
    """A listener where https://127.0.0.1/ and https://localhost/ go; the test is skipped where
    port 443 cannot be bound (it takes root, or a lowered net.ipv4.ip_unprivileged_port_start)."""
    try:
        return SilentListener(port=443)
    except OSError as exc:
        pytest.skip(f"cannot listen on 127.0.0.1:443 here: {exc}")
