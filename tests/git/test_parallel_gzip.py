"""Gzip deflated in blocks on threads: any gunzip reads it, and its bytes depend on the input
alone, neither on the number of threads nor on how the input was written."""

from __future__ import annotations

import gzip
import hashlib
import io
import random
import shutil
import subprocess
import threading
import zlib
from pathlib import Path

import pytest

from gitreg.git.parallel_gzip import BLOCK, ParallelGzip


def _input(size: int) -> bytes:
    """Text that compresses and random bytes that do not, in runs that straddle blocks."""
    rng = random.Random(size)
    parts, total = [], 0
    while total < size:
        if rng.random() < 0.6:
            part = "".join(f'  v{n} = "{rng.getrandbits(40):010x}"\n' for n in range(200)).encode()
        else:
            part = rng.randbytes(rng.randrange(1, 90_000))
        parts.append(part)
        total += len(part)
    return b"".join(parts)[:size]


def _gzip(data: bytes, threads: int, chunk: int = 65_536) -> bytes:
    out = io.BytesIO()
    with ParallelGzip(out, threads) as gz:
        for start in range(0, len(data), chunk):
            gz.write(data[start : start + chunk])
    return out.getvalue()


@pytest.mark.parametrize(
    "size", [0, 1, 5000, BLOCK - 1, BLOCK, BLOCK + 1, 2 * BLOCK, 5 * BLOCK + 12_345]
)
def test_any_gunzip_reads_it_back(size: int) -> None:
    data = _input(size)
    packed = _gzip(data, threads=2)
    assert gzip.decompress(packed) == data
    # zlib's own reader too, which checks the trailer's CRC and length.
    assert zlib.decompress(packed, wbits=31) == data
    assert packed[:10] == b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"  # no name, no time


def test_the_bytes_depend_on_the_input_alone() -> None:
    data = _input(6 * BLOCK + 777)
    first = _gzip(data, threads=1)
    assert _gzip(data, threads=2) == first
    assert _gzip(data, threads=4, chunk=7919) == first  # writes that never meet a block's end
    assert _gzip(data, threads=3, chunk=len(data)) == first  # one write of everything
    small = data[: 2 * BLOCK + 5]
    assert _gzip(small, threads=2, chunk=3) == _gzip(small, threads=1, chunk=BLOCK)


@pytest.mark.parametrize(("kind", "most"), [("text", 1.002), ("text and random", 1.01)])
def test_it_compresses_as_one_zlib_stream_does(kind: str, most: float) -> None:
    """The window carries over from block to block: a few bytes a block, not a fresh start. The
    segments where samples find only random bytes are stored; text between two samples of one
    is stored with them, which costs a little where many short files sit among random ones."""
    data = _input(8 * BLOCK)
    if kind == "text":
        data = b"".join(line for line in data.splitlines(keepends=True) if line.startswith(b"  v"))
    one_stream = gzip.compress(data, compresslevel=6, mtime=0)
    assert len(_gzip(data, threads=2)) < len(one_stream) * most


def test_random_bytes_are_stored_as_they_are() -> None:
    data = random.Random(3).randbytes(3 * BLOCK)
    packed = _gzip(data, threads=2)
    # Stored blocks: the input itself, in pieces of 65,535 bytes, each after 5 bytes of header.
    assert data[:65_535] in packed and data[2 * BLOCK : 2 * BLOCK + 65_535] in packed
    # Beside them: gzip's header and trailer (18 bytes), 5 bytes a stored piece (5 a block),
    # and the stream's end (2).
    assert len(packed) == len(data) + 18 + 3 * 5 * 5 + 2
    assert gzip.decompress(packed) == data


PINNED = "273463bf53515d8fa87c480fe168947a1356ff5d467baf09163b3f9fd84385ec"


def test_the_bytes_of_a_fixed_input_are_pinned() -> None:
    """The promise: this input gives these bytes wherever Python's zlib is zlib (a change of them
    needs a new archive FORMAT_VERSION)."""
    assert hashlib.sha256(_gzip(_input(3 * BLOCK + 1000), threads=2)).hexdigest() == PINNED


def test_a_failure_midway_stops_its_threads_and_writes_no_end() -> None:
    before = threading.active_count()
    out = io.BytesIO()
    data = _input(8 * BLOCK)
    with pytest.raises(RuntimeError, match="limit"), ParallelGzip(out, 2) as gz:
        gz.write(data)
        raise RuntimeError("a limit")
    assert threading.active_count() == before
    with pytest.raises(EOFError):
        gzip.decompress(out.getvalue())


@pytest.mark.skipif(shutil.which("gzip") is None, reason="no gzip command here")
def test_the_gzip_command_reads_it_back(tmp_path: Path) -> None:
    """Another reader than Python's zlib: GNU gzip, which checks the CRC and length too."""
    data = _input(5 * BLOCK + 99) + random.Random(5).randbytes(2 * BLOCK)
    packed = tmp_path / "stream.gz"
    packed.write_bytes(_gzip(data, threads=2))
    done = subprocess.run(["gzip", "-dc", str(packed)], capture_output=True, check=True)
    assert done.stdout == data
