"""Issued tokens and spent authorization codes in PostgreSQL (state.postgres).

So a token issued on one replica opens every replica, and a revocation holds on all of them at
once: each request's token is looked up in the database, never in a copy a replica keeps."""

from __future__ import annotations

import json
import time
from typing import Any

from gitreg.state.database import Database
from gitreg.state.issued_tokens import CODE_ID, DIGEST, IssuedToken, chosen

_COLUMNS = "digest, name, body"


class PostgresIssuedTokens:
    def __init__(self, db: Database) -> None:
        self.db = db

    def keep(self, token: IssuedToken) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO gitreg_issued_tokens (digest, name, body, expires, subject, issuer)"
                " VALUES (%s, %s, %s, to_timestamp(%s), %s, %s)",
                (
                    token.digest,
                    token.name,
                    json.dumps(token.to_json()),
                    token.expires,
                    token.subject,
                    token.issuer,
                ),
            )
            conn.execute("DELETE FROM gitreg_issued_tokens WHERE expires < now()")

    def find(self, digest: str) -> IssuedToken | None:
        if not DIGEST.fullmatch(digest):
            return None
        with self.db.transaction() as conn:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM gitreg_issued_tokens WHERE digest = %s", (digest,)
            ).fetchone()
        found = _token(row) if row is not None else None
        return found if found is not None and found.live(time.time()) else None

    def named(self, name: str) -> list[IssuedToken]:
        with self.db.transaction() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM gitreg_issued_tokens WHERE name = %s", (name,)
            ).fetchall()
        return _live(rows)

    def live_tokens(self) -> list[IssuedToken]:
        with self.db.transaction() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM gitreg_issued_tokens").fetchall()
        return _live(rows)

    def revoke(self, which: str) -> list[IssuedToken]:
        ended = chosen(self.live_tokens(), which)
        if ended:
            with self.db.transaction() as conn:
                conn.execute(
                    "DELETE FROM gitreg_issued_tokens WHERE digest = ANY(%s)",
                    ([t.digest for t in ended],),
                )
        return ended

    def spend_code(self, code: str, expires: int) -> bool:
        if not CODE_ID.fullmatch(code):
            return False
        with self.db.transaction() as conn:
            row = conn.execute(
                "INSERT INTO gitreg_spent_codes (id, expires) VALUES (%s, to_timestamp(%s))"
                " ON CONFLICT (id) DO NOTHING RETURNING id",
                (code, expires),
            ).fetchone()
            conn.execute("DELETE FROM gitreg_spent_codes WHERE expires < now()")
        return row is not None


def _token(row: Any) -> IssuedToken | None:
    try:
        body = json.loads(row[2])
    except (TypeError, ValueError, RecursionError):
        return None
    token = IssuedToken.from_json(body)
    return token if token is not None and token.digest == row[0] else None


def _live(rows: list[Any]) -> list[IssuedToken]:
    now = time.time()
    found = [t for row in rows if (t := _token(row)) is not None and t.live(now)]
    return sorted(found, key=lambda t: (t.issued, t.id))
