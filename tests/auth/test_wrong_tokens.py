"""Wrong tokens slowed per client address, through the gate: the delays come from an injected
sleep (recorded, not slept), the window from an injected clock."""

from __future__ import annotations

import asyncio
import hashlib
from collections import Counter
from pathlib import Path

import pytest

from gitreg.auth.gate import Gate, Target
from gitreg.auth.principal import Principal
from gitreg.auth.signed_urls import UrlSigner
from gitreg.auth.wrong_tokens import FREE, MAX_DELAY, MAX_HELD, WrongTokens, delay_after
from gitreg.catalog.auth_settings import AuthSettings, TokenSpec
from gitreg.errors import TooManyRequests, Unauthorized
from tests.support.clock import Clock

RIGHT = "gitreg_the-right-token"
READ = Target("read", "module infra/vpc/aws", "infra")
HOME = "192.0.2.10"


class Slept:
    """The sleep the table awaits: records each delay; `hold` keeps them waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []
        self.hold = asyncio.Event()
        self.hold.set()

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
        await self.hold.wait()


def _gate(tmp_path: Path, slept: Slept, clock: Clock) -> Gate:
    spec = TokenSpec("ci", sha256=hashlib.sha256(RIGHT.encode()).hexdigest(), read=("infra",))
    settings = AuthSettings(tokens=(spec,))
    signer = UrlSigner([b"k" * 32], 600)
    return Gate(settings, signer, Counter(), wrong_tokens=WrongTokens(clock, slept))


def _admit(gate: Gate, token: str, client: str = HOME) -> Principal | str:
    try:
        return asyncio.run(gate.admit(f"Bearer {token}", READ, client=client))
    except Unauthorized:
        return "401"


def test_the_delay_grows_and_is_capped() -> None:
    assert [delay_after(n) for n in range(1, FREE + 6)] == [0] * FREE + [
        0.25,
        0.5,
        1.0,
        2.0,
        2.0,
    ]
    assert max(delay_after(n) for n in range(1, 1000)) == MAX_DELAY


def test_wrong_tokens_are_slowed_and_a_right_one_never(tmp_path: Path) -> None:
    slept, clock = Slept(), Clock(500.0)
    gate = _gate(tmp_path, slept, clock)
    assert [_admit(gate, f"guess-{i}") for i in range(FREE)] == ["401"] * FREE
    assert slept.delays == []  # a few mistakes cost nothing
    assert [_admit(gate, f"guess-{i}") for i in range(FREE, FREE + 4)] == ["401"] * 4
    assert slept.delays == [0.25, 0.5, 1.0, 2.0]
    assert isinstance(_admit(gate, RIGHT), Principal)  # the right token: no delay
    assert slept.delays == [0.25, 0.5, 1.0, 2.0]
    assert _admit(gate, "guess-x", client="192.0.2.11") == "401"  # another address: not slowed
    assert len(slept.delays) == 4
    # A missing token is no guess: never slowed.
    with pytest.raises(Unauthorized):
        asyncio.run(gate.admit(None, READ, client=HOME))
    assert len(slept.delays) == 4
    clock.now += 60  # a new window
    assert _admit(gate, "guess-y") == "401" and len(slept.delays) == 4


def test_many_wrong_tokens_at_once_are_refused_before_they_are_looked_at(tmp_path: Path) -> None:
    slept, clock = Slept(), Clock(500.0)
    gate = _gate(tmp_path, slept, clock)
    assert [_admit(gate, f"guess-{i}") for i in range(FREE)] == ["401"] * FREE

    async def flood() -> list[object]:
        slept.hold.clear()  # the delayed answers wait
        held = [
            asyncio.ensure_future(gate.admit(f"Bearer guess-{i}", READ, client=HOME))
            for i in range(MAX_HELD)
        ]
        while len(slept.delays) < MAX_HELD:
            await asyncio.sleep(0)
        refused = []
        for token in ("guess-more", RIGHT):
            try:
                await gate.admit(f"Bearer {token}", READ, client=HOME)
            except TooManyRequests as exc:
                refused.append(exc)
        elsewhere = await gate.admit(f"Bearer {RIGHT}", READ, client="192.0.2.99")
        slept.hold.set()
        done = await asyncio.gather(*held, return_exceptions=True)
        return [*refused, elsewhere, *done]

    results = asyncio.run(flood())
    refused, elsewhere, done = results[:2], results[2], results[3:]
    assert all(isinstance(r, TooManyRequests) and r.retry_after == 2 for r in refused)
    assert isinstance(elsewhere, Principal)
    assert all(isinstance(d, Unauthorized) for d in done)
    assert gate.counts[("unknown", "throttled")] == 2
    assert isinstance(_admit(gate, RIGHT), Principal)  # once the held answers are out


def test_the_table_is_bounded() -> None:
    slept, clock = Slept(), Clock(500.0)
    table = WrongTokens(clock, slept, max_addresses=3)
    for address in ("192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4"):
        asyncio.run(table.wrong(address))
    assert len(table._table) == 3 and "192.0.2.1" not in table._table


def test_sign_in_with_a_wrong_token_is_slowed(tmp_path: Path) -> None:
    slept, clock = Slept(), Clock(500.0)
    gate = _gate(tmp_path, slept, clock)
    for i in range(FREE + 2):
        assert asyncio.run(gate.sign_in(f"guess-{i}", HOME)) is None
    assert slept.delays == [0.25, 0.5]
    assert asyncio.run(gate.sign_in(RIGHT, HOME)) is not None
    assert slept.delays == [0.25, 0.5]
