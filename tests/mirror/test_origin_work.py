"""Read-through's own threads: full means refused at once (per origin and in all), never a
queue; and a deadline bounds all of one piece of work, however many requests it makes."""

from __future__ import annotations

import asyncio
import threading
from functools import partial
from pathlib import Path

import pytest

from gitreg.address import ProviderAddress
from gitreg.catalog.mirror_settings import MirrorSettings
from gitreg.errors import OriginBusy, OriginUnavailable
from gitreg.mirror.origin_work import OriginWork, remaining
from gitreg.mirror.readthrough import ReadThrough
from gitreg.process.tlscert import TlsMaterial
from gitreg.providers.hashes import HashCache
from tests.support.origin_server import ScriptedOrigin
from tests.support.provider_releases import new_key

HOST = "origin.example.test"
ADDRESS = ProviderAddress.parse(f"{HOST}/acme/widget")


def test_work_past_an_origins_share_or_the_pool_is_refused_at_once() -> None:
    release = threading.Event()

    def held() -> float | None:
        release.wait(30)
        return remaining()

    async def scenario() -> None:
        work = OriginWork(workers=4, per_origin=2)
        running = [asyncio.ensure_future(work.run(origin, 60, held)) for origin in "aab"]
        await asyncio.sleep(0)  # each has taken its thread
        assert work.busy() == {"a": 2, "b": 1}
        with pytest.raises(OriginBusy, match=r"busy with a: 2 requests .*mirror.per_origin"):
            await work.run("a", 60, held)
        running.append(asyncio.ensure_future(work.run("c", 60, held)))
        await asyncio.sleep(0)
        with pytest.raises(OriginBusy, match=r"its 4 threads .*mirror.workers"):
            await work.run("d", 60, held)
        release.set()
        left = await asyncio.gather(*running)
        assert all(seconds is not None and 0 < seconds <= 60 for seconds in left)
        assert work.busy() == {}  # no table of origins that asked once
        assert await work.run("c", 60, remaining) is not None  # room again
        work.close()

    asyncio.run(scenario())
    assert remaining() is None  # outside the pool, no deadline (gitreg mirror sync)


def test_a_deadline_bounds_all_of_a_pieces_requests(tls: TlsMaterial, tmp_path: Path) -> None:
    with ScriptedOrigin(tls) as origin:
        origin.publish(new_key("origin"), "widget", {"1.0.0": ("linux_amd64",)})
        # Each answer comes within the deadline; the two of them do not.
        origin.answers["/.well-known/terraform.json"].delay = 0.6
        origin.answers["/v1/providers/acme/widget/versions"].delay = 0.6
        settings = MirrorSettings(
            read_through=True, origins=((HOST, origin.url),), ca_file=tls.ca_cert, deadline=1.0
        )
        read_through = ReadThrough(settings, tmp_path, HashCache())
        versions = partial(read_through.origin.versions, ADDRESS)
        with pytest.raises(OriginUnavailable, match="the deadline passed"):
            asyncio.run(read_through.run(ADDRESS, versions, download=False))
        assert origin.asked["/v1/providers/acme/widget/versions"] == 1
        assert read_through.origin.is_down(HOST)
        read_through.close()


def test_an_origin_dripping_its_answer_holds_no_thread_past_the_deadline(
    tls: TlsMaterial, tmp_path: Path
) -> None:
    """The wait between two reads is cut to the time left: the 20 s allowed between two reads,
    fixed when the request was sent, would keep the thread and its origin's share after the
    client had its answer."""
    with ScriptedOrigin(tls) as origin:
        origin.publish(new_key("origin"), "widget", {"1.0.0": ("linux_amd64",)})
        versions_answer = origin.answers["/v1/providers/acme/widget/versions"]
        versions_answer.delay, versions_answer.stall = 0.5, 30.0  # half the body, then nothing
        settings = MirrorSettings(
            read_through=True, origins=((HOST, origin.url),), ca_file=tls.ca_cert, deadline=1.0
        )
        read_through = ReadThrough(settings, tmp_path, HashCache())
        versions = partial(read_through.origin.versions, ADDRESS)
        # Its headers came in time; the read of its body ends at the deadline, and says so
        # (before, it waited the 1 s the request was sent with: half a second too long).
        with pytest.raises(OriginUnavailable, match="versions: the deadline passed"):
            asyncio.run(read_through.run(ADDRESS, versions, download=False))
        assert read_through.work.busy() == {}
        read_through.close()
