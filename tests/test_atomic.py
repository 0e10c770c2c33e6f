"""Atomic writes: the mode, what a reader sees meanwhile, and nothing left behind on failure."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitreg.atomic import Sync, atomic_writer, sweep_stale, write_atomically
from gitreg.process.tlscert import ensure_local_tls


@pytest.fixture
def strict_umask() -> Iterator[None]:
    old = os.umask(0o077)
    try:
        yield
    finally:
        os.umask(old)


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


@pytest.mark.usefixtures("strict_umask")
def test_the_file_is_0644_whatever_the_umask_or_the_file_it_replaces(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "folder" / "file.json"  # missing folders are made
    write_atomically(target, b"one")
    assert target.read_bytes() == b"one" and mode(target) == 0o644
    target.chmod(0o600)
    write_atomically(target, b"two")
    assert target.read_bytes() == b"two" and mode(target) == 0o644
    write_atomically(target, b"secret", mode=0o600)
    assert mode(target) == 0o600
    assert leftovers(target.parent) == []


def test_a_reader_sees_the_old_file_whole_until_the_new_one_is_complete(tmp_path: Path) -> None:
    target = tmp_path / "archive.tar.gz"
    absent = tmp_path / "new.tar.gz"
    write_atomically(target, b"old " * 1000)
    with atomic_writer(target) as out, atomic_writer(absent) as other:
        out.write(b"new " * 500)
        other.write(b"x")
        out.flush()  # half the new content is on disk, in the temporary file
        assert target.read_bytes() == b"old " * 1000
        assert not absent.exists()  # a reader finds no file rather than part of one
        out.write(b"new " * 500)
    assert target.read_bytes() == b"new " * 1000 and absent.read_bytes() == b"x"
    assert leftovers(tmp_path) == []


class WriterFailed(Exception):
    pass


@pytest.mark.parametrize("error", [WriterFailed, KeyboardInterrupt])
def test_a_failing_writer_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, error: type[BaseException]
) -> None:
    target = tmp_path / "release.json"
    write_atomically(target, b"before")
    with pytest.raises(error), atomic_writer(target) as out:
        out.write(b"half of the new")
        raise error("the writer failed halfway")  # cancellation is a BaseException too
    assert target.read_bytes() == b"before"
    assert leftovers(tmp_path) == []


def test_a_failing_rename_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "taken"
    (target / "child").mkdir(parents=True)  # a folder that is not empty cannot be replaced
    with pytest.raises(OSError):
        write_atomically(target, b"data")
    assert target.is_dir() and leftovers(tmp_path) == []


def test_a_failing_fsync_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "ledger.json"
    write_atomically(target, b"published")

    def disk_error(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", disk_error)
    with pytest.raises(OSError, match="Input/output"):
        write_atomically(target, b"lost")
    assert target.read_bytes() == b"published" and leftovers(tmp_path) == []


@pytest.mark.parametrize(("sync", "fsyncs"), [("none", 0), ("file", 1), ("folder", 2)])
def test_what_is_fsynced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sync: Sync, fsyncs: int
) -> None:
    calls: list[int] = []
    real = os.fsync

    def counted(fd: int) -> None:
        calls.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", counted)
    write_atomically(tmp_path / "file", b"data", sync=sync)
    assert len(calls) == fsyncs and (tmp_path / "file").read_bytes() == b"data"


@pytest.mark.usefixtures("strict_umask")
def test_throwaway_tls_keeps_its_key_private(tmp_path: Path) -> None:
    material = ensure_local_tls(tmp_path / "tls")
    assert mode(material.keyfile) == 0o600
    assert mode(material.certfile) == mode(material.ca_cert) == 0o644
    assert leftovers(tmp_path / "tls") == []


def test_a_sweep_removes_what_dead_writers_left_and_nothing_else(tmp_path: Path) -> None:
    archives = tmp_path / "archives" / "v1" / "ab"
    archives.mkdir(parents=True)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        left = {
            "crashed": archives / f".abc.tar.gz.{dead.pid}.k2j4h5g6.tmp",
            "ours, from before a restart": archives / f".abc.tar.gz.{os.getpid()}.x8y9z0aa.tmp",
            "older naming": tmp_path / ".status-abc.json.qqqqqqqq.tmp",
        }
        kept = {
            "a live writer's": archives / f".def.tar.gz.{alive.pid}.a1b2c3d4.tmp",
            "an archive": archives / "abc.tar.gz",
            "a clone's file": tmp_path / "git" / "x.git" / ".lock.1.abcdefgh.tmp",
        }
        for path in [*left.values(), *kept.values()]:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"partial")
        assert sweep_stale(tmp_path, skip=("git",)) == len(left)
        assert not [name for name, path in left.items() if path.exists()]
        assert [name for name, path in kept.items() if path.exists()] == list(kept)
    finally:
        alive.kill()
        alive.wait()
