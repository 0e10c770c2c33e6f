"""The gate's common yes without a coroutine (`admitted_now`, what a kept answer asks first): a
token of registry.yaml's that opens every target is its principal, counted once a target; any
other case is None, left to `admit_all`, and counts nothing."""

from __future__ import annotations

import asyncio
import hashlib
from collections import Counter

from gitreg.auth.gate import Gate
from gitreg.auth.principal import Principal
from gitreg.auth.signed_urls import UrlSigner
from gitreg.auth.target import Target
from gitreg.catalog.auth_settings import AuthSettings, TokenSpec

TOKEN = "gitreg_the-ci-token-0123456789"
SENT = f"Bearer {TOKEN}"
VPC = Target("read", "module infra/vpc/aws", "infra")
DNS = Target("read", "module infra/dns/aws", "infra")
OTHER = Target("read", "module team/app/aws", "team")
OPEN = Target("read", "module open/app/aws", "open")


def _gate() -> tuple[Gate, Counter[tuple[str, str]]]:
    spec = TokenSpec("ci", sha256=hashlib.sha256(TOKEN.encode()).hexdigest(), read=("infra",))
    counts: Counter[tuple[str, str]] = Counter()
    gate = Gate(AuthSettings(public=("open",), tokens=(spec,)), UrlSigner([b"k" * 32], 600), counts)
    return gate, counts


def test_a_token_that_opens_every_target_is_its_principal_counted_for_each() -> None:
    gate, counts = _gate()
    principal = gate.admitted_now(SENT, (VPC, DNS), "192.0.2.10")
    assert isinstance(principal, Principal) and principal.name == "ci"
    assert counts == Counter({("ci", "allowed"): 2})
    assert gate.admitted_now(SENT, (VPC,), "192.0.2.10") is principal  # remembered as sent
    assert counts == Counter({("ci", "allowed"): 3})


def test_every_other_case_is_left_to_admit_all_and_counts_nothing() -> None:
    gate, counts = _gate()
    assert gate.admitted_now(SENT, (VPC, OTHER), "") is None  # one target it does not open
    assert gate.admitted_now(SENT, (VPC, OPEN), "") is None  # a public one: anyone's
    assert gate.admitted_now(SENT, (), "") is None
    assert gate.admitted_now("Bearer gitreg_not-a-token-of-ours", (VPC,), "") is None
    assert gate.admitted_now("Basic not base64", (VPC,), "") is None
    assert counts == Counter()
    # admit_all answers them as before: the same principal where the token opens every target.
    principal = asyncio.run(gate.admit_all(SENT, (VPC, DNS), None, ""))
    assert principal is not None and principal.name == "ci"
