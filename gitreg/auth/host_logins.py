"""auth.git's refused logins per Git host. A forge bans the address that fails too many logins,
and that address is gitreg's: a host sees at most `failed_logins_per_minute` refused logins a
minute, whoever sent the tokens. Half of them (rounded down) are kept for client addresses that
had a token taken there in the last 24 hours, so that made-up tokens from addresses never seen
to log in, however many, cannot lock out the clients that have."""

from __future__ import annotations

import logging
import math
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gitreg.auth.client_address import address_key
from gitreg.errors import AuthUnavailable

log = logging.getLogger(__name__)

WINDOW = 60.0
REMEMBERED = 24 * 3600.0  # how long an address that had a token taken counts as known there
MAX_KNOWN = 10_000  # (host, address) pairs kept: the one that logged in longest ago goes first


@dataclass(frozen=True)
class Login:
    """A login under way at `host`, for a client `address` that had a token taken there lately
    (`known`) or not."""

    host: str
    address: str
    known: bool


@dataclass
class _Host:
    refused: deque[tuple[float, bool]]  # when a login was refused, and whether from a known address
    under_way: Counter[bool]  # logins under way, by known


class HostLogins:
    def __init__(
        self,
        per_minute: int,
        clock: Callable[[], float] = time.monotonic,
        max_known: int = MAX_KNOWN,
    ) -> None:
        self.per_minute = per_minute
        # What addresses with no token taken lately may use of it: all but the reserve.
        self.unknown_share = per_minute - per_minute // 2
        self.clock = clock
        self.max_known = max_known
        self._hosts: dict[str, _Host] = {}
        self._known: OrderedDict[tuple[str, str], float] = OrderedDict()  # → until when
        self._paused: set[tuple[str, bool]] = set()  # (host, known) said in the log to wait

    def start(self, host: str, client: str) -> Login:
        """A login at `host` for `client`, counted as refused until it ends; AuthUnavailable,
        counting nothing, when the host's refused logins leave no room for it."""
        address, now = address_key(client), self.clock()
        known = self.is_known(host, address)
        state = self._hosts.setdefault(host, _Host(deque(), Counter()))
        while state.refused and state.refused[0][0] <= now - WINDOW:
            state.refused.popleft()
        everyone = [t for t, _ in state.refused]
        seconds = _wait(everyone, sum(state.under_way.values()), self.per_minute, now)
        if not known:
            unknown = [t for t, was_known in state.refused if not was_known]
            seconds = max(seconds, _wait(unknown, state.under_way[False], self.unknown_share, now))
        if seconds:
            self._say_paused(host, known, seconds)
            raise AuthUnavailable(
                "too many refused logins at this module's Git server in the last minute from"
                " clients of this registry (auth.git.failed_logins_per_minute, lest it ban the"
                f" registry's address); new tokens are checked again in {seconds}s",
                retry_after=seconds,
            )
        self._paused.discard((host, known))
        state.under_way[known] += 1
        return Login(host, address, known)

    def ended(self, login: Login, taken: bool | None) -> None:
        """`login` is over: the host took the token (True), refused it (False), or said
        neither."""
        state = self._hosts[login.host]
        state.under_way[login.known] -= 1
        if taken is False:
            state.refused.append((self.clock(), login.known))
        elif taken:
            self.took(login.host, login.address)

    def took(self, host: str, client: str) -> None:
        """`host` took a token from `client`: its address is known there for a day."""
        key = (host, address_key(client))
        self._known[key] = self.clock() + REMEMBERED
        self._known.move_to_end(key)
        while len(self._known) > self.max_known:
            self._known.popitem(last=False)

    def is_known(self, host: str, address: str) -> bool:
        until = self._known.get((host, address))
        if until is None:
            return False
        if self.clock() < until:
            return True
        del self._known[(host, address)]
        return False

    def _say_paused(self, host: str, known: bool, seconds: int) -> None:
        if (host, known) in self._paused:
            return
        self._paused.add((host, known))
        who = "any client" if known else "clients it has not taken a token from in a day"
        log.warning(
            "auth.git: %s refused too many logins in the last minute"
            " (failed_logins_per_minute %d): new tokens from %s wait, for %ds",
            host,
            self.per_minute,
            who,
            seconds,
        )


def _wait(refused: Sequence[float], under_way: int, limit: int, now: float) -> int:
    """The seconds until one more login fits under `limit`: 0, it fits now; 1 when a login under
    way is in the way (it ends within auth.git.timeout, and frees its place if its token is
    taken); else until the refusals in the way have left the window."""
    over = len(refused) + under_way - limit + 1  # how many must go
    if over <= 0:
        return 0
    if over <= under_way:
        return 1
    return max(1, math.ceil(refused[over - under_way - 1] + WINDOW - now))
