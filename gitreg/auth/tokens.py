"""Client tokens listed in registry.yaml, held as SHA-256 digests: a request's token is hashed
once and looked up, then compared in constant time. A token_file is read again when it changes."""

from __future__ import annotations

import hashlib
import hmac
import logging
import math
import os
import re
import secrets
import string
import threading
import time
from pathlib import Path

from gitreg.auth.authorization import bearer_token
from gitreg.auth.principal import Principal
from gitreg.catalog.auth_settings import TokenSpec
from gitreg.catalog.namespace_scope import NamespaceScope
from gitreg.errors import Unauthorized

log = logging.getLogger(__name__)

RECHECK_FILES = 1.0  # seconds between two looks at a token file's modification time
SENT_MOST = 4096  # Authorization values remembered as opening (`principal_sent`)


def digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def new_token() -> str:
    """A fresh client token: 256 random bits, URL-safe, with a prefix that says what it is."""
    return "gitreg_" + secrets.token_urlsafe(32)


STRONG_BITS = 128
_GENERATED = re.compile(r"gitreg_[A-Za-z0-9_-]{43}")
_POOLS = (
    (string.ascii_lowercase, 26),
    (string.ascii_uppercase, 26),
    (string.digits, 10),
    ("-_", 2),
)


def strength(token: str) -> int:
    """The bits of entropy `token` can hold at most, judged by its length and the kinds of
    characters it uses (a hand-set token's real entropy is lower, never higher): 256 for one
    `new_token` made."""
    if _GENERATED.fullmatch(token):
        return 256
    token = _period(token)  # "password" four times holds no more than "password"
    pool = sum(size for kind, size in _POOLS if any(c in kind for c in token))
    if any(not any(c in kind for kind, _ in _POOLS) for c in token):
        pool += 33  # the other printable ASCII characters, and anything beyond
    return int(len(token) * math.log2(pool)) if pool > 1 else 0


def _period(text: str) -> str:
    """The shortest string that `text` repeats (cut where it ends): `text` itself if none. Its
    length is `text`'s less the longest border (a prefix that is also a suffix), found in one
    pass (Knuth-Morris-Pratt's prefix function)."""
    border = [0] * len(text)
    for i in range(1, len(text)):
        k = border[i - 1]
        while k and text[i] != text[k]:
            k = border[k - 1]
        border[i] = k + 1 if text[i] == text[k] else 0
    size = len(text) - (border[-1] if text else 0)
    return text[:size] if size <= len(text) // 2 else text


class StaticTokens:
    """The `auth.tokens` list as a digest → principal table."""

    def __init__(self, specs: tuple[TokenSpec, ...]) -> None:
        self._specs = specs
        self._lock = threading.Lock()
        self._stamps: dict[Path, tuple[int, int] | None] = {}
        self._checked = 0.0
        self._table: dict[bytes, tuple[bytes, Principal]] = {}
        self._by_name: tuple[object, dict[str, tuple[bytes, Principal]]] = (None, {})
        self._sent: tuple[object, dict[str, Principal]] = (None, {})  # (table, value → principal)
        self._build()

    def principal(self, token: str) -> Principal | None:
        self._recheck_files()
        return _found(self._table, token)

    def principal_sent(self, authorization: str) -> Principal | None:
        """The principal of the client token an Authorization header value carries (`Bearer`,
        or `Basic`'s password); None for anything else.

        A value that opened is remembered as it was sent, while the tokens are what they were
        (a token file read again forgets them all): the next request with it is one lookup, not
        a parse, a digest and a comparison. A request's whole auth cost several times as much
        in a server (each step's code cold in the CPU's caches) as in a loop. The lookup tells
        nothing of a token by its timing: a string is compared only with one whose 64-bit
        hash, keyed anew in each process, is the same, which no guess can aim at. Only values
        that opened are kept, and at most SENT_MOST."""
        self._recheck_files()
        table, sent = self._sent
        if table is not self._table:
            table, sent = self._table, {}
            self._sent = (table, sent)
        found = sent.get(authorization)
        if found is not None:
            return found
        try:
            found = _found(self._table, bearer_token(authorization))
        except Unauthorized:
            return None
        if found is not None and table is self._table and len(sent) < SENT_MOST:
            sent[authorization] = found
        return found

    def entries(self) -> list[tuple[bytes, Principal]]:
        """Each token's digest and principal, as registry.yaml (and its token files) hold them
        now: what a browser session is checked against."""
        self._recheck_files()
        return list(self._table.values())

    def named(self, name: str) -> tuple[bytes, Principal] | None:
        """The token named `name`, its digest and principal, as `entries` has it (the first of
        that name): what each signed download URL is bound to, looked up by name."""
        self._recheck_files()
        table = self._table
        if self._by_name[0] is not table:  # built again (a token file changed): named again
            by_name: dict[str, tuple[bytes, Principal]] = {}
            for found in table.values():
                by_name.setdefault(found[1].name, found)
            self._by_name = (table, by_name)
        return self._by_name[1].get(name)

    def _build(self) -> None:
        table: dict[bytes, tuple[bytes, Principal]] = {}
        for spec in self._specs:
            value = _digest_of(spec)
            if value is None:
                continue
            read = NamespaceScope(spec.read)
            principal = Principal(spec.name, read, spec.mirror, spec.ops, preview=spec.preview)
            table[value] = (value, principal)
        self._table = table
        files = [s.source.file for s in self._specs if s.source and s.source.file]
        self._stamps = {path: _stamp(path) for path in files}

    def _recheck_files(self) -> None:
        if not self._stamps:
            return
        now = time.monotonic()
        if now - self._checked < RECHECK_FILES:
            return
        with self._lock:
            if now - self._checked < RECHECK_FILES:
                return
            self._checked = now
            if any(_stamp(path) != stamp for path, stamp in self._stamps.items()):
                log.info("a token file changed: reading the tokens again")
                self._build()


def _found(table: dict[bytes, tuple[bytes, Principal]], token: str) -> Principal | None:
    """`token`'s principal in `table`. Looked up by digest, so the lookup's timing tells nothing
    of a token; and the digest found is compared again in constant time."""
    presented = digest(token)
    stored, found = table.get(presented, (b"", None))
    return found if found and hmac.compare_digest(presented, stored) else None


def _digest_of(spec: TokenSpec) -> bytes | None:
    if spec.sha256 is not None:
        return bytes.fromhex(spec.sha256)
    value = spec.source.value() if spec.source else None
    if value is None:
        # Checked at start-up; a file emptied or removed since then opens nothing until fixed.
        log.warning("token %s: its token_env or token_file is empty or unreadable", spec.name)
        return None
    return digest(value)


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_mtime_ns, stat.st_size)
