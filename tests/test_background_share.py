"""Background work takes a bounded share while requests arrive, and all of it when none do; a
thread not marked background (a read a request waits for) is never paced."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest

from gitreg.background_share import (
    NICENESS,
    PACED_SHARE,
    SHARE,
    SWITCH_INTERVAL,
    BackgroundShare,
    background_thread,
    prompt_handover,
)
from tests.support.clock import Clock


def _share(clock: Clock, rests: list[float]) -> BackgroundShare:
    """A share whose rests are recorded, not slept."""
    return BackgroundShare(share=0.2, busy_for=1.0, clock=clock, sleep=rests.append)


def _busy_slice(share: BackgroundShare) -> None:
    with share.slice():
        deadline = time.thread_time() + 0.02  # some CPU time, whatever the machine's speed
        while time.thread_time() < deadline:
            pass


def _in_background(work: Callable[[], object]) -> None:
    with ThreadPoolExecutor(1, initializer=background_thread) as pool:
        pool.submit(work).result()


def test_while_requests_arrive_a_slice_rests_four_times_its_cpu_time() -> None:
    clock, rests = Clock(100.0), list[float]()
    share = _share(clock, rests)
    share.request_arrived()
    _in_background(lambda: _busy_slice(share))
    assert len(rests) == 1
    assert rests[0] >= 4 * 0.02 * 0.99  # spent/share - spent: a fifth of a CPU in all


def test_what_a_background_threads_git_spent_is_paid_back_as_its_slice_ends() -> None:
    clock, rests = Clock(100.0), list[float]()
    share = _share(clock, rests)
    share.request_arrived()
    with share.slice():
        share.charge(0.05)  # this test's own thread: a request's git is never paced
    assert rests == []

    def sync() -> None:
        with share.slice():  # a sync, holding its clone's lock for all it knows
            with share.slice():  # a part of it
                share.charge(0.05)
            assert all(rest < 0.01 for rest in rests)  # the part's own CPU only
        # its git's 50 ms at a fifth of a CPU, once nothing is held any more
        assert rests and rests[-1] >= 0.2

    _in_background(sync)
    clock.now += 1.5
    paid = len(rests)

    def quiet_sync() -> None:
        with share.slice():
            share.charge(0.05)

    _in_background(quiet_sync)  # no request for a second: no rest
    assert len(rests) == paid
    clock.now += 0.1
    share.request_arrived()

    def outside_then_a_slice() -> None:
        share.charge(60.0)  # no slice under way: not counted, nor carried to the next one
        with share.slice():
            pass

    _in_background(outside_then_a_slice)
    assert all(rest < 0.01 for rest in rests[paid:])


def test_slices_of_several_threads_share_one_budget() -> None:
    clock, rests = Clock(100.0), list[float]()
    share = _share(clock, rests)
    share.request_arrived()

    def three() -> None:
        for _ in range(3):
            _busy_slice(share)

    _in_background(three)
    # The clock stands still (the rests are not slept): each slice waits behind the ones before.
    assert len(rests) == 3 and rests[0] < rests[1] < rests[2]


def test_with_no_request_for_a_second_background_work_runs_at_full_speed() -> None:
    clock, rests = Clock(100.0), list[float]()
    share = _share(clock, rests)
    share.request_arrived()
    clock.now += 1.5
    _in_background(lambda: _busy_slice(share))
    assert rests == []


def test_quiet_once_no_request_arrived_for_busy_for() -> None:
    clock, rests = Clock(100.0), list[float]()
    share = _share(clock, rests)
    assert share.quiet()  # none ever
    share.request_arrived()
    assert not share.quiet()
    clock.now += 0.9
    assert not share.quiet()
    clock.now += 0.2
    assert share.quiet()


def test_a_thread_a_request_waits_for_is_never_paced() -> None:
    clock, rests = Clock(100.0), list[float]()
    share = _share(clock, rests)
    share.request_arrived()
    _busy_slice(share)  # this test's own thread: not a background one
    assert rests == []


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="no thread priorities here")
def test_background_threads_run_at_a_lower_priority() -> None:
    seen: list[int] = []

    def niceness() -> None:
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))

    base = os.getpriority(os.PRIO_PROCESS, 0)
    _in_background(niceness)
    assert seen == [min(base + NICENESS, 19)]


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="no thread priorities here")
def test_a_slice_runs_on_a_reader_at_the_process_priority_not_the_asking_thread() -> None:
    share = BackgroundShare(readers=1)
    seen: list[tuple[str, int]] = []

    def where() -> None:
        seen.append(
            (
                threading.current_thread().name,
                os.getpriority(os.PRIO_PROCESS, threading.get_native_id()),
            )
        )

    base = os.getpriority(os.PRIO_PROCESS, 0)
    share.start()  # as a server's event loop does, before its background work
    _in_background(lambda: share.run(where))
    share.run(where)  # a thread a request waits for: on itself, at once
    (reader, niceness), (own, _) = seen
    assert reader.startswith("gitreg-read") and niceness == base
    assert own == threading.current_thread().name


def test_background_slices_wait_for_a_reader_of_the_bounded_pool() -> None:
    share = BackgroundShare(readers=2)
    release, started = threading.Event(), threading.Semaphore(0)
    ran: list[str] = []

    def blocking() -> None:
        started.release()
        release.wait(30)

    with ThreadPoolExecutor(3, initializer=background_thread) as asking:
        held = [asking.submit(share.run, blocking) for _ in range(2)]
        assert all(started.acquire(timeout=30) for _ in held)  # both readers busy
        third = asking.submit(share.run, lambda: ran.append("third"))
        # A read a request waits for is not queued behind them: it runs on its own thread.
        share.run(lambda: ran.append("request's"))
        assert ran == ["request's"] and not third.done()
        release.set()
        third.result(timeout=30)
    assert ran == ["request's", "third"]


def _burn(seconds: float) -> None:
    deadline = time.thread_time() + seconds
    while time.thread_time() < deadline:
        pass


def test_paced_work_rests_at_each_breath_while_requests_arrive() -> None:
    clock, rests = Clock(100.0), list[float]()
    share = _share(clock, rests)
    share.request_arrived()
    with share.paced():
        for _ in range(3):
            _burn(0.02)
            share.breathe()
        # spent/share - spent at PACED_SHARE, below the share's own: long work rests longer
        assert PACED_SHARE < SHARE
        assert len(rests) == 3 and rests[0] >= (1 / PACED_SHARE - 1) * 0.02 * 0.99
        clock.now += 1.5  # no request for a while: full speed
        _burn(0.02)
        share.breathe()
        assert len(rests) == 3
    share.request_arrived()
    _burn(0.02)
    share.breathe()  # after the block: this thread is not paced any more
    assert len(rests) == 3


def test_a_breath_outside_paced_work_is_nothing() -> None:
    clock, rests = Clock(100.0), list[float]()
    share = _share(clock, rests)
    share.request_arrived()

    def work() -> None:
        _burn(0.02)
        share.breathe()

    _in_background(work)  # a background thread, not paced
    assert rests == []


def test_a_server_hands_the_gil_over_sooner_than_python_by_default() -> None:
    default = sys.getswitchinterval()
    try:
        prompt_handover()
        assert sys.getswitchinterval() == SWITCH_INTERVAL < default
    finally:
        sys.setswitchinterval(default)


def test_the_background_budget_owes_a_rest_only_while_requests_arrive() -> None:
    now = [100.0]
    share = BackgroundShare(share=0.25, busy_for=1.0, clock=lambda: now[0])
    assert share.owe(0.2) == 0.0  # no request yet: catch up at full speed
    share.request_arrived()
    assert share.owe(0.2) == pytest.approx(0.6)  # 0.2 of CPU at a quarter: 0.8 in all
    assert share.owe(0.2) == pytest.approx(1.4)  # the budget is one: the next waits its turn
    now[0] += 5.0
    assert share.owe(0.2) == 0.0  # quiet again
