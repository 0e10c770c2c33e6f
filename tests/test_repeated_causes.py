"""A repeated cause is logged once per interval with a count of its repeats (a fake clock)."""

from __future__ import annotations

import logging

import pytest

from gitreg.repeated_causes import RepeatedCauses
from tests.support.clock import Clock

LOGGER = "tests.repeated_causes"


@pytest.fixture
def clock() -> Clock:
    return Clock()


def lines(caplog: pytest.LogCaptureFixture) -> list[tuple[int, str]]:
    return [(r.levelno, r.getMessage()) for r in caplog.records if r.name == LOGGER]


def test_a_cause_repeated_within_the_interval_is_one_line_then_its_count(
    caplog: pytest.LogCaptureFixture, clock: Clock
) -> None:
    caplog.set_level(logging.INFO, LOGGER)
    causes = RepeatedCauses(logging.getLogger(LOGGER), interval=60, clock=clock)
    logged = [causes.log(logging.WARNING, "a", "repo %s not read yet", "a") for _ in range(735)]
    assert logged == [True] + [False] * 734
    assert lines(caplog) == [(logging.WARNING, "repo a not read yet")]
    clock.now += 59.9
    assert not causes.log(logging.WARNING, "a", "repo %s not read yet", "a")
    clock.now += 0.1
    assert causes.log(logging.WARNING, "a", "repo %s not read yet", "a")
    assert lines(caplog)[1:] == [
        (logging.WARNING, "repo a not read yet (and 735 more requests in the last 60 s)")
    ]


def test_causes_are_counted_apart(caplog: pytest.LogCaptureFixture, clock: Clock) -> None:
    caplog.set_level(logging.INFO, LOGGER)
    causes = RepeatedCauses(logging.getLogger(LOGGER), interval=60, clock=clock)
    for _ in range(3):
        causes.log(logging.WARNING, "a", "a")
        causes.log(logging.ERROR, "b", "b")
    assert lines(caplog) == [(logging.WARNING, "a"), (logging.ERROR, "b")]


def test_the_count_of_a_cause_that_stopped_is_said_with_the_next_line(
    caplog: pytest.LogCaptureFixture, clock: Clock
) -> None:
    caplog.set_level(logging.INFO, LOGGER)
    causes = RepeatedCauses(logging.getLogger(LOGGER), interval=60, clock=clock)
    for _ in range(5):
        causes.log(logging.WARNING, "a", "a")
    clock.now += 61
    causes.log(logging.ERROR, "b", "b")
    assert lines(caplog) == [
        (logging.WARNING, "a"),
        (logging.WARNING, "a (and 4 more requests in the last 60 s)"),
        (logging.ERROR, "b"),
    ]
    clock.now += 61
    causes.log(logging.WARNING, "a", "a")  # forgotten: logged at once, with no count
    assert lines(caplog)[3:] == [(logging.WARNING, "a")]


def test_a_cause_met_once_an_interval_is_logged_every_time(
    caplog: pytest.LogCaptureFixture, clock: Clock
) -> None:
    caplog.set_level(logging.INFO, LOGGER)
    causes = RepeatedCauses(logging.getLogger(LOGGER), interval=60, clock=clock)
    for _ in range(3):
        assert causes.log(logging.INFO, "a", "a")
        clock.now += 60
    assert lines(caplog) == [(logging.INFO, "a")] * 3


def test_beyond_the_causes_it_counts_a_new_cause_is_logged_every_time(
    caplog: pytest.LogCaptureFixture, clock: Clock
) -> None:
    caplog.set_level(logging.INFO, LOGGER)
    causes = RepeatedCauses(logging.getLogger(LOGGER), interval=60, clock=clock, most=2)
    for cause in ("a", "b", "c", "c", "a"):
        causes.log(logging.INFO, cause, cause)
    assert [m for _, m in lines(caplog)] == ["a", "b", "c", "c"]
