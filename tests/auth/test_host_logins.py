"""HostLogins alone, on a clock the test moves: which logins a Git host's refusals leave room
for, and the addresses it remembers (against a real Git server: tests/auth/test_git_access.py
and tests/web/test_git_costs.py)."""

from __future__ import annotations

import pytest

from gitreg.auth.host_logins import REMEMBERED, HostLogins
from gitreg.errors import AuthUnavailable
from tests.support.clock import Clock

HOST = "git.example.com:443"


def refuse(logins: HostLogins, client: str, host: str = HOST) -> None:
    logins.ended(logins.start(host, client), False)


def wait_for(logins: HostLogins, client: str, host: str = HOST) -> int:
    with pytest.raises(AuthUnavailable) as caught:
        logins.start(host, client)
    return caught.value.retry_after


def test_new_addresses_share_half_and_known_ones_the_rest() -> None:
    clock = Clock()
    logins = HostLogins(8, clock)
    logins.took(HOST, "192.0.2.1")
    for i in range(4):
        refuse(logins, f"198.51.100.{i}")
        clock.now += 5
    assert wait_for(logins, "198.51.100.99") == 40  # at 1020, the first refusal leaves at 1060
    for _ in range(4):
        refuse(logins, "192.0.2.1")  # a known address may fail too: counted for everyone
    assert wait_for(logins, "192.0.2.1") == 40
    clock.now += 40
    refuse(logins, "192.0.2.1")  # one refusal has left: room for one more
    assert wait_for(logins, "192.0.2.1") == 5


def test_another_host_has_its_own_count() -> None:
    logins = HostLogins(2, Clock())
    refuse(logins, "198.51.100.1")
    wait_for(logins, "198.51.100.2")
    refuse(logins, "198.51.100.2", "other.example.com:443")


def test_a_login_under_way_holds_its_place_until_it_ends() -> None:
    logins = HostLogins(2, Clock())
    under_way = logins.start(HOST, "198.51.100.1")
    assert wait_for(logins, "198.51.100.2") == 1  # it may end taken within seconds
    logins.ended(under_way, True)  # taken: its place is free, and its address known
    refuse(logins, "198.51.100.2")
    refuse(logins, "198.51.100.1")


def test_a_known_address_is_known_for_a_day_by_its_host_and_its_64() -> None:
    clock = Clock()
    logins = HostLogins(8, clock)
    logins.took(HOST, "2001:db8::1")
    assert logins.is_known(HOST, "2001:db8::/64")
    assert not logins.is_known("other.example.com:443", "2001:db8::/64")
    clock.now += REMEMBERED - 1
    assert logins.is_known(HOST, "2001:db8::/64")
    clock.now += 1
    assert not logins.is_known(HOST, "2001:db8::/64")


def test_the_known_addresses_are_bounded_oldest_first() -> None:
    logins = HostLogins(8, Clock(), max_known=3)
    for i in range(4):
        logins.took(HOST, f"192.0.2.{i}")
    logins.took(HOST, "192.0.2.1")  # seen again: now the newest
    logins.took(HOST, "192.0.2.9")
    assert [logins.is_known(HOST, f"192.0.2.{i}") for i in (0, 1, 2, 3, 9)] == [
        False,
        True,
        False,
        True,
        True,
    ]
