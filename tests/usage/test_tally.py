"""Installs counted in memory and written in batches (`gitreg/usage/tally.py`), on a real SQLite
file: counts added between batches, a bounded number of events waiting, a store out of reach
losing that batch (counted), the writer thread writing at its interval and at close."""

from __future__ import annotations

from pathlib import Path

from gitreg.catalog.settings import DownloadSettings
from gitreg.state.download_counts import today
from gitreg.state.sqlite_downloads import SqliteDownloads
from gitreg.usage.tally import DownloadTally
from tests.support.servers import wait_until

ON = DownloadSettings()
TF = "Terraform/1.11.4"


def tally(path: Path, most_pending: int = 100, every: float = 3600.0) -> DownloadTally:
    return DownloadTally(SqliteDownloads(path), lambda: ON, every, most_pending)


def test_counts_between_batches_add_up(tmp_path: Path) -> None:
    counts = tally(tmp_path / "d.sqlite3")
    for _ in range(3):
        counts.count("module", "a/b/c", "1.0.0", "ci", TF)
    counts.write()
    counts.count("module", "a/b/c", "1.0.0", "ci", TF)
    counts.write()
    assert counts.store.by_version("module", "a/b/c") == {"1.0.0": 4}
    status = counts.status()
    assert (status.counted, status.written, status.pending, status.lost_events) == (4, 4, 0, 0)


def test_past_the_bound_a_new_event_is_lost_and_counted(tmp_path: Path) -> None:
    counts = tally(tmp_path / "d.sqlite3", most_pending=2)
    for version in ("1.0.0", "1.1.0", "1.2.0", "1.0.0"):
        counts.count("module", "a/b/c", version, "ci", TF)
    assert counts.status().lost_events == 2
    counts.write()
    assert counts.store.by_version("module", "a/b/c") == {"1.0.0": 1, "1.1.0": 1}
    assert (counts.status().counted, counts.status().written) == (4, 2)


def test_a_store_out_of_reach_loses_the_batch_then_writes_again(tmp_path: Path) -> None:
    path = tmp_path / "d.sqlite3"
    path.mkdir()  # a folder where the file should be: it cannot be opened
    counts = tally(path)
    counts.count("module", "a/b/c", "1.0.0", "ci", TF)
    counts.count("module", "a/b/c", "1.0.0", "ci", TF)
    counts.write()
    status = counts.status()
    assert (status.lost_events, status.lost_batches, status.written) == (2, 1, 0)
    assert status.problem is not None and str(path) in status.problem
    path.rmdir()
    counts.count("module", "a/b/c", "1.0.0", "ci", TF)
    counts.write()
    assert counts.status().problem is None
    assert counts.store.by_version("module", "a/b/c") == {"1.0.0": 1}


def test_the_writer_writes_at_its_interval_and_at_close(tmp_path: Path) -> None:
    path = tmp_path / "d.sqlite3"
    counts = tally(path, every=0.05)
    counts.start()
    counts.count("provider", "a/b", "1.0.0", "ci", None)
    wait_until(lambda: counts.status().written == 1, 10, "the batch to be written")
    counts.count("provider", "a/b", "1.0.0", "ci", None)
    counts.close(10)
    reopened = SqliteDownloads(path)
    assert reopened.by_version("provider", "a/b") == {"1.0.0": 2}
    assert reopened.downloaded("provider", "a/b", "1.0.0", "ci")
    assert reopened.summary("provider", "a/b", today()).week == 2
    reopened.close()


def test_nothing_is_counted_when_counting_is_off(tmp_path: Path) -> None:
    off = DownloadSettings(enabled=False)
    counts = DownloadTally(SqliteDownloads(tmp_path / "d.sqlite3"), lambda: off)
    counts.count("module", "a/b/c", "1.0.0", "ci", TF)
    assert counts.status().counted == 0
