"""One block of a gzip stream as raw deflate, on its own: its bytes depend only on the block and
the window before it, so that blocks can be deflated on several threads in any order.

The block is looked at in segments: a segment in which samples find nothing to compress (random
bytes, or already compressed ones: a zip, an image) is stored as it is, as deflate would store
it, without the search for matches that finds none (it costs as much as on text, and such bytes
are often half an archive's); runs of the others are deflated by Python's zlib at LEVEL, primed
with the 32 KiB before them. Every run starts and ends on a byte boundary (a sync flush ends a
deflated run), so the runs, and the blocks, join into one deflate stream.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

# Each of these is part of the bytes: a change of one changes every archive (a new
# FORMAT_VERSION of the archives).
LEVEL = 6
WINDOW = 32 * 1024  # how far back deflate's matches reach
SEGMENT = 16 * 1024  # the unit that is stored or deflated
SAMPLE = 1024  # two of them a segment, at its start and its middle
SAVING = 0.97  # a sample that deflates (level 1, alone, small tables) below this share compresses
STORED_MAX = 65_535  # deflate's largest stored block


def deflate_block(block: bytes, window: bytes, last: bool) -> bytes:
    """`block` as raw deflate, its matches reaching into `window` (the bytes just before it);
    the stream's end when `last`, else ending on a byte boundary."""
    out = []
    runs = list(_runs(block))
    for n, (start, end, compressible) in enumerate(runs):
        final = last and n == len(runs) - 1
        if compressible:
            before = (
                window[len(window) - max(0, WINDOW - start) :]
                + block[max(0, start - WINDOW) : start]
            )
            out.append(_deflated(block[start:end], before, final))
        else:
            out.append(stored(block[start:end], final))
    return b"".join(out)


def _runs(block: bytes) -> Iterator[tuple[int, int, bool]]:
    """(start, end, compressible) of the block's runs of segments of one kind, in order; one
    compressible run for an empty block."""
    if not block:
        yield 0, 0, True
        return
    run_start, run_kind = 0, _compressible(block[:SEGMENT])
    for start in range(SEGMENT, len(block), SEGMENT):
        kind = _compressible(block[start : start + SEGMENT])
        if kind != run_kind:
            yield run_start, start, run_kind
            run_start, run_kind = start, kind
    yield run_start, len(block), run_kind


def _compressible(segment: bytes) -> bool:
    """Whether either sample of the segment deflates by even 3% (a segment shorter than a whole
    one is taken as compressible: deflate decides)."""
    if len(segment) < SEGMENT:
        return True
    for start in (0, SEGMENT // 2):
        sample = segment[start : start + SAMPLE]
        # ASCII deflates by an eighth at least (seven bits a byte), and saying so costs far less
        # than starting a compressor, whose tables cost more than deflating the sample.
        if sample.isascii():
            return True
        # A window and tables the size of the sample, not of a stream: a cheaper start
        # (bench/RESULTS.md: bench.archives).
        z = zlib.compressobj(1, zlib.DEFLATED, -10, 4)
        if len(z.compress(sample) + z.flush()) < SAVING * SAMPLE:
            return True
    return False


def _deflated(data: bytes, before: bytes, final: bool) -> bytes:
    if before:
        z = zlib.compressobj(LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS, zdict=before)
    else:
        z = zlib.compressobj(LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
    return z.compress(data) + z.flush(zlib.Z_FINISH if final else zlib.Z_SYNC_FLUSH)


def stored(data: bytes, final: bool) -> bytes:
    """`data` as deflate's stored blocks, written here rather than by zlib's level 0, whose cut
    into blocks depends on the room it is given to write into. Starts on a byte boundary and
    ends on one."""
    pieces = [data[start : start + STORED_MAX] for start in range(0, len(data), STORED_MAX)]
    out = bytearray()
    for n, piece in enumerate(pieces):
        # One byte: BFINAL, BTYPE 00 (stored), the rest of the byte unused; then LEN and NLEN.
        out.append(1 if final and n == len(pieces) - 1 else 0)
        out += len(piece).to_bytes(2, "little") + (len(piece) ^ 0xFFFF).to_bytes(2, "little")
        out += piece
    return bytes(out)
