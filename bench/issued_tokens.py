"""What holding a sign-in's token to the claim rules costs a request that carries one.

Every request with a token issued at sign-in turns its record into a principal. Before the rules
held it, that was a Principal built from the record's namespaces (the baseline, measured here in
the same run); now it is `IssuedPrincipals.held`, whose rule matching is kept per record and
catalog, so a request pays a cache look-up, and the first request after a reload the matching.

    python -m bench.issued_tokens [--rounds 7]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import timeit
from pathlib import Path

from gitreg.auth.issued import IssuedPrincipals
from gitreg.auth.principal import Principal
from gitreg.catalog.auth_settings import LoginSettings, OidcIssuer
from gitreg.catalog.namespace_scope import NamespaceScope
from gitreg.state.issued_tokens import IssuedToken, IssuedTokenFiles

_CALLS = 100_000
_GROUPS = ("platform", "dev", "ops", "data")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    rules = tuple(
        OidcIssuer("Acme", "https://sso", "gitreg", claims=(("groups", g),), read=(g, "shared-*"))
        for g in _GROUPS
    )
    settings = LoginSettings("Acme", "https://sso", "gitreg", grants=rules)
    issued = IssuedPrincipals(IssuedTokenFiles(Path(tempfile.gettempdir())), settings)  # unread
    token = IssuedToken(
        name="alice",
        digest="0" * 64,
        read=("platform", "shared-*"),
        mirror=False,
        ops=False,
        issued=0,
        expires=2**40,
        via="terraform",
        subject="alice",
        issuer="https://sso",
        claims=(("groups", "platform"),),
    )

    def before() -> Principal:
        return Principal(token.name, NamespaceScope(token.read), token.mirror, token.ops)

    before_us, held_us = [], []
    for _ in range(rounds):
        before_us.append(timeit.timeit(before, number=_CALLS) / _CALLS * 1e6)
        held_us.append(timeit.timeit(lambda: issued.held(token), number=_CALLS) / _CALLS * 1e6)
    base, held = statistics.median(before_us), statistics.median(held_us)
    print(f"{'a request':34} {'us':>7} {'ratio':>6}  (medians of {rounds} rounds)")
    print(f"{'before: the record as it was':34} {base:7.2f} {1:6.2f}")
    print(f"{'held to the rules (kept)':34} {held:7.2f} {held / base:6.2f}")


if __name__ == "__main__":
    main()
