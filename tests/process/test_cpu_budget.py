"""Background work keeps to a fraction of one CPU while requests arrive, and takes all of it when
none do; a thread not marked background (a read a request waits for) is never paced."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest

from gitreg.process.cpu_budget import (
    FRACTION,
    NICENESS,
    PACED_FRACTION,
    SWITCH_INTERVAL,
    CpuBudget,
    background_thread,
    prompt_handover,
)
from tests.support.clock import Clock


def _budget(clock: Clock, rests: list[float]) -> CpuBudget:
    """A budget whose rests are recorded, not slept."""
    return CpuBudget(fraction=0.2, busy_for=1.0, clock=clock, sleep=rests.append)


def _busy_slice(budget: CpuBudget) -> None:
    with budget.slice():
        deadline = time.thread_time() + 0.02  # some CPU time, whatever the machine's speed
        while time.thread_time() < deadline:
            pass


def _in_background(work: Callable[[], object]) -> None:
    with ThreadPoolExecutor(1, initializer=background_thread) as pool:
        pool.submit(work).result()


def test_while_requests_arrive_a_slice_rests_four_times_its_cpu_time() -> None:
    clock, rests = Clock(100.0), list[float]()
    budget = _budget(clock, rests)
    budget.request_arrived()
    _in_background(lambda: _busy_slice(budget))
    assert len(rests) == 1
    assert rests[0] >= 4 * 0.02 * 0.99  # spent/budget - spent: a fifth of a CPU in all


def test_what_a_background_threads_git_spent_is_paid_back_as_its_slice_ends() -> None:
    clock, rests = Clock(100.0), list[float]()
    budget = _budget(clock, rests)
    budget.request_arrived()
    with budget.slice():
        budget.charge(0.05)  # this test's own thread: a request's git is never paced
    assert rests == []

    def sync() -> None:
        with budget.slice():  # a sync, holding its clone's lock for all it knows
            with budget.slice():  # a part of it
                budget.charge(0.05)
            assert all(rest < 0.01 for rest in rests)  # the part's own CPU only
        # its git's 50 ms at a fifth of a CPU, once nothing is held any more
        assert rests and rests[-1] >= 0.2

    _in_background(sync)
    clock.now += 1.5
    paid = len(rests)

    def quiet_sync() -> None:
        with budget.slice():
            budget.charge(0.05)

    _in_background(quiet_sync)  # no request for a second: no rest
    assert len(rests) == paid
    clock.now += 0.1
    budget.request_arrived()

    def outside_then_a_slice() -> None:
        budget.charge(60.0)  # no slice under way: not counted, nor carried to the next one
        with budget.slice():
            pass

    _in_background(outside_then_a_slice)
    assert all(rest < 0.01 for rest in rests[paid:])


def test_slices_of_several_threads_share_one_budget() -> None:
    clock, rests = Clock(100.0), list[float]()
    budget = _budget(clock, rests)
    budget.request_arrived()

    def three() -> None:
        for _ in range(3):
            _busy_slice(budget)

    _in_background(three)
    # The clock stands still (the rests are not slept): each slice waits behind the ones before.
    assert len(rests) == 3 and rests[0] < rests[1] < rests[2]


def test_with_no_request_for_a_second_background_work_runs_at_full_speed() -> None:
    clock, rests = Clock(100.0), list[float]()
    budget = _budget(clock, rests)
    budget.request_arrived()
    clock.now += 1.5
    _in_background(lambda: _busy_slice(budget))
    assert rests == []


def test_quiet_once_no_request_arrived_for_busy_for() -> None:
    clock, rests = Clock(100.0), list[float]()
    budget = _budget(clock, rests)
    assert budget.quiet()  # none ever
    budget.request_arrived()
    assert not budget.quiet()
    clock.now += 0.9
    assert not budget.quiet()
    clock.now += 0.2
    assert budget.quiet()


def test_a_thread_a_request_waits_for_is_never_paced() -> None:
    clock, rests = Clock(100.0), list[float]()
    budget = _budget(clock, rests)
    budget.request_arrived()
    _busy_slice(budget)  # this test's own thread: not a background one
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
    budget = CpuBudget(readers=1)
    seen: list[tuple[str, int]] = []

    def where() -> None:
        seen.append(
            (
                threading.current_thread().name,
                os.getpriority(os.PRIO_PROCESS, threading.get_native_id()),
            )
        )

    base = os.getpriority(os.PRIO_PROCESS, 0)
    budget.start()  # as a server's event loop does, before its background work
    _in_background(lambda: budget.run(where))
    budget.run(where)  # a thread a request waits for: on itself, at once
    (reader, niceness), (own, _) = seen
    assert reader.startswith("gitreg-read") and niceness == base
    assert own == threading.current_thread().name


def test_background_slices_wait_for_a_reader_of_the_bounded_pool() -> None:
    budget = CpuBudget(readers=2)
    release, started = threading.Event(), threading.Semaphore(0)
    ran: list[str] = []

    def blocking() -> None:
        started.release()
        release.wait(30)

    with ThreadPoolExecutor(3, initializer=background_thread) as asking:
        held = [asking.submit(budget.run, blocking) for _ in range(2)]
        assert all(started.acquire(timeout=30) for _ in held)  # both readers busy
        third = asking.submit(budget.run, lambda: ran.append("third"))
        # A read a request waits for is not queued behind them: it runs on its own thread.
        budget.run(lambda: ran.append("request's"))
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
    budget = _budget(clock, rests)
    budget.request_arrived()
    with budget.paced():
        for _ in range(3):
            _burn(0.02)
            budget.breathe()
        # spent/fraction - spent at PACED_FRACTION, below the budget's own: long work rests longer
        assert PACED_FRACTION < FRACTION
        assert len(rests) == 3 and rests[0] >= (1 / PACED_FRACTION - 1) * 0.02 * 0.99
        clock.now += 1.5  # no request for a while: full speed
        _burn(0.02)
        budget.breathe()
        assert len(rests) == 3
    budget.request_arrived()
    _burn(0.02)
    budget.breathe()  # after the block: this thread is not paced any more
    assert len(rests) == 3


def test_a_breath_outside_paced_work_is_nothing() -> None:
    clock, rests = Clock(100.0), list[float]()
    budget = _budget(clock, rests)
    budget.request_arrived()

    def work() -> None:
        _burn(0.02)
        budget.breathe()

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
    budget = CpuBudget(fraction=0.25, busy_for=1.0, clock=lambda: now[0])
    assert budget.owe(0.2) == 0.0  # no request yet: catch up at full speed
    budget.request_arrived()
    assert budget.owe(0.2) == pytest.approx(0.6)  # 0.2 of CPU at a quarter: 0.8 in all
    assert budget.owe(0.2) == pytest.approx(1.4)  # the budget is one: the next waits its turn
    now[0] += 5.0
    assert budget.owe(0.2) == 0.0  # quiet again
