"""The status a repository's file holds, read back as another process (`gitreg list`, another
worker) reads it: a poll that found nothing new moves its last success by touching the file,
any other change rewrites it, and a failure after touches still reads as a failure."""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path

from gitreg.git.location import RepoLocation
from gitreg.modules.status import RepoStatus, StatusBoard, StatusStore

LOCATION = RepoLocation("https://git.example.com/infra/vpc.git", "https")


def _board(directory: Path) -> StatusBoard:
    board = StatusBoard(StatusStore(directory))
    board.track([(LOCATION, "vpc")])
    return board


def test_an_unchanged_poll_touches_the_file_and_reads_back_as_its_last_success(
    tmp_path: Path,
) -> None:
    board = _board(tmp_path)
    board.update(LOCATION, "vpc", lambda s: s.succeeded(1000.0, "f1", "startup"))
    path = tmp_path / "vpc.json"
    written = path.read_bytes()
    for when in (1060.0, 1120.5):
        board.update(
            LOCATION,
            "vpc",
            partial(RepoStatus.succeeded, when=when, fingerprint="f1", mechanism="poll"),
        )
        assert path.read_bytes() == written  # only its time moved
        read = StatusStore(tmp_path).read("vpc")  # a fresh view, as another process has
        assert read == board[LOCATION] == RepoStatus(when, None, 1000.0, "startup", "f1")


def test_a_failure_and_a_change_rewrite_the_file(tmp_path: Path) -> None:
    board = _board(tmp_path)
    board.update(LOCATION, "vpc", lambda s: s.succeeded(1000.0, "f1", "startup"))
    board.update(LOCATION, "vpc", lambda s: s.succeeded(1060.0, "f1", "poll"))  # a touch
    board.update(LOCATION, "vpc", lambda s: s.failed("fetch failed: connection refused"))
    read = StatusStore(tmp_path).read("vpc")
    assert read.state == "failing" and read.last_error == "fetch failed: connection refused"
    assert read.last_success == 1060.0  # the touched success was written with the failure
    board.update(LOCATION, "vpc", lambda s: s.succeeded(1200.0, "f2", "poll"))  # new versions
    assert StatusStore(tmp_path).read("vpc") == RepoStatus(1200.0, None, 1200.0, "poll", "f2")


def test_a_failing_status_ignores_the_files_time(tmp_path: Path) -> None:
    store = StatusStore(tmp_path)
    store.write("vpc", RepoStatus(1000.0, "unreachable", 900.0, "poll", "f1"))
    os.utime(tmp_path / "vpc.json", (5000.0, 5000.0))  # copied, restored: any later time
    assert store.read("vpc").last_success == 1000.0


def test_a_touch_of_a_file_gone_writes_it_whole(tmp_path: Path) -> None:
    board = _board(tmp_path)
    board.update(LOCATION, "vpc", lambda s: s.succeeded(1000.0, "f1", "startup"))
    (tmp_path / "vpc.json").unlink()  # cache_dir emptied under a running server
    board.update(LOCATION, "vpc", lambda s: s.succeeded(1060.0, "f1", "poll"))
    assert StatusStore(tmp_path).read("vpc") == RepoStatus(1060.0, None, 1000.0, "startup", "f1")
