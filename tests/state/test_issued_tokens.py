"""Tokens issued at sign-in as the state keeps them, on this machine (cache_dir, shared by
workers) and in PostgreSQL (shared by replicas): found by digest, listed, revoked by id or
name at once for every reader of the same state, expired ones gone; a one-time code spent once,
whoever asks first."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from gitreg.catalog.model import PostgresSettings, SecretRef
from gitreg.state.issued_tokens import IssuedToken, IssuedTokenFiles, IssuedTokens
from gitreg.state.postgres_state import PostgresState


def token(name: str, fill: str, lives: int = 3600) -> IssuedToken:
    """A token issued now to `name`, live for `lives` seconds (expired when negative)."""
    now = int(time.time())
    return IssuedToken(name, fill * 64, ("platform",), False, False, now, now + lives, "terraform")


@pytest.fixture(params=["files", "postgres"])
def stores(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[str], IssuedTokens]]:
    """Two readers of one state: two workers' cache_dir, or two replicas' PostgreSQL."""
    if request.param == "files":
        yield lambda name: IssuedTokenFiles(tmp_path / "cache")
        return
    url: str = request.getfixturevalue("database_url")
    monkeypatch.setenv("GITREG_TEST_DSN", url)
    opened: list[PostgresState] = []

    def replica(name: str) -> IssuedTokens:
        state = PostgresState(PostgresSettings(SecretRef(env="GITREG_TEST_DSN")), tmp_path / name)
        opened.append(state)
        return state.issued

    yield replica
    for state in opened:
        state.close()


def test_a_token_kept_by_one_is_found_and_revoked_for_the_other(
    stores: Callable[[str], IssuedTokens],
) -> None:
    one, other = stores("one"), stores("other")
    alice, bob = token("alice@acme.example", "a"), token("bob@acme.example", "b")
    one.keep(alice)
    one.keep(bob)
    assert other.find("a" * 64) == alice
    assert [t.name for t in other.listed()] == ["alice@acme.example", "bob@acme.example"]
    assert other.named("bob@acme.example") == [bob]
    assert other.revoke(alice.id) == [alice]  # by id
    assert one.find("a" * 64) is None
    assert one.revoke("bob@acme.example") == [bob]  # by name
    assert other.find("b" * 64) is None and other.listed() == []
    assert other.revoke("nobody") == []


def test_an_expired_token_is_found_by_no_one(stores: Callable[[str], IssuedTokens]) -> None:
    one = stores("one")
    one.keep(token("alice", "c", lives=-1))
    assert one.find("c" * 64) is None and one.listed() == []


def test_a_code_is_spent_once_of_many_at_once(stores: Callable[[str], IssuedTokens]) -> None:
    readers = [stores(f"r{i}") for i in range(4)]
    code, expires = "a-one-time-code-id-22c", int(time.time()) + 60
    with ThreadPoolExecutor(8) as pool:
        spent = list(pool.map(lambda i: readers[i % 4].spend_code(code, expires), range(16)))
    assert spent.count(True) == 1
    assert readers[0].spend_code("another-code-id-22chars", expires)


def test_a_malformed_digest_or_code_opens_nothing(tmp_path: Path) -> None:
    files = IssuedTokenFiles(tmp_path)
    assert files.find("../../etc/passwd") is None
    assert not files.spend_code("../x", int(time.time()) + 60)
