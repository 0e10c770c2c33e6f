"""The ledger on local disk, written by several processes at once (workers on one host): the
first writer of a tag wins, and every writer is told its commit; so with archives' digests."""

from __future__ import annotations

import multiprocessing
from multiprocessing.synchronize import Barrier
from pathlib import Path

from gitreg.state.ledger import DiskLedger

WRITERS = 4
ROUNDS = 20


def _record(
    path: str, start: Barrier, writer: int, answers: multiprocessing.Queue[tuple[int, int, str]]
) -> None:
    ledger = DiskLedger(Path(path))
    for n in range(ROUNDS):
        start.wait()
        # Each writer saw tag vN at a commit of its own (the tag moved between their reads).
        published = ledger.record({f"v{n}": f"{writer:040x}"})
        answers.put((n, writer, published[f"v{n}"].commit))


def test_writers_at_once_agree_on_the_first_commit_of_each_tag(tmp_path: Path) -> None:
    path = tmp_path / "ledgers" / "repo.json"
    context = multiprocessing.get_context("fork")
    start = context.Barrier(WRITERS)
    answers: multiprocessing.Queue[tuple[int, int, str]] = context.Queue()
    processes = [
        context.Process(target=_record, args=(str(path), start, w, answers)) for w in range(WRITERS)
    ]
    for process in processes:
        process.start()
    got = [answers.get(timeout=60) for _ in range(WRITERS * ROUNDS)]
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    stored = DiskLedger(path).read()
    for n in range(ROUNDS):
        told = {commit for (tag, _, commit) in got if tag == n}
        assert told == {stored[f"v{n}"].commit}, n
    assert len(stored) == ROUNDS


def test_the_first_digest_of_an_archive_is_kept_beside_the_tags(tmp_path: Path) -> None:
    ledger = DiskLedger(tmp_path / "ledgers" / "repo.json")
    ledger.record({"v1.0.0": "a" * 40})
    fingerprint = ledger.fingerprint()
    assert ledger.digest("a.tar.gz") is None
    assert ledger.record_digest("a.tar.gz", "1" * 64) == "1" * 64
    assert DiskLedger(ledger.path).record_digest("a.tar.gz", "2" * 64) == "1" * 64
    assert ledger.digest("a.tar.gz") == "1" * 64
    # A file of its own: the tags' fingerprint, which persisted reads are checked by, stays.
    assert ledger.fingerprint() == fingerprint and set(ledger.read()) == {"v1.0.0"}
