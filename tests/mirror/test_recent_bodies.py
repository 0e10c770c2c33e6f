"""The mirror's shared work: done once however many ask at the same moment, its error given to
each of them, and not cancelled when one of them hangs up."""

from __future__ import annotations

import asyncio

import pytest

from gitreg.errors import NotFound
from gitreg.mirror.recent_bodies import BODY_TTL, RecentBodies


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_work_asked_for_at_once_is_done_once() -> None:
    async def scenario() -> tuple[list[bytes], int]:
        bodies, runs, release = RecentBodies(), 0, asyncio.Event()

        async def work() -> bytes:
            nonlocal runs
            runs += 1
            await release.wait()
            return b"body"

        waiting = [asyncio.create_task(bodies.shared("k", work)) for _ in range(10)]
        await asyncio.sleep(0)
        release.set()
        return await asyncio.gather(*waiting), runs

    bodies, runs = asyncio.run(scenario())
    assert bodies == [b"body"] * 10 and runs == 1


def test_an_error_reaches_every_waiter_and_the_next_call_tries_again() -> None:
    async def scenario() -> tuple[list[BaseException | bytes], bytes]:
        bodies, calls = RecentBodies(), 0

        async def work() -> bytes:
            nonlocal calls
            calls += 1
            await asyncio.sleep(0.01)
            if calls == 1:
                raise NotFound("not yet")
            return b"now"

        first = await asyncio.gather(
            *(bodies.shared("k", work) for _ in range(3)), return_exceptions=True
        )
        return first, await bodies.shared("k", work)

    first, again = asyncio.run(scenario())
    assert all(isinstance(e, NotFound) for e in first) and again == b"now"


def test_a_waiter_that_hangs_up_does_not_cancel_the_work_for_the_others() -> None:
    async def scenario() -> bytes:
        bodies, release = RecentBodies(), asyncio.Event()

        async def work() -> bytes:
            await release.wait()
            return b"done"

        leaver = asyncio.create_task(bodies.shared("k", work))
        stayer = asyncio.create_task(bodies.shared("k", work))
        await asyncio.sleep(0)
        leaver.cancel()
        await asyncio.sleep(0)
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await leaver
        return await stayer

    assert asyncio.run(scenario()) == b"done"


def test_rendered_answers_are_kept_for_a_few_seconds() -> None:
    clock = Clock()
    bodies = RecentBodies(clock)
    bodies.put("k", b"v")
    assert bodies.get("k") == b"v"
    clock.now += BODY_TTL + 0.1
    assert bodies.get("k") is None
