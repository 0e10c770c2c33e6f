"""Module archives held in memory, within a byte budget per process, and answered from there.
An archive from the archive cache is answered without a thread-pool round trip at every step:
a small one is held with its headers, the least recently sent dropped first; a larger one is
streamed from one open file, a large chunk a read. Which cache serves what:
docs/how-it-works/internals.md."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections import OrderedDict
from dataclasses import dataclass, field
from email.utils import formatdate
from pathlib import Path
from typing import BinaryIO

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from gitreg.errors import ArchiveError

CHUNK = 1024 * 1024  # bytes a read of a streamed archive asks for: a thread round trip a MiB
HELD_SHARE = 16  # an archive over this share of the budget is streamed, never held
ENTRY_COST = 1536  # bytes an entry costs besides its body (measured: ~1.2 KiB): headers, name, slot

Headers = tuple[tuple[bytes, bytes], ...]


@dataclass(frozen=True)
class HeldArchive:
    """An archive's bytes and the headers its answer carries after ETag and Cache-Control."""

    body: bytes
    etag: bytes
    rest: Headers
    # Every header, by the Cache-Control sent (public or private): made once for each.
    whole: dict[str, Headers] = field(default_factory=dict)

    @property
    def cost(self) -> int:
        return len(self.body) + ENTRY_COST


class HeldArchives:
    """The archives of one kind (`media_type`) held in memory, and the answers made of them and
    of the larger ones' files, for one process: workers hold their own. Headers are those
    Starlette's FileResponse sent, in its order, so that an archive reads the same from memory,
    from its file, or from FileResponse (which still answers a Range)."""

    def __init__(self, budget: int, media_type: str = "application/gzip") -> None:
        self.budget = budget
        self.largest = budget // HELD_SHARE if budget else -1  # no budget: nothing is read whole
        self.media_type = media_type.encode("latin-1")
        self._held: OrderedDict[str, HeldArchive] = OrderedDict()
        self._held_bytes = 0

    @property
    def held_bytes(self) -> int:
        """What the archives held cost, bodies and entries: never over the budget."""
        return self._held_bytes

    def __len__(self) -> int:
        return len(self._held)

    def __contains__(self, name: object) -> bool:
        """Whether archive `name` is held; it is not sent, so not made more recent."""
        return name in self._held

    def held(self, name: str, cache_control: str) -> Response | None:
        """The answer of archive `name` when it is held (now the most recently sent), else None."""
        parts = self.held_parts(name, cache_control)
        if parts is None:
            return None
        return HeldAnswer(parts[1], list(parts[0]))  # a list of its own: middleware adds to it

    def held_parts(self, name: str, cache_control: str) -> tuple[Headers, bytes] | None:
        """The headers and body of archive `name`'s answer when it is held (now the most
        recently sent), else None."""
        archive = self._held.get(name)
        if archive is None:
            return None
        self._held.move_to_end(name)
        headers = archive.whole.get(cache_control)
        if headers is None:
            headers = archive.whole[cache_control] = tuple(
                _headers(archive.etag, cache_control, archive.rest)
            )
        return headers, archive.body

    async def of_file(self, path: Path, name: str, etag: str, cache_control: str) -> Response:
        """The answer of archive `name` from its file: read whole, and held, when the budget
        takes it; else streamed from the file, opened here. One thread round trip either way."""
        try:
            body, file, size, mtime = await asyncio.to_thread(_opened, path, self.largest)
        except FileNotFoundError as exc:  # cache_dir emptied under us: the next request builds it
            raise ArchiveError(f"archive {name} was removed as it was sent: try again") from exc
        rest = (
            (b"content-type", self.media_type),
            (b"accept-ranges", b"bytes"),
            (b"content-length", str(size).encode("latin-1")),
            (b"last-modified", formatdate(mtime, usegmt=True).encode("latin-1")),
        )
        headers = _headers(etag.encode("latin-1"), cache_control, rest)
        if file is not None:
            return StreamedAnswer(file, size, headers)
        assert body is not None
        self._hold(name, HeldArchive(body, etag.encode("latin-1"), rest))
        return HeldAnswer(body, headers)

    def _hold(self, name: str, archive: HeldArchive) -> None:
        if archive.cost > self.budget:  # a budget under ENTRY_COST: nothing ever fits
            return
        previous = self._held.pop(name, None)
        if previous is not None:  # two requests read it at once: the second replaces the first
            self._held_bytes -= previous.cost
        while self._held and self._held_bytes + archive.cost > self.budget:
            _, dropped = self._held.popitem(last=False)
            self._held_bytes -= dropped.cost
        self._held[name] = archive
        self._held_bytes += archive.cost


def _headers(etag: bytes, cache_control: str, rest: Headers) -> list[tuple[bytes, bytes]]:
    # A list of its own each time: a middleware may add to it.
    return [(b"etag", etag), (b"cache-control", cache_control.encode("latin-1")), *rest]


def _opened(path: Path, largest: int) -> tuple[bytes | None, BinaryIO | None, int, float]:
    """The file's bytes when it is no larger than `largest`, else the file itself, open; its
    size and modification time."""
    file = path.open("rb")
    streamed = False
    try:
        status = os.fstat(file.fileno())
        if status.st_size > largest:
            streamed = True
            return None, file, status.st_size, status.st_mtime
        return file.read(), None, status.st_size, status.st_mtime
    finally:
        if not streamed:
            file.close()


class HeldAnswer(Response):
    """An archive from memory: its answer sent in two messages, whatever its size."""

    def __init__(self, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
        self.status_code = 200
        self.background = None
        self.body = body
        self.raw_headers = headers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
        body = b"" if scope["method"] == "HEAD" else self.body
        await send({"type": "http.response.body", "body": body, "more_body": False})


class StreamedAnswer(Response):
    """An archive too large to hold, sent from its open file a CHUNK at a time (Hypercorn 0.18
    has no `http.response.pathsend`); the reads stop when the client leaves."""

    def __init__(self, file: BinaryIO, size: int, headers: list[tuple[bytes, bytes]]) -> None:
        self.status_code = 200
        self.background = None
        self.file = file
        self.size = size
        self.raw_headers = headers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        with self.file:
            await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
            if scope["method"] == "HEAD" or self.size == 0:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                return
            gone = asyncio.Event()
            watcher = asyncio.create_task(_until_disconnect(receive, gone))
            try:
                left = self.size
                while left > 0 and not gone.is_set():
                    chunk = await asyncio.to_thread(self.file.read, min(CHUNK, left))
                    if not chunk:  # shorter than its size said: end the answer, not the process
                        raise OSError(f"{self.file.name} ended {left} bytes early")
                    left -= len(chunk)
                    await send({"type": "http.response.body", "body": chunk, "more_body": left > 0})
            finally:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher


async def _until_disconnect(receive: Receive, gone: asyncio.Event) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    gone.set()
