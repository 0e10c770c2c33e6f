"""Tokens issued at sign-in held to the claim rules registry.yaml has now: what a token reads is
what it was issued for and what the rules still give to the claims it was issued for (the
mirror and ops likewise); the claims kept with it are only what the rules read, never the
nonce; a record without claims, or of another provider, reads nothing."""

from __future__ import annotations

import time
from pathlib import Path

from gitreg.auth.issued import IssuedPrincipals
from gitreg.auth.oidc import rule_claims
from gitreg.catalog.auth_settings import LoginSettings, OidcIssuer
from gitreg.catalog.namespace_scope import NamespaceScope
from gitreg.state.issued_tokens import Claims, IssuedToken, IssuedTokenFiles

ISSUER = "https://sso.acme.example"


def rule(match: dict[str, str], read: tuple[str, ...], mirror: bool = False) -> OidcIssuer:
    return OidcIssuer("acme", ISSUER, "gitreg", tuple(match.items()), read, mirror=mirror)


def book(tmp_path: Path, *rules: OidcIssuer, issuer: str = ISSUER) -> IssuedPrincipals:
    settings = LoginSettings("acme", issuer, "gitreg", grants=rules)
    return IssuedPrincipals(IssuedTokenFiles(tmp_path), settings)


def record(
    read: tuple[str, ...], claims: Claims | None, mirror: bool = False, issuer: str = ISSUER
) -> IssuedToken:
    now = int(time.time())
    return IssuedToken(
        "alice", "a" * 64, read, mirror, False, now, now + 60, "terraform", "sub", issuer, claims
    )


PLATFORM = rule({"groups": "platform"}, ("platform", "shared-*"), mirror=True)
EVERYONE = rule({"groups": "*"}, ("shared-*",))
TEAMS = rule({"groups": "team-*"}, ("{team}",))
ALICE = (("groups", ("dev", "platform")), ("team", "team-a"))


def test_a_rule_removed_narrows_what_a_token_reads(tmp_path: Path) -> None:
    given = record(("platform", "shared-*", "team-a"), ALICE, mirror=True)
    assert book(tmp_path, PLATFORM, EVERYONE).held(given).read.covers("platform")
    narrowed = book(tmp_path, EVERYONE).held(given)
    assert not narrowed.read.covers("platform") and narrowed.read.covers("shared-net")
    assert not narrowed.mirror  # given, but no rule gives it now
    assert book(tmp_path, PLATFORM).held(given).mirror


def test_a_rule_widened_gives_no_more_than_was_issued(tmp_path: Path) -> None:
    given = record(("shared-*",), ALICE)
    wider = rule({"groups": "dev"}, ("*",), mirror=True)
    held = book(tmp_path, wider).held(given)
    assert held.read.covers("shared-net") and not held.read.covers("platform")
    assert not held.mirror


def test_a_record_without_claims_or_of_another_provider_reads_nothing(tmp_path: Path) -> None:
    rules = book(tmp_path, PLATFORM, EVERYONE)
    assert rules.held(record(("platform",), None)).read == NamespaceScope()
    elsewhere = record(("platform",), ALICE, issuer="https://old-sso.acme.example")
    assert rules.held(elsewhere).read == NamespaceScope()


def test_only_what_the_rules_read_is_kept() -> None:
    claims = {
        "sub": "alice-sub",
        "nonce": "n",
        "email": "alice@acme.example",
        "email_verified": True,
        "groups": ["dev", "platform", "secret-project", 3, ["nested"]],
        "team": "team-a",
        "level": 3,
    }
    rules = (PLATFORM, rule({"groups": "dev"}, ("x",)), TEAMS, rule({"level": "3"}, ("y",)))
    kept = rule_claims((*rules, rule({"nonce": "*"}, ("z",))), claims)
    assert kept == (("groups", ("platform", "dev")), ("level", "3"), ("team", "team-a"))
    # Of a list, one item each glob matches: what a rule kept as it was needs to match again.
    assert rule_claims((EVERYONE,), claims) == (("groups", ("dev",)),)


def test_a_person_in_many_groups_keeps_a_few(tmp_path: Path) -> None:
    claims = {"groups": [f"group-{i:04d}-of-a-large-company" for i in range(1000)] + ["platform"]}
    kept = rule_claims((PLATFORM, EVERYONE), claims)
    assert kept == (("groups", ("platform", "group-0000-of-a-large-company")),)
    given = record(("platform", "shared-*"), kept, mirror=True)
    held = book(tmp_path, PLATFORM, EVERYONE).held(given)
    assert held.read.covers("platform") and held.read.covers("shared-net") and held.mirror
