"""Whether a principal installed a version (`gitreg/usage/installed.py`), on a real SQLite file:
an install the store does not hold yet is found in the tally's last batches, the store's answers
are kept a while (a no for less long than a yes), and a store out of reach raises."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitreg.errors import StateUnavailable
from gitreg.state.download_counts import Kind
from gitreg.usage.installed import NO_KEPT, YES_KEPT, InstalledBefore
from tests.usage.test_tally import TF, tally

KEY: tuple[Kind, str, str, str] = ("module", "a/b/c", "1.0.0", "ci")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_an_install_is_known_before_and_after_its_batch_is_written(tmp_path: Path) -> None:
    counts = tally(tmp_path / "d.sqlite3")
    ledger = InstalledBefore(counts)
    assert ledger.known(*KEY) is None  # the store must be asked
    counts.count(*KEY, TF)
    assert ledger.known(*KEY) is True  # in memory, not written yet
    counts.write()
    assert ledger.known(*KEY) is True  # the batch before the last: it may be in flight
    counts.write()
    assert ledger.known(*KEY) is None and ledger.ask(*KEY) is True
    assert ledger.known("module", "a/b/c", "1.0.0", "someone-else") is None


def test_answers_are_kept_a_no_for_less_long(tmp_path: Path) -> None:
    counts, clock = tally(tmp_path / "d.sqlite3"), Clock()
    ledger = InstalledBefore(counts, clock)
    assert ledger.ask(*KEY) is False and ledger.known(*KEY) is False
    counts.count(*KEY, TF)
    counts.write()
    counts.write()  # out of the tally's last batches: only the store knows
    assert ledger.known(*KEY) is False  # the no is kept...
    clock.now += NO_KEPT + 1
    assert ledger.known(*KEY) is None  # ...for a while
    assert ledger.ask(*KEY) is True
    clock.now += YES_KEPT - 1
    assert ledger.known(*KEY) is True


def test_a_store_out_of_reach_raises_and_keeps_nothing(tmp_path: Path) -> None:
    path = tmp_path / "d.sqlite3"
    path.mkdir()  # a folder where the file should be: it cannot be opened
    ledger = InstalledBefore(tally(path))
    with pytest.raises(StateUnavailable):
        ledger.ask(*KEY)
    assert ledger.known(*KEY) is None
