"""Hypercorn's connections, hardened: a connection's failure ends that connection alone.

A failing connection (a TLS shutdown never answered, a bug in Hypercorn's HTTP/2 code) is one
DEBUG line, not an ERROR with a traceback, nor the exit status 1 at shutdown. HTTP/2 connections
are sent GOAWAY and closed past MAX_RESETS stream resets a second, received or provoked
(CVE-2023-44487, CVE-2025-8671), or past their concurrent streams in requests in flight (a reset
frees h2's slot, not the handler). A closed TLS connection waits TLS_SHUTDOWN_WAIT for
close-notify, not asyncio's 30 s; DATA for a stream already answered is dropped; a handler still
answering when its connection closes ends. Hypercorn 0.18 does none of this and has no hook:
`install` puts these subclasses where it looks them up. See docs/how-it-works/security.md."""

from __future__ import annotations

import asyncio.constants
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any

import h2.connection
import h2.errors
import h2.events
import hypercorn.asyncio.run
import hypercorn.protocol
from hypercorn.asyncio.tcp_server import TCPServer
from hypercorn.config import Config
from hypercorn.events import Closed, Event, RawData
from hypercorn.protocol.events import Event as StreamEvent
from hypercorn.protocol.h2 import H2Protocol
from hypercorn.typing import AppWrapper, ASGIReceiveEvent, ASGISendEvent, Scope, TaskGroup
from hyperframe.frame import Frame, RstStreamFrame

log = logging.getLogger("gitreg.connections")  # its name before process/: operators' filters

TLS_SHUTDOWN_WAIT = 5.0  # seconds a closed TLS connection waits for the client's close-notify
MAX_RESETS = 100  # stream resets, sent or received, one connection may have within one second
WARN_EVERY = 10.0  # seconds: at most one warning line that often, with a count of the others


class GuardedTCPServer(TCPServer):
    """One connection: whatever ends it with an exception ends it alone, said at DEBUG."""

    async def run(self) -> None:
        peer = _peer(self.writer)  # while it can be told: a transport torn down cannot
        try:
            await super().run()
        except Exception as exc:  # a connection's failure is never the server's
            log.debug("connection from %s ended: %s", peer, describe(exc))


class BoundedH2Protocol(H2Protocol):
    """HTTP/2 with a bound on the stream resets each second and on the requests in flight."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # A new class, not a new connection: every setting Hypercorn gave this one is kept.
        self.connection.__class__ = ResetCountingConnection
        self.counting: ResetCountingConnection = self.connection  # type: ignore[assignment]
        self.handlers = Handlers(self.task_group)
        self.task_group = self.handlers  # the streams start their handlers through it
        self.max_in_flight = self.config.h2_max_concurrent_streams
        self.resets: deque[float] = deque(maxlen=MAX_RESETS)  # when the last ones came
        self.calmed = False
        self.last_started = 0  # the last stream whose request reached the app

    async def handle(self, event: Event) -> None:
        if self.calmed and isinstance(event, RawData):
            return  # closing: what the client still sends is not even parsed
        await super().handle(event)
        if isinstance(event, Closed):
            # Nothing sends what handlers still at work write: their waits for it to be sent
            # end now, not at shutdown (Hypercorn leaves them waiting, the connection open).
            for buffer in self.stream_buffers.values():
                await buffer.close()

    async def stream_send(self, event: StreamEvent) -> None:
        if not self.closed:  # once closed, a handler's answer has nowhere to go
            await super().stream_send(event)

    async def _handle_events(self, events: list[h2.events.Event]) -> None:
        # One at a time: whether a stream is still open depends on the events before it.
        for event in events:
            if isinstance(event, SentResets):
                if self._too_many_resets(event.count):
                    await self._calm_down(b"too many stream resets", _rapid_resets)
                    return
                continue
            if isinstance(event, h2.events.StreamReset) and event.remote_reset:
                if self._too_many_resets(1):
                    await self._calm_down(b"too many stream resets", _rapid_resets)
                    return
            elif isinstance(event, h2.events.DataReceived) and event.stream_id not in self.streams:
                length = event.flow_controlled_length or 0
                self.connection.acknowledge_received_data(length, event.stream_id)
                continue
            elif isinstance(event, h2.events.RequestReceived):
                if self._too_many_in_flight():
                    await self._calm_down(b"too many requests in flight", _crowded)
                    return
                self.last_started = event.stream_id
            await super()._handle_events([event])
            # Resets Hypercorn sent itself (a request refused while shutting down).
            if self._too_many_resets(self.counting.take_resets()):
                await self._calm_down(b"too many stream resets", _rapid_resets)
                return

    def _too_many_resets(self, count: int) -> bool:
        now = time.monotonic()
        for _ in range(count):
            if len(self.resets) == MAX_RESETS and now - self.resets[0] < 1.0:
                return True
            self.resets.append(now)
        return False

    def _too_many_in_flight(self) -> bool:
        if self.context.terminated.is_set():
            return False  # Hypercorn refuses the request: no handler starts
        return self.handlers.in_flight >= self.max_in_flight

    async def _calm_down(self, reason: bytes, warnings: _Warnings) -> None:
        self.calmed = True
        warnings.warn(self.client)
        self.connection.close_connection(
            error_code=h2.errors.ErrorCodes.ENHANCE_YOUR_CALM,
            additional_data=reason,
            last_stream_id=self.last_started,  # the streams after it were never started
        )
        await self._flush()
        await self.send(Closed())


class SentResets(h2.events.Event):
    """RST_STREAM frames sent while h2 handled one received frame: put among h2's events, so
    that they are counted in the order the client provoked them."""

    def __init__(self, count: int) -> None:
        self.count = count


class ResetCountingConnection(h2.connection.H2Connection):
    """h2's connection, counting every RST_STREAM frame it sends, whatever provoked it: h2
    answers DATA on a closed stream, a frame on a stream it reset, and stream errors with one
    of its own, inside `receive_data`, without asking."""

    uncounted_resets = 0  # sent, not yet taken by the protocol

    def _prepare_for_sending(self, frames: list[Frame]) -> None:
        # Every frame h2 sends passes here: those it answers with, and those it is told to send.
        self.uncounted_resets += sum(isinstance(frame, RstStreamFrame) for frame in frames)
        super()._prepare_for_sending(frames)

    def _receive_frame(self, frame: Frame) -> list[h2.events.Event]:
        events = super()._receive_frame(frame)
        if not self.uncounted_resets:
            return events
        return [*events, SentResets(self.take_resets())]

    def take_resets(self) -> int:
        count, self.uncounted_resets = self.uncounted_resets, 0
        return count


class Handlers:
    """A connection's task group, counting its requests in flight: from a handler's start until
    it has sent the end of its answer, or returned. A stream's slot in h2 is free once its
    answer ended (the handler sent it: not counted any more) or once it was reset (counted until
    the handler returns)."""

    def __init__(self, task_group: TaskGroup) -> None:
        self.task_group = task_group
        self.in_flight = 0

    async def spawn_app(
        self,
        app: AppWrapper,
        config: Config,
        scope: Scope,
        send: Callable[[ASGISendEvent | None], Awaitable[None]],
    ) -> Callable[[ASGIReceiveEvent], Awaitable[None]]:
        self.in_flight += 1
        answering = True

        async def counted(message: ASGISendEvent | None) -> None:
            nonlocal answering
            if answering and _ends_answer(message):
                answering = False
                self.in_flight -= 1
            await send(message)

        return await self.task_group.spawn_app(app, config, scope, counted)

    def spawn(self, func: Callable[..., Any], *args: Any) -> None:
        self.task_group.spawn(func, *args)

    async def __aenter__(self) -> TaskGroup:
        return await self.task_group.__aenter__()

    async def __aexit__(self, exc_type: type, exc_value: BaseException, tb: TracebackType) -> None:
        await self.task_group.__aexit__(exc_type, exc_value, tb)


def _ends_answer(message: ASGISendEvent | None) -> bool:
    """Whether a handler is done answering with `message` (None: it returned)."""
    if message is None:
        return True
    if message["type"] == "http.response.body":
        return not message.get("more_body", False)
    if message["type"] == "http.response.trailers":
        return not message.get("more_trailers", False)
    return False


class _Warnings:
    """A warning per closed connection, at most one line every WARN_EVERY seconds: a client
    opening connection after connection does not flood the log."""

    def __init__(self, why: str) -> None:
        self.why = why
        self.last = -WARN_EVERY
        self.unsaid = 0

    def warn(self, client: tuple[str, int] | None) -> None:
        now = time.monotonic()
        if now - self.last < WARN_EVERY:
            self.unsaid += 1
            return
        others = f" (and {self.unsaid} more since the last line)" if self.unsaid else ""
        log.warning(
            "closed an HTTP/2 connection from %s: %s%s",
            client[0] if client else "-",
            self.why,
            others,
        )
        self.last, self.unsaid = now, 0


_rapid_resets = _Warnings(f"more than {MAX_RESETS} stream resets in a second")
_crowded = _Warnings("more requests in flight than its concurrent streams")


def describe(exc: BaseException) -> str:
    """`Type: message` of an exception, or of each one an exception group holds."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(describe(inner) for inner in exc.exceptions)
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _peer(writer: Any) -> str:
    try:
        peer = writer.get_extra_info("peername")
    except Exception:  # a transport torn down answers oddly
        return "-"
    return str(peer[0]) if peer else "-"


def install() -> None:
    """Serve every connection Hypercorn's asyncio server accepts from now on with these."""
    setattr(hypercorn.asyncio.run, "TCPServer", GuardedTCPServer)  # noqa: B010
    setattr(hypercorn.protocol, "H2Protocol", BoundedH2Protocol)  # noqa: B010
    # A TLS connection gitreg closes waits for the client's close-notify: asyncio's 30 s by
    # default (Hypercorn passes no other), a socket held that long by each client that left
    # without one. Its SSLProtocol reads this when the connection is made.
    asyncio.constants.SSL_SHUTDOWN_TIMEOUT = TLS_SHUTDOWN_WAIT
