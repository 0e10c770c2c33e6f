"""`gitreg token list` and `gitreg token revoke NAME|ID`: the tokens people were issued.

They were issued when people signed in (auth.login), and are listed as the state holds them
(cache_dir, or PostgreSQL under `state:`); their end is honoured by every worker and replica at
the next request. A NAME or ID that does not name one token or one person's tokens ends nothing,
and says which it could mean. See docs/reference/commands.md."""

from __future__ import annotations

import argparse
import datetime
import sys

from gitreg.catalog.model import Catalog
from gitreg.errors import StateUnavailable, TokensAmbiguous
from gitreg.state.configured import open_state
from gitreg.state.issued_tokens import IssuedToken


def issued_tokens(catalog: Catalog, args: argparse.Namespace) -> int:
    state = open_state(catalog)
    try:
        if args.action == "list":
            return _list(state.issued.live_tokens())
        if not args.name:
            print("gitreg: token revoke: give the NAME or ID of the tokens to end", file=sys.stderr)
            return 2
        return _revoked(args.name, state.issued.revoke(args.name))
    except TokensAmbiguous as exc:
        print(f"gitreg: token revoke: nothing was revoked: {exc}", file=sys.stderr)
        return 1
    except (StateUnavailable, OSError) as exc:
        problem = exc.strerror if isinstance(exc, OSError) else str(exc)
        print(f"gitreg: token {args.action}: the tokens cannot be read: {problem}", file=sys.stderr)
        return 1
    finally:
        state.close()


def _list(tokens: list[IssuedToken]) -> int:
    if not tokens:
        print("no tokens issued by sign-in are live")
        return 0
    rows = [("ID", "NAME", "SUBJECT", "VIA", "ISSUED", "EXPIRES", "READS")]
    rows += [
        (
            t.id,
            t.name,
            t.subject or "-",  # "-": a record from before subjects were kept
            t.via,
            _day(t.issued),
            _day(t.expires),
            ", ".join(t.read) or "-",
        )
        for t in tokens
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        padded = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        print("  ".join([*padded, row[-1]]))
    return 0


def _revoked(which: str, ended: list[IssuedToken]) -> int:
    if not ended:
        print(f"gitreg: token revoke: no live token has the id or name {which!r}", file=sys.stderr)
        return 1
    for token in ended:
        who = f"{token.name}, subject {token.subject}" if token.subject else token.name
        print(f"revoked {token.id} ({who}, {token.via}, issued {_day(token.issued)})")
    return 0


def _day(seconds: int) -> str:
    moment = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    return moment.strftime("%Y-%m-%d %H:%M UTC")
