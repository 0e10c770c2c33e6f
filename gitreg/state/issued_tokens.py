"""Tokens this registry issued to people who signed in, as the state holds them.

People sign in by `terraform login` or the sign-in page. `IssuedTokens` is what a record of the
tokens answers: the gate asks it on every request that carries one, `gitreg token list` and
`revoke` read and end them. On this machine the record is one JSON file per token in
cache_dir/auth/issued-tokens, named by the token's SHA-256, so that every worker finds one by a
single open and a revocation (the file removed) holds on all of them at once. The authorization
codes spent once are kept beside them until they expire."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from gitreg.atomic import TEMP_SUFFIX, write_atomically
from gitreg.errors import TokensAmbiguous

FOLDER = Path("auth") / "issued-tokens"
BY_NAME = Path("auth") / "issued-by-name"  # a folder per person, an empty file per token
SPENT = Path("auth") / "spent-codes"
DIGEST = re.compile(r"[0-9a-f]{64}")
CODE_ID = re.compile(r"[A-Za-z0-9_-]{16,64}")
ID_LENGTH = 16  # hex digits of the digest that name a token in `gitreg token list`
_ID = re.compile(r"[0-9a-f]{6,16}")  # what `revoke` reads as (the start of) an id
Via = Literal["terraform", "browser"]
# The ID token's claims that registry.yaml's claim rules named when the token was issued, as
# text: a claim and its value, or the items of a list claim (`groups`) the rules' globs match.
Claims = tuple[tuple[str, str | tuple[str, ...]], ...]


@dataclass(frozen=True)
class IssuedToken:
    """One token issued here: never its value, only its SHA-256 (`digest`, hex). `id`: the
    first hex digits of that digest, which `gitreg token list` shows and `revoke` takes."""

    name: str  # the person: auth.login.name_claim, or a verified email, else the sub
    digest: str
    read: tuple[str, ...]
    mirror: bool
    ops: bool
    issued: int  # epoch seconds
    expires: int
    via: Via
    # Who the provider says it is (`sub`, and the issuer that said so), and the claims the
    # rules are held to at each reload; a record written before they were kept has "" and None.
    subject: str = ""
    issuer: str = ""
    claims: Claims | None = None

    @property
    def id(self) -> str:
        return self.digest[:ID_LENGTH]

    def live(self, now: float) -> bool:
        return now < self.expires

    def to_json(self) -> dict[str, Any]:
        claims = None
        if self.claims is not None:
            claims = {c: v if isinstance(v, str) else list(v) for c, v in self.claims}
        return {**asdict(self), "read": list(self.read), "claims": claims}

    @classmethod
    def from_json(cls, value: Any) -> IssuedToken | None:
        """A record as written; None for anything else (a file damaged or of another format)."""
        try:
            token = cls(
                name=str(value["name"]),
                digest=str(value["digest"]),
                read=tuple(str(r) for r in value["read"]),
                mirror=bool(value["mirror"]),
                ops=bool(value["ops"]),
                issued=int(value["issued"]),
                expires=int(value["expires"]),
                via="browser" if value.get("via") == "browser" else "terraform",
                subject=str(value.get("subject") or ""),
                issuer=str(value.get("issuer") or ""),
                claims=claims_from_json(value.get("claims")),
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
        return token if DIGEST.fullmatch(token.digest) else None


def claims_from_json(value: Any) -> Claims | None:
    """The claims a record keeps; None for a record without them (issued before they were
    kept: it reads nothing now) or with something else there."""
    if not isinstance(value, dict):
        return None
    kept: list[tuple[str, str | tuple[str, ...]]] = []
    for claim, found in value.items():
        if isinstance(found, str):
            kept.append((str(claim), found))
        elif isinstance(found, list):
            kept.append((str(claim), tuple(i for i in found if isinstance(i, str))))
    return tuple(sorted(kept))  # in claim order, as they are made


def chosen(tokens: list[IssuedToken], which: str) -> list[IssuedToken]:
    """The tokens `which` names: one token by its id (or the start of one, 6 hex digits at
    least; a whole id always names its token), else every token of one person, by name.
    TokensAmbiguous when it names more than that: the start of several ids, both an id's start
    and a name, or a name that tokens of different subjects share (two people, or one record too
    old to say whose), which are never ended together on a guess."""
    by_id = [t for t in tokens if t.id.startswith(which)] if _ID.fullmatch(which) else []
    by_name = [t for t in tokens if t.name == which]
    if len(which) == ID_LENGTH and len(by_id) == 1:
        return by_id  # a whole id names its token, whatever else goes by that text
    if by_id and by_name:
        raise TokensAmbiguous(
            f"{which!r} is the start of a token's id and a name: give the whole id (16 digits)"
            + _listed(by_id + by_name)
        )
    if len(by_id) > 1:
        raise TokensAmbiguous(
            f"{which!r} starts the id of {len(by_id)} tokens: give more of it" + _listed(by_id)
        )
    if len({t.subject for t in by_name}) > 1:
        raise TokensAmbiguous(
            f"{which!r} names tokens of different subjects: revoke each by its id"
            + _listed(by_name)
        )
    return by_id or by_name


def _listed(tokens: list[IssuedToken]) -> str:
    return "".join(
        f"\n  {t.id}  {t.name}  subject {t.subject or 'unknown, an older record'}" for t in tokens
    )


class IssuedTokens(Protocol):
    """Where issued tokens are kept, for every worker and replica to honour at once."""

    def keep(self, token: IssuedToken) -> None:
        """Record a new token (blocks; OSError or StateUnavailable when it cannot be kept)."""
        ...

    def find(self, digest: str) -> IssuedToken | None:
        """The live token whose SHA-256 is `digest` (hex); None when there is none, or it
        expired or was revoked (blocks; StateUnavailable when that cannot be told now)."""
        ...

    def named(self, name: str) -> list[IssuedToken]:
        """The live tokens issued to `name` (blocks)."""
        ...

    def live_tokens(self) -> list[IssuedToken]:
        """Every live token, oldest first (blocks)."""
        ...

    def revoke(self, which: str) -> list[IssuedToken]:
        """End the tokens `which` names (`chosen`), everywhere, now; those ended (blocks)."""
        ...

    def spend_code(self, code: str, expires: int) -> bool:
        """Whether the one-time authorization code `code` (its id) is spent now for the first
        time: True once, False ever after, until it `expires` anyway (blocks)."""
        ...


class IssuedTokenFiles:
    def __init__(self, cache_dir: Path) -> None:
        self.folder = cache_dir / FOLDER
        self.by_name = cache_dir / BY_NAME
        self.spent = cache_dir / SPENT

    def keep(self, token: IssuedToken) -> None:
        body = json.dumps(token.to_json(), sort_keys=True).encode()
        write_atomically(self._path(token.digest), body, sync="folder")
        # So that a person's tokens (what a page session is checked against, on every page
        # they open) are found without reading everyone's.
        write_atomically(self._person(token.name) / token.digest, b"")
        self._sweep(time.time())

    def find(self, digest: str) -> IssuedToken | None:
        if not DIGEST.fullmatch(digest):
            return None
        found = self._read(self._path(digest))
        return found if found is not None and found.live(time.time()) else None

    def named(self, name: str) -> list[IssuedToken]:
        found = [self.find(d) for d in _names(self._person(name)) if DIGEST.fullmatch(d)]
        return sorted((t for t in found if t and t.name == name), key=lambda t: (t.issued, t.id))

    def live_tokens(self) -> list[IssuedToken]:
        now = time.time()
        try:
            names = os.listdir(self.folder)
        except FileNotFoundError:
            return []
        found = [self._read(self.folder / n) for n in names if n.endswith(".json")]
        return sorted((t for t in found if t and t.live(now)), key=lambda t: (t.issued, t.id))

    def revoke(self, which: str) -> list[IssuedToken]:
        ended = chosen(self.live_tokens(), which)
        for token in ended:
            for path in (self._path(token.digest), self._person(token.name) / token.digest):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
        return ended

    def spend_code(self, code: str, expires: int) -> bool:
        if not CODE_ID.fullmatch(code):
            return False
        self.spent.mkdir(parents=True, exist_ok=True)
        try:
            # O_EXCL: of several workers spending the same code at once, one creates the file.
            os.close(os.open(self.spent / f"{expires}.{code}", os.O_CREAT | os.O_EXCL, 0o644))
        except FileExistsError:
            return False
        self._sweep(time.time())
        return True

    def _sweep(self, now: float) -> None:
        """Remove the codes and tokens that have expired anyway."""
        for name in _names(self.spent):
            expires, _, _ = name.partition(".")
            if expires.isdigit() and int(expires) < now:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.spent / name)
        for name in _names(self.folder):
            if name.endswith(TEMP_SUFFIX) or not name.endswith(".json"):
                continue
            token = self._read(self.folder / name)
            if token is not None and not token.live(now):
                for path in (self.folder / name, self._person(token.name) / token.digest):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(path)

    def _person(self, name: str) -> Path:
        return self.by_name / hashlib.sha256(name.encode()).hexdigest()[:32]

    def _path(self, digest: str) -> Path:
        if not DIGEST.fullmatch(digest):
            raise ValueError("not a token digest")
        return self.folder / f"{digest}.json"

    @staticmethod
    def _read(path: Path) -> IssuedToken | None:
        try:
            return IssuedToken.from_json(json.loads(path.read_bytes()))
        except (OSError, ValueError, RecursionError):
            return None


def _names(folder: Path) -> list[str]:
    try:
        return os.listdir(folder)
    except FileNotFoundError:
        return []
