"""Browser sign-outs as the state holds them, and their record on this machine.

`EndedSessions` is what a record of them answers (the gate asks it, the state keeps it). On this
machine the record is one empty file per ended session in cache_dir/auth/ended-sessions, named by
when the cookie expires and the session's id, so that every worker sees one the moment it is
written (a look costs one stat) and entries whose cookie has expired anyway are swept."""

from __future__ import annotations

import contextlib
import os
import re
import time
from pathlib import Path
from typing import Protocol

from gitreg.atomic import TEMP_SUFFIX, write_atomically

FOLDER = Path("auth") / "ended-sessions"
# What a session id looks like: 128 random bits, URL-safe base64 (`auth/sessions.py` makes them).
# Checked where a cookie is read, and again here, since an id names a file.
SESSION_ID = re.compile(r"[A-Za-z0-9_-]{22}")


class EndedSessions(Protocol):
    """Where sign-outs are recorded, for every worker and replica to honour; an entry is kept
    until `expires`, when the cookie would have ended anyway."""

    def end_session(self, session: str, expires: int) -> None: ...

    def session_ended(self, session: str, expires: int) -> bool: ...


class EndedSessionFiles:
    def __init__(self, cache_dir: Path) -> None:
        self.folder = cache_dir / FOLDER

    def end_session(self, session: str, expires: int) -> None:
        """Record `session` as ended until `expires`; sweep the entries that have expired."""
        write_atomically(self._path(session, expires), b"", sync="folder")
        self.sweep()

    def session_ended(self, session: str, expires: int) -> bool:
        return self._path(session, expires).exists()

    def sweep(self, now: float | None = None) -> int:
        """Remove what no cookie can need any more; the number removed."""
        moment = time.time() if now is None else now
        removed = 0
        try:
            names = os.listdir(self.folder)
        except FileNotFoundError:
            return 0
        for name in names:
            expires, _, _ = name.partition(".")
            if name.endswith(TEMP_SUFFIX) or not expires.isdigit() or int(expires) >= moment:
                continue
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.folder / name)
                removed += 1
        return removed

    def _path(self, session: str, expires: int) -> Path:
        # Both come from a cookie whose signature verified; checked again all the same, as
        # they name a file.
        if not SESSION_ID.fullmatch(session) or not 0 <= expires < 10**12:
            raise ValueError(f"not a session: {session!r}")
        return self.folder / f"{expires}.{session}"
