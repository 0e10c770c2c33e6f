"""Wrong tokens slowed per client address. After FREE wrong tokens from one address within a
minute, the answer to each further one waits, twice as long each time up to MAX_DELAY; while
MAX_HELD answers wait for one address, its next requests with a token are refused (429) before
the token is looked at, so that sending many at once does not beat the wait. A right token is
never made to wait."""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from gitreg.auth.client_address import address_key
from gitreg.errors import TooManyRequests

FREE = 5
WINDOW = 60.0
FIRST_DELAY = 0.25
MAX_DELAY = 2.0
MAX_HELD = 8
MAX_ADDRESSES = 10_000  # the table's bound: the address seen longest ago is forgotten first


@dataclass
class _Record:
    since: float
    wrong: int = 0
    held: int = 0


def delay_after(wrong: int) -> float:
    """How long the answer to an address's `wrong`-th wrong token in a window waits."""
    if wrong <= FREE:
        return 0.0
    return min(MAX_DELAY, FIRST_DELAY * 2.0 ** (wrong - FREE - 1))


class WrongTokens:
    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        max_addresses: int = MAX_ADDRESSES,
    ) -> None:
        self.clock = clock
        self.sleep = sleep
        self.max_addresses = max_addresses
        self._table: OrderedDict[str, _Record] = OrderedDict()

    def admit(self, client: str) -> None:
        """Before a token from `client` is looked at: TooManyRequests while MAX_HELD answers
        to its wrong tokens are waiting."""
        if not self._table:  # no wrong token from anyone yet: the client's address not parsed
            return
        record = self._table.get(address_key(client))
        if record is not None and record.held >= MAX_HELD:
            raise TooManyRequests(
                "too many wrong tokens from this address: wait, then send the right one",
                int(MAX_DELAY),
            )

    async def wrong(self, client: str) -> None:
        """A wrong token from `client`: counted, and its answer held for the delay due."""
        record = self._record(address_key(client))
        record.wrong += 1
        delay = delay_after(record.wrong)
        if delay <= 0:
            return
        record.held += 1
        try:
            await self.sleep(delay)
        finally:
            record.held -= 1

    def _record(self, key: str) -> _Record:
        now = self.clock()
        record = self._table.get(key)
        if record is None:
            record = self._table[key] = _Record(now)
            while len(self._table) > self.max_addresses:
                self._table.popitem(last=False)
        else:
            self._table.move_to_end(key)
            if now - record.since >= WINDOW:
                record.since, record.wrong = now, 0
        return record
