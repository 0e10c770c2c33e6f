"""Hypercorn's connections, hardened: a connection's failure ends that connection alone.

- A connection that fails (a TLS shutdown its client never answers, a bug in Hypercorn's HTTP/2
  code) is one DEBUG line. Unguarded, it is an ERROR with a traceback while serving, and at
  shutdown Hypercorn re-raises the first failure of a connection still open: the exit status 1.
- An HTTP/2 client that resets more than MAX_RESETS streams in a second (CVE-2023-44487, "rapid
  reset": each HEADERS starts a request, each RST_STREAM drops it at once) is sent GOAWAY with
  ENHANCE_YOUR_CALM and closed. Hypercorn 0.18 has no such bound: it only sends GOAWAY (and
  keeps reading) after `keep_alive_max_requests` (1,000) requests on a connection.
- DATA for a stream already answered (a client may send its body after an early answer) is
  acknowledged and dropped: Hypercorn 0.18 ends the whole connection on it (a KeyError).

Hypercorn has no hook for these: its TCPServer (one per connection) and H2Protocol are
subclassed here, and `install` puts the subclasses where Hypercorn's asyncio server looks
them up by name.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from typing import Any

import h2.errors
import h2.events
import hypercorn.asyncio.run
import hypercorn.protocol
from hypercorn.asyncio.tcp_server import TCPServer
from hypercorn.events import Closed, Event, RawData
from hypercorn.protocol.h2 import H2Protocol

log = logging.getLogger(__name__)

MAX_RESETS = 100  # stream resets a client may send on one connection within one second
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
    """HTTP/2 with a bound on the streams a client resets each second."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.resets: deque[float] = deque(maxlen=MAX_RESETS)  # when the last ones came
        self.calmed = False
        self.last_started = 0  # the last stream whose request reached the app

    async def handle(self, event: Event) -> None:
        if self.calmed and isinstance(event, RawData):
            return  # closing: what the client still sends is not even parsed
        await super().handle(event)

    async def _handle_events(self, events: list[h2.events.Event]) -> None:
        # One at a time: whether a stream is still open depends on the events before it.
        for event in events:
            if isinstance(event, h2.events.StreamReset) and event.remote_reset:
                if self._one_reset_too_many():
                    await self._calm_down()
                    return
            elif isinstance(event, h2.events.DataReceived) and event.stream_id not in self.streams:
                length = event.flow_controlled_length or 0
                self.connection.acknowledge_received_data(length, event.stream_id)
                continue
            elif isinstance(event, h2.events.RequestReceived):
                self.last_started = event.stream_id
            await super()._handle_events([event])

    def _one_reset_too_many(self) -> bool:
        now = time.monotonic()
        if len(self.resets) == MAX_RESETS and now - self.resets[0] < 1.0:
            return True
        self.resets.append(now)
        return False

    async def _calm_down(self) -> None:
        self.calmed = True
        _rapid_resets.warn(self.client)
        self.connection.close_connection(
            error_code=h2.errors.ErrorCodes.ENHANCE_YOUR_CALM,
            additional_data=b"too many stream resets",
            last_stream_id=self.last_started,  # the streams after it were never started
        )
        await self._flush()
        await self.send(Closed())


class _Warnings:
    """A warning per closed connection, at most one line every WARN_EVERY seconds: a client
    opening connection after connection does not flood the log."""

    def __init__(self) -> None:
        self.last = -WARN_EVERY
        self.unsaid = 0

    def warn(self, client: tuple[str, int] | None) -> None:
        now = time.monotonic()
        if now - self.last < WARN_EVERY:
            self.unsaid += 1
            return
        others = f" (and {self.unsaid} more since the last line)" if self.unsaid else ""
        log.warning(
            "closed an HTTP/2 connection from %s: more than %d stream resets in a second%s",
            client[0] if client else "-",
            MAX_RESETS,
            others,
        )
        self.last, self.unsaid = now, 0


_rapid_resets = _Warnings()


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
