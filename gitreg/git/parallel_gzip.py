"""A gzip stream deflated in fixed blocks on several threads, as pigz does.

The bytes are the same whatever the number of threads: the stream is cut every BLOCK bytes of
input however it is written, and each block's deflate depends only on its bytes and the 32 KiB
before them (`deflate_blocks.py`); joined in order, the blocks are one deflate stream any gunzip
reads. zlib lets go of the GIL while it deflates, so blocks deflate on every core while the
writer's thread makes the next. Against one zlib stream: about the same size (each block adds a
few bytes), other bytes (hence the archives' FORMAT_VERSION 2), the same promise (zlib's deflate
has one code path whatever the CPU). See docs/how-it-works/internals.md."""

from __future__ import annotations

import collections
import os
import zlib
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType
from typing import BinaryIO

from gitreg.git.deflate_blocks import WINDOW, deflate_block

# Part of the bytes (as deflate_blocks' constants are): a change changes every archive (a new
# FORMAT_VERSION of the archives). The number of threads is not.
BLOCK = 256 * 1024
# What Python's gzip module writes at level 6 with no name and no time: flags none, mtime 0,
# no extra flag, OS "unknown".
HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
MAX_THREADS = 4


class ParallelGzip:
    """A write-only file whose bytes reach `out` gzipped, in order, deflated a block at a time
    by up to `threads` threads (no thread at all for a stream of one block). At most twice as
    many blocks wait as there are threads, so memory stays bounded. The gzip stream is complete
    when the block ends normally; on an exception, what was written to `out` is a fragment."""

    def __init__(self, out: BinaryIO, threads: int | None = None) -> None:
        self._out = out
        self._threads = threads or min(MAX_THREADS, os.cpu_count() or 1)
        self._pool: ThreadPoolExecutor | None = None
        self._pending: collections.deque[Future[bytes]] = collections.deque()
        self._buffer = bytearray()
        self._window = b""
        self._crc = 0
        self._size = 0
        out.write(HEADER)

    def write(self, data: bytes) -> int:
        self._buffer += data
        while len(self._buffer) >= BLOCK:
            block = bytes(self._buffer[:BLOCK])
            del self._buffer[:BLOCK]
            self._submit(block, last=False)
        return len(data)

    def tell(self) -> int:  # tarfile asks
        return self._size + len(self._buffer)

    def _submit(self, block: bytes, last: bool) -> None:
        self._crc = zlib.crc32(block, self._crc)
        self._size += len(block)
        window, self._window = self._window, block[-WINDOW:]
        if last:
            # Deflated here, while the threads finish the blocks before it (a stream of one
            # block, most modules', starts no thread at all).
            deflated = deflate_block(block, window, last)
            while self._pending:
                self._out.write(self._pending.popleft().result())
            self._out.write(deflated)
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix="gitreg-gzip")
        self._pending.append(self._pool.submit(deflate_block, block, window, last))
        while len(self._pending) > 2 * self._threads:
            self._out.write(self._pending.popleft().result())

    def __enter__(self) -> ParallelGzip:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            if kind is None:
                self._submit(bytes(self._buffer), last=True)
                self._buffer.clear()
                self._out.write(self._crc.to_bytes(4, "little"))
                self._out.write((self._size & 0xFFFFFFFF).to_bytes(4, "little"))
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True, cancel_futures=True)
