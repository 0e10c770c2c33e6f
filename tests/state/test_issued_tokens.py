"""Tokens issued at sign-in as the state keeps them, on this machine (cache_dir, shared by
workers) and in PostgreSQL (shared by replicas): found by digest, listed, revoked by id or
name at once for every reader of the same state, expired ones gone; a one-time code spent once,
whoever asks first."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import psycopg
import pytest

from gitreg.catalog.secrets import SecretRef
from gitreg.catalog.settings import PostgresSettings
from gitreg.errors import TokensAmbiguous
from gitreg.state.issued_tokens import IssuedToken, IssuedTokenFiles, IssuedTokens, chosen
from gitreg.state.postgres_state import PostgresState
from gitreg.state.schema import MIGRATIONS


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
    assert [t.name for t in other.live_tokens()] == ["alice@acme.example", "bob@acme.example"]
    assert other.named("bob@acme.example") == [bob]
    assert other.revoke(alice.id) == [alice]  # by id
    assert one.find("a" * 64) is None
    assert one.revoke("bob@acme.example") == [bob]  # by name
    assert other.find("b" * 64) is None and other.live_tokens() == []
    assert other.revoke("nobody") == []


def test_an_expired_token_is_found_by_no_one(stores: Callable[[str], IssuedTokens]) -> None:
    one = stores("one")
    one.keep(token("alice", "c", lives=-1))
    assert one.find("c" * 64) is None and one.live_tokens() == []


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


def test_a_record_keeps_whom_the_provider_named_and_the_claims_rules_read(
    stores: Callable[[str], IssuedTokens],
) -> None:
    one, other = stores("one"), stores("other")
    kept = replace(
        token("alice@acme.example", "d"),
        subject="00u1alice",
        issuer="https://sso.acme.example",
        claims=(("department", "infra"), ("groups", ("platform", "dev"))),
    )
    one.keep(kept)
    assert other.find("d" * 64) == kept
    assert other.live_tokens()[0].to_json()["claims"] == {
        "department": "infra",
        "groups": ["platform", "dev"],
    }


def test_a_name_two_subjects_share_is_revoked_only_by_id(
    stores: Callable[[str], IssuedTokens],
) -> None:
    one = stores("one")
    mine = replace(token("pat", "e"), subject="sub-of-pat")
    theirs = replace(token("pat", "f"), subject="sub-of-another-pat")
    one.keep(mine)
    one.keep(theirs)
    with pytest.raises(TokensAmbiguous) as caught:
        one.revoke("pat")
    assert "different subjects" in str(caught.value) and "sub-of-another-pat" in str(caught.value)
    assert len(one.live_tokens()) == 2  # nothing was ended
    assert one.revoke(theirs.id) == [theirs]
    assert one.find("e" * 64) == mine
    assert one.revoke("pat") == [mine]  # one subject left under the name: all of theirs


def test_the_start_of_an_id_names_one_token_or_is_refused() -> None:
    a = replace(token("a", "a"), digest="abcdef1" + "0" * 57)
    b = replace(token("b", "b"), digest="abcdef2" + "0" * 57)
    named_like_an_id = token("abcdef1", "c")
    assert chosen([a, b], "abcdef1") == [a]
    with pytest.raises(TokensAmbiguous) as caught:
        chosen([a, b], "abcdef")
    assert "starts the id of 2 tokens" in str(caught.value)
    with pytest.raises(TokensAmbiguous) as caught:
        chosen([a, named_like_an_id], "abcdef1")
    assert "give the whole id" in str(caught.value)
    assert chosen([a, named_like_an_id], a.id) == [a]
    assert chosen([a, replace(named_like_an_id, name=a.id)], a.id) == [a]  # the whole id wins
    assert chosen([named_like_an_id], "abcdef1") == [named_like_an_id]


OLD_RECORD = {  # as gitreg wrote one before subjects and claims were kept
    "name": "alice@acme.example",
    "digest": "9" * 64,
    "read": ["platform"],
    "mirror": False,
    "ops": False,
    "issued": 1,
    "expires": 4_000_000_000,
    "via": "terraform",
}


def test_a_record_written_before_subjects_were_kept_still_loads(tmp_path: Path) -> None:
    files = IssuedTokenFiles(tmp_path)
    files.folder.mkdir(parents=True)
    (files.folder / f"{'9' * 64}.json").write_text(json.dumps(OLD_RECORD))
    found = files.find("9" * 64)
    assert found is not None and found.name == "alice@acme.example"
    assert (found.subject, found.issuer, found.claims) == ("", "", None)


def test_an_old_schema_with_tokens_is_migrated_and_its_rows_still_load(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE gitreg_schema (version integer NOT NULL)")
        for version, statements in enumerate(MIGRATIONS[:4], start=1):
            for statement in statements:
                conn.execute(statement)
            conn.execute("INSERT INTO gitreg_schema (version) VALUES (%s)", (version,))
        conn.execute(
            "INSERT INTO gitreg_issued_tokens (digest, name, body, expires)"
            " VALUES (%s, %s, %s, to_timestamp(%s))",
            ("9" * 64, OLD_RECORD["name"], json.dumps(OLD_RECORD), OLD_RECORD["expires"]),
        )
    monkeypatch.setenv("GITREG_TEST_DSN", database_url)
    state = PostgresState(PostgresSettings(SecretRef(env="GITREG_TEST_DSN")), tmp_path / "r")
    try:
        found = state.issued.find("9" * 64)
        assert found is not None and found.subject == "" and found.claims is None
        assert state.issued.revoke(found.id) == [found]
    finally:
        state.close()
    with psycopg.connect(database_url) as conn:
        columns = conn.execute(
            "SELECT column_name FROM information_schema.columns"
            " WHERE table_name = 'gitreg_issued_tokens'"
        ).fetchall()
    assert {"subject", "issuer"} <= {c[0] for c in columns}
