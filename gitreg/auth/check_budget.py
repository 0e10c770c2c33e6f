"""auth.git's logins per client address: at most `checks_per_minute` a minute. A forge bans the
address that fails too many logins, and that address is gitreg's: no client may make gitreg
log in for made-up tokens faster than this. auth.login's sign-ins are counted per address the
same way (`what`: what is counted, as a refusal says it)."""

from __future__ import annotations

import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable

from gitreg.auth.client_address import address_key
from gitreg.errors import TooManyRequests

WINDOW = 60.0
MAX_ADDRESSES = 10_000  # the table's bound: the address seen longest ago is forgotten first


class CheckBudget:
    def __init__(
        self,
        per_minute: int,
        clock: Callable[[], float] = time.monotonic,
        max_addresses: int = MAX_ADDRESSES,
        what: str = "tokens checked with Git servers in the last minute, the most"
        " auth.git.checks_per_minute allows",
    ) -> None:
        self.per_minute = per_minute
        self.what = what
        self.clock = clock
        self.max_addresses = max_addresses
        self._spent: OrderedDict[str, deque[float]] = OrderedDict()

    def spend(self, client: str) -> None:
        """Count one login for `client`; TooManyRequests, counting nothing, when it had
        `per_minute` in the last minute."""
        key, now = address_key(client), self.clock()
        times = self._spent.get(key)
        if times is None:
            times = self._spent[key] = deque()
            while len(self._spent) > self.max_addresses:
                self._spent.popitem(last=False)
        else:
            self._spent.move_to_end(key)
        while times and times[0] <= now - WINDOW:
            times.popleft()
        if len(times) >= self.per_minute:
            wait = max(1, math.ceil(times[0] + WINDOW - now))
            raise TooManyRequests(
                f"this address had {self.per_minute} {self.what}; try again in {wait}s",
                wait,
            )
        times.append(now)
