"""What domain code calls to keep out of the requests' way does nothing until a process installs
its own pacing, then reaches it; `paced` runs work on a thread of its own."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import threading
from collections.abc import Iterator

from gitreg import pacing
from tests.support.pacing import Recording


def test_without_a_process_pacing_every_hook_does_nothing() -> None:
    pacing.breathe()
    pacing.charge(60.0)
    pacing.request_arrived()
    pacing.background_thread()
    assert not pacing.in_background()
    with pacing.collector_paused():
        assert gc.isenabled()
    assert pacing.UNPACED.sliced(lambda: 1) == pacing.UNPACED.run(lambda: 1) == 1
    assert pacing.UNPACED.owe(60.0) == 0.0


def test_paced_work_runs_on_a_thread_of_its_own() -> None:
    here = threading.get_ident()
    assert asyncio.run(pacing.paced(threading.get_ident)) != here


def test_what_is_installed_is_reached_until_it_is_taken_back() -> None:
    pacer = Recording()
    pauses: list[str] = []

    @contextlib.contextmanager
    def pause() -> Iterator[None]:
        pauses.append("paused")
        yield

    restore = pacing.install(pacer, pause)
    try:
        pacing.breathe()
        pacing.charge(0.5)
        with pacing.collector_paused():
            pass

        def work() -> None:
            pacing.breathe()  # paced work breathes as it goes

        asyncio.run(pacing.paced(work))
    finally:
        restore()
    assert pacer.breaths == 2 and pacer.charged == [0.5]
    assert pauses == ["paused", "paused"]
    pacing.breathe()  # taken back: the pacer before, which paces nothing
    assert pacer.breaths == 2


def test_installing_the_pauses_alone_keeps_the_pacer() -> None:
    pacer = Recording()
    restore = pacing.install(pacer)
    try:
        again = pacing.install(pause=contextlib.nullcontext)
        pacing.breathe()
        again()
        pacing.breathe()
    finally:
        restore()
    assert pacer.breaths == 2
