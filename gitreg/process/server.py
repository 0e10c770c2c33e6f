"""Running the app under Hypercorn, embedded: TLS with HTTP/2 and HTTP/1.1, clean shutdown.

What can stop a start (a taken address, TLS files that cannot be used) is checked before the
repositories are read, and reported as one line: Hypercorn would find it only after its
lifespan started, and end in a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import errno
import gc
import logging
import os
import signal
import socket
import ssl
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from hypercorn.asyncio import serve
from hypercorn.config import Config

from gitreg.catalog.settings import TLS_KEYS, Listen, TlsFiles
from gitreg.errors import StartupError
from gitreg.process import connections

log = logging.getLogger("gitreg.server")  # its name before process/: operators' filters

DEFAULT_GRACE = 20.0  # Kubernetes sends SIGKILL 30 s after SIGTERM by default: 10 s to spare
# After the grace period: the lifespan's shutdown (background work, clients of origins).
SHUTDOWN_MOST = 5.0


def longest_stop(shutdown_grace: float) -> float:
    """The longest a stop signal takes to end a server process: requests in flight get the
    grace, then closing takes SHUTDOWN_MOST at most. What waits for it before a SIGKILL
    (`docker stop -t`, terminationGracePeriodSeconds, TimeoutStopSec) must wait longer."""
    return shutdown_grace + SHUTDOWN_MOST


# An ASGI application, typed as Starlette types one (scope, receive, send), so that serving it
# needs no Starlette here: only web/ imports Starlette.
Message = MutableMapping[str, Any]
AsgiApp = Callable[
    [Message, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]],
    Awaitable[None],
]


class WorkerConfig(Config):
    """Hypercorn's config for one of several workers: its responses say which one answered
    (`X-Gitreg-Worker: N`), as a load balancer's `X-Served-By` would."""

    def __init__(self, worker: int) -> None:
        super().__init__()
        self.worker_header = (b"x-gitreg-worker", str(worker).encode())

    def response_headers(self, protocol: str) -> list[tuple[bytes, bytes]]:
        return [*super().response_headers(protocol), self.worker_header]


def hypercorn_config(
    listen: Listen,
    tls: TlsFiles | None,
    shutdown_grace: float = DEFAULT_GRACE,
    worker: int | None = None,
) -> Config:
    connections.install()  # a connection's failure is its own; HTTP/2 resets are bounded
    config = Config() if worker is None else WorkerConfig(worker)
    config.bind = [str(listen)]
    config.alpn_protocols = ["h2", "http/1.1"]
    config.graceful_timeout = shutdown_grace  # what requests in flight get after a stop signal
    config.accesslog = None  # the app writes its own (gitreg.access), with ids and routes
    # No `Server: hypercorn-h11`: it tells a scanner what to try, and each answer is a header
    # shorter (every header is checked twice, by Hypercorn and by h11, then written).
    config.include_server_header = False
    config.errorlog = logging.getLogger("hypercorn.error")  # through our handlers, once
    if tls:
        config.certfile = str(tls.certfile)
        config.keyfile = str(tls.keyfile)
    return config


class SharingLoop(asyncio.SelectorEventLoop):
    """The event loop of one of several workers on one listening socket: it accepts one
    connection each time the socket wakes it, not as many as wait (asyncio's way, up to the
    backlog). Every worker is woken by a connection; the first awake would otherwise take a
    whole burst of them (wrk's 32 keep-alive connections all went to one of two workers here),
    while one at a time lets each take its turn, and a busy worker, slower to come back, fewer."""

    def _start_serving(self, *args: Any, **kwargs: Any) -> None:
        # (protocol_factory, sock, sslcontext, server, backlog, ...): only the accepts per
        # wake-up change; the socket's listen backlog is Hypercorn's, set apart from this.
        if len(args) > 4:
            args = (*args[:4], 1, *args[5:])
        else:
            kwargs["backlog"] = 1
        super()._start_serving(*args, **kwargs)  # type: ignore[misc]


def bind(listen: Listen, probe: bool = False) -> socket.socket:
    """A socket bound to `listen`, not listening yet: a taken address is refused at once, and
    clients are refused, rather than left waiting, until serving begins. A `probe` (`gitreg
    check`'s) shares the address with other probes, never with a server, which shares it with
    nothing: two checks at once both pass, and a server running there fails either."""
    family = socket.AF_INET6 if ":" in listen.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Hypercorn would
        if probe:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((listen.host, listen.port))
    except OSError as exc:
        sock.close()
        why = _why(exc)
        if exc.errno == errno.EACCES and listen.port < 1024:
            why += " (a port below 1024 needs root, or CAP_NET_BIND_SERVICE)"
        raise StartupError(f"cannot listen on {listen}: {why}") from exc
    return sock


def check_tls(tls: TlsFiles, keys: tuple[str, str] = TLS_KEYS) -> None:
    """Refuse TLS files that Hypercorn could not load, saying which and why; `keys` are the
    names the operator gave them (registry.yaml's keys, or the flags)."""
    cert_key, key_key = keys
    cert_text = _read(tls.certfile, cert_key)
    key_text = _read(tls.keyfile, key_key)
    try:
        certificate = x509.load_pem_x509_certificates(cert_text)[0]  # the server's, then a chain
    except ValueError as exc:
        raise StartupError(f"{cert_key} {tls.certfile}: holds no PEM certificate", 2) from exc
    try:
        key = serialization.load_pem_private_key(key_text, None)
    except TypeError as exc:  # cryptography's word for "encrypted, and no password given"
        raise StartupError(
            f"{key_key} {tls.keyfile}: is protected by a passphrase, which gitreg cannot ask for",
            2,
        ) from exc
    except ValueError as exc:
        raise StartupError(f"{key_key} {tls.keyfile}: holds no PEM private key", 2) from exc
    if key.public_key() != certificate.public_key():
        raise StartupError(
            f"{key_key} {tls.keyfile}: does not match {cert_key} {tls.certfile} "
            "(it is not the key the certificate was made for)",
            2,
        )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(tls.certfile, tls.keyfile)  # what Hypercorn will do
    except ssl.SSLError as exc:
        raise StartupError(f"{cert_key}, {key_key}: {exc.reason or exc}", 2) from exc
    now = datetime.datetime.now(datetime.UTC)
    if not certificate.not_valid_before_utc <= now <= certificate.not_valid_after_utc:
        log.warning(
            "%s %s is valid from %s to %s only: clients will refuse it",
            cert_key,
            tls.certfile,
            f"{certificate.not_valid_before_utc:%Y-%m-%d %H:%M}",
            f"{certificate.not_valid_after_utc:%Y-%m-%d %H:%M} UTC",
        )


def _read(path: Path, key: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise StartupError(f"{key} {path}: {_why(exc)}", 2) from exc


def _why(exc: OSError) -> str:
    if exc.errno == errno.ENOENT:
        return "no such file"
    reason = exc.strerror or str(exc)
    return reason[:1].lower() + reason[1:]


async def serve_until_signalled(
    app: AsgiApp,
    config: Config,
    sock: socket.socket,
    on_hangup: Callable[[], Awaitable[object]] | None = None,
    on_stop: Callable[[], Awaitable[object]] | None = None,
) -> None:
    """Serve on `sock` (from `bind`) until SIGINT or SIGTERM; SIGHUP calls on_hangup.

    On the first stop signal: stop accepting connections (the socket is closed, so new ones are
    refused), call on_stop (the background work stops), and give requests in flight
    config.graceful_timeout seconds to finish; the connections still open then are closed. A
    second signal closes them at once."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    grace = config.graceful_timeout
    # Hypercorn's own timer becomes a backstop: when it runs out it cancels the connections, but
    # one whose client reads nothing never finishes closing (its unsent bytes wait for the
    # client), and Hypercorn then fails on its own bookkeeping. We close those ourselves first.
    config.graceful_timeout = grace + SHUTDOWN_MOST
    background: set[asyncio.Task[object]] = set()
    where = _address(sock)
    cut_short = asyncio.Event()

    def spawn(work: Callable[[], Awaitable[object]]) -> None:
        task = asyncio.ensure_future(work())
        background.add(task)
        task.add_done_callback(background.discard)

    def stopping() -> None:
        if stop.is_set():
            log.warning("stopping now, without waiting for requests in flight")
            cut_short.set()
            return
        stop.set()
        with contextlib.suppress(ValueError, RuntimeError):
            loop.remove_signal_handler(signal.SIGHUP)  # no reload while stopping
        log.info("stopping: no new connections; requests in flight have %g s to finish", grace)
        if on_stop is not None:
            spawn(on_stop)

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stopping)
    if on_hangup is not None:
        loop.add_signal_handler(signal.SIGHUP, spawn, on_hangup)
    try:
        sock.listen(config.backlog)  # from here on, connections wait for Hypercorn to accept
    except OSError as exc:  # another socket took the port between bind and listen
        sock.close()
        raise StartupError(f"cannot listen on {where}: {_why(exc)}") from exc
    config.bind = [f"fd://{sock.detach()}"]  # Hypercorn serves, and later closes, our socket
    scheme = "https" if config.ssl_enabled else "http"
    log.info("serving on %s://%s", scheme, where)
    if not config.ssl_enabled:
        log.warning(
            "serving plain HTTP: Terraform only talks HTTPS to a registry, "
            "so put a TLS-terminating proxy in front, or give --certfile and --keyfile "
            "(or tls: in registry.yaml; gitreg cert makes a pair)"
        )
    loop.set_exception_handler(_quiet_about_clients)
    serving = asyncio.ensure_future(serve(app, config, shutdown_trigger=stop.wait))  # type: ignore[arg-type]
    try:
        await _drained(serving, stop, cut_short, grace, where.port)
    except (ssl.SSLError, ConnectionError) as exc:
        if not stop.is_set():
            raise
        # Hypercorn's graceful shutdown waits for every connection and re-raises the first one
        # that failed; a client that broke TLS while we stopped is no failure of ours.
        log.debug("a client connection failed during shutdown: %s", exc)
    log.info("stopped")


async def _drained(
    serving: asyncio.Future[None],
    stop: asyncio.Event,
    cut_short: asyncio.Event,
    grace: float,
    port: int,
) -> None:
    """Wait for `serving` to end; once `stop` is set, for `grace` seconds (or until `cut_short`),
    then close the connections still open and wait SHUTDOWN_MOST more at most."""
    await _first(serving, stop)
    if serving.done():
        return serving.result()
    await _first(serving, cut_short, timeout=grace)
    if serving.done():
        return serving.result()
    aborted = abort_connections(port)
    if aborted:
        why = "a second signal" if cut_short.is_set() else "the grace period is over"
        log.warning("%s: closed the %d connections still open", why, aborted)
    await _first(serving, asyncio.Event(), timeout=SHUTDOWN_MOST)
    if serving.done():
        return serving.result()
    log.warning("shutdown still under way after %g s more: stopping without it", SHUTDOWN_MOST)
    serving.cancel()


async def _first(
    serving: asyncio.Future[None], event: asyncio.Event, timeout: float | None = None
) -> None:
    """Until `serving` ends or `event` is set, or `timeout` seconds have passed."""
    waiting: asyncio.Future[Any] = asyncio.ensure_future(event.wait())
    try:
        await asyncio.wait({serving, waiting}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiting.cancel()


def abort_connections(port: int) -> int:
    """Abort every client connection to our `port` (it is not told apart otherwise: Hypercorn
    keeps its connections to itself, so they are found among the live objects; this runs once,
    at the end of a shutdown). Unsent bytes are dropped. Returns how many were aborted."""
    aborted: set[object] = set()  # peers: a TLS transport and the one under it are one
    # gc.get_objects() does not list frozen objects, and a refreeze (gitreg.process.heap) freezes
    # the connections open at that moment: thawed, they are found again (the process is stopping).
    gc.unfreeze()
    for thing in gc.get_objects():
        if not isinstance(thing, asyncio.Transport):
            continue
        with contextlib.suppress(Exception):  # a transport half torn down answers oddly
            local, peer = thing.get_extra_info("sockname"), thing.get_extra_info("peername")
            open_socket = thing.get_extra_info("socket")
            if peer and local and local[1] == port and open_socket.fileno() >= 0:
                thing.abort()
                aborted.add(peer)
    return len(aborted)


def _quiet_about_clients(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """What asyncio says about one client's connection (bad TLS records, data after
    close-notify, a reset, a TLS shutdown the client never answered, a connection's task left
    pending at exit) ends that connection: one debug line, not an ERROR with a traceback per
    connection. Anything else is asyncio's to report, as it would."""
    if _about_a_connection(context):
        exc = context.get("exception")
        message = str(context.get("message", "")).split("\n", 1)[0]
        log.debug("client connection ended: %s", connections.describe(exc) if exc else message)
        return
    loop.default_exception_handler(context)


# What asyncio's streams and TLS transports say when a connection fails.
_CONNECTION_MESSAGES = (
    "Unhandled exception in client_connected_cb",
    "Fatal error on SSL transport",
    "Fatal error on transport",
    "Fatal read error on socket transport",
    "Fatal write error on socket transport",
    "SSL error in data received",
    "SSL handshake failed",
)


def _about_a_connection(context: dict[str, Any]) -> bool:
    message = str(context.get("message", ""))
    if message.startswith("Task was destroyed but it is pending"):
        task = context.get("task")
        coroutine = task.get_coro() if isinstance(task, asyncio.Task) else None
        code = getattr(coroutine, "cr_code", None)
        return code is not None and f"{os.sep}hypercorn{os.sep}" in code.co_filename
    if not message.startswith(_CONNECTION_MESSAGES):
        return False
    exc = context.get("exception")
    # SSLError, ConnectionError and TimeoutError ("SSL shutdown timed out") are all OSErrors.
    return exc is None or isinstance(exc, OSError)


def _address(sock: socket.socket) -> Listen:
    host, port, *_ = sock.getsockname()
    return Listen(host, port)
