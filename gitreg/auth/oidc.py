"""CI identity tokens (OIDC JWTs from GitLab CI, GitHub Actions or any issuer), checked and mapped.

The signature is checked against the issuer's published keys, then issuer, audience, expiry and
not-before; then the claims are mapped to the namespaces `auth.oidc` opens to them. auth.login
shares the rules: for it, the claims they read are kept with a token issued at sign-in, to hold
it to later rules. See docs/private.md."""

from __future__ import annotations

import base64
import binascii
import datetime
import json
import math
import re
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Any, TypeGuard

from joserfc import jwt
from joserfc.errors import BadSignatureError, JoseError, SecurityWarning
from joserfc.jwk import Key

from gitreg.auth.jwks import CA_KEY, IssuerKeys
from gitreg.auth.principal import Principal, Refused
from gitreg.catalog.auth_settings import OidcIssuer
from gitreg.catalog.namespace_scope import NamespaceScope
from gitreg.state.issued_tokens import Claims

# Asymmetric only: `none` would need no key, and HS* would take the issuer's public key as a
# shared secret, which anyone can read.
ALGORITHMS = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"}
    | {"EdDSA", "Ed25519"}
)
MAX_TOKEN = 16 << 10  # CI identity tokens are about 1 KiB
LEEWAY = 60  # seconds of clock skew forgiven on exp and nbf
_SEGMENT = re.compile(r"[A-Za-z0-9_-]*")
_NAMESPACE = re.compile(r"[A-Za-z0-9_-]{1,64}")  # what a claim's value must be to fill {claim}
_PLACEHOLDER = re.compile(r"\{([A-Za-z0-9_]+)\}")
_KEPT = 255  # the longest claim value kept with an issued token (a longer one matches nothing)


class OidcVerifier:
    """The `auth.oidc` entries, as a Verifier: tokens of the issuers they name, and no other."""

    def __init__(
        self,
        entries: Sequence[OidcIssuer],
        clock: Callable[[], float] = time.time,
        ca_keys: Sequence[str] = (),
    ):
        """`ca_keys`: the key of each entry's CA bundle (`auth.oidc[0].ca_file`), said when its
        issuer's certificate is not trusted; without one, jwks.CA_KEY."""
        self.entries = tuple(entries)
        self.clock = clock
        self._keys: dict[str, IssuerKeys] = {}
        for i, entry in enumerate(self.entries):
            if entry.issuer not in self._keys:
                ca_key = ca_keys[i] if i < len(ca_keys) else CA_KEY
                self._keys[entry.issuer] = IssuerKeys(entry.issuer, entry.ca_file, clock, ca_key)

    async def identify(self, token: str) -> Principal | None:
        verified = await self.verify(token)
        return verified[0] if verified is not None else None

    async def verify(self, token: str) -> tuple[Principal, dict[str, Any]] | None:
        """The token's principal and its claims, once every check passed; None when the token
        is not of an issuer named here. Refused (saying whose and why) when it fails one."""
        parts = token.split(".")
        if len(parts) != 3 or not all(_SEGMENT.fullmatch(p) for p in parts):
            return None
        if len(token) > MAX_TOKEN:
            raise Refused("unknown", "malformed", f"an identity token must be under {MAX_TOKEN}B")
        header, claims = _unverified(parts[0]), _unverified(parts[1])
        issuer = claims.get("iss") if claims is not None else None
        if header is None or not isinstance(issuer, str) or issuer not in self._keys:
            return None
        entries = [e for e in self.entries if e.issuer == issuer]
        name = entries[0].name
        alg, kid = header.get("alg"), header.get("kid")
        if not isinstance(alg, str) or alg not in ALGORITHMS:
            raise Refused(
                name,
                "bad_algorithm",
                f"the identity token is signed with {_shown(alg)}; only asymmetric algorithms"
                f" are accepted ({', '.join(sorted(ALGORITHMS))})",
            )
        if kid is not None and not isinstance(kid, str):
            raise Refused(name, "malformed", "the identity token's key id (kid) is not a string")
        key = await self._keys[issuer].key(kid)
        if key is None:
            which = f"the key {_shown(kid)}" if kid is not None else "no key id (kid)"
            raise Refused(
                name,
                "unknown_key",
                f"the identity token names {which}, which its issuer {issuer} does not list",
            )
        if key.get("alg") not in (None, alg):
            raise Refused(name, "bad_signature", f"the identity token's key is not for {alg}")
        try:
            verified = _decode(token, key, alg)
        except BadSignatureError:
            raise Refused(
                name, "bad_signature", "the identity token's signature does not verify"
            ) from None
        except JoseError as exc:
            # exc.error is a fixed code ("invalid_payload"): never a part of the token.
            raise Refused(
                name, "malformed", f"the identity token cannot be read ({exc.error})"
            ) from None
        except (ValueError, TypeError, KeyError, RecursionError):
            # joserfc trips on some header values of the wrong type (`crit: 3`).
            raise Refused(name, "malformed", "the identity token cannot be read") from None
        self._check_times(verified, name)
        audiences = _audiences(verified.get("aud"))
        matching = [e for e in entries if e.audience in audiences]
        if not matching:
            wanted = " or ".join(sorted({repr(e.audience) for e in entries}))
            raise Refused(
                name,
                "wrong_audience",
                f"the identity token is for the audience {_shown(sorted(audiences))}, not {wanted}",
            )
        return granted(matching, verified), verified

    def close(self) -> None:
        for keys in self._keys.values():
            keys.close()

    def _check_times(self, claims: dict[str, Any], name: str) -> None:
        now = self.clock()
        exp, nbf = claims.get("exp"), claims.get("nbf")
        if not _is_time(exp):
            raise Refused(name, "malformed", "the identity token has no expiry (exp)")
        if now > exp + LEEWAY:
            raise Refused(name, "expired", f"the identity token expired at {_utc(exp)}")
        if nbf is None:
            return
        if not _is_time(nbf):
            raise Refused(name, "malformed", "the identity token's nbf is not a time")
        if now + LEEWAY < nbf:
            raise Refused(name, "not_yet_valid", f"the identity token is valid from {_utc(nbf)}")


def _decode(token: str, key: Key, alg: str) -> dict[str, Any]:
    """The claims, once the signature verifies. `EdDSA` is the name RFC 9864 deprecates for
    Ed25519 or Ed448, not a weak algorithm: joserfc's warning about it is not ours to raise."""
    if alg != "EdDSA":
        return jwt.decode(token, key, algorithms=[alg]).claims
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SecurityWarning)
        return jwt.decode(token, key, algorithms=[alg]).claims


def granted(matching: Sequence[OidcIssuer], claims: Mapping[str, Any]) -> Principal:
    """What every entry whose claims match opens; named by the first. A token no entry's claims
    match is still known (it reads no namespace): the gate then says why it is refused."""
    given = [e for e in matching if all(_matches(claims.get(c), g) for c, g in e.claims)]
    if not given:
        return Principal(matching[0].name if matching else "")
    read = [p for e in given for t in e.read if (p := _filled(t, claims)) is not None]
    return Principal(
        given[0].name,
        NamespaceScope(tuple(dict.fromkeys(read))),
        mirror=any(e.mirror for e in given),
        ops=any(e.ops for e in given),
    )


def rule_claims(entries: Sequence[OidcIssuer], claims: Mapping[str, Any]) -> Claims:
    """What of `claims` the rules of `entries` read, as text, kept with a token issued for them
    so that it can be held to the rules of a later registry.yaml (`granted` then reads these
    as it read the ID token): for each glob a rule has for a claim, the claim's value when the
    glob matches it, or of a list (`groups`) the first item it matches, so that a rule kept as
    it was matches again and the record stays small (a code carries it); a claim a `{claim}`
    fills, when its value may fill one. Nothing else of the ID token, never its nonce."""
    globs: dict[str, list[str]] = {}
    for entry in entries:
        for claim, glob in entry.claims:
            globs.setdefault(claim, []).append(glob)
    fills = {n for e in entries for t in e.read for n in _PLACEHOLDER.findall(t)}
    kept: dict[str, str | tuple[str, ...]] = {}
    for claim in sorted((set(globs) | fills) - {"nonce"}):
        value, wanted = claims.get(claim), globs.get(claim, [])
        if isinstance(value, list):
            texts = [t for item in value[:1024] if (t := _text(item)) and len(t) <= _KEPT]
            witnesses = (next((t for t in texts if fnmatchcase(t, g)), None) for g in wanted)
            items = tuple(dict.fromkeys(t for t in witnesses if t is not None))
            if items:
                kept[claim] = items
            continue
        text = _text(value)
        if text is None or len(text) > _KEPT:
            continue
        fill = claim in fills and isinstance(value, str) and _NAMESPACE.fullmatch(value)
        if fill or any(fnmatchcase(text, g) for g in wanted):
            kept[claim] = text
    return tuple(kept.items())


def _text(value: Any) -> str | None:
    """A claim's value as a rule's glob reads it: `true` and `3` as their text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int)):
        return str(value)
    return None


def _filled(template: str, claims: Mapping[str, Any]) -> str | None:
    """`template` with each `{claim}` replaced by the claim's value; None (the pattern is
    dropped) when a value is missing or is no namespace: `group/sub` or `*` must not widen it."""
    missing = False

    def value(match: re.Match[str]) -> str:
        nonlocal missing
        found = claims.get(match[1])
        if isinstance(found, str) and _NAMESPACE.fullmatch(found):
            return found
        missing = True
        return ""

    filled = _PLACEHOLDER.sub(value, template)
    return None if missing else filled


def _matches(value: Any, glob: str) -> bool:
    """A claim against a glob of registry.yaml, where `true` and `3` stand for their text; a
    list (an OpenID provider's `groups`) matches when one of its items does."""
    if isinstance(value, (list, tuple)):  # a tuple: a list as an issued token's record keeps it
        return any(_matches(item, glob) for item in value[:1024] if not isinstance(item, list))
    text = _text(value)
    return text is not None and fnmatchcase(text, glob)


def _audiences(aud: Any) -> set[str]:
    if isinstance(aud, str):
        return {aud}
    if isinstance(aud, list):
        return {a for a in aud if isinstance(a, str)}
    return set()


def _unverified(segment: str) -> dict[str, Any] | None:
    """A JWT segment's JSON object, read before anything is verified: only to find who signed."""
    try:
        value = json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))
    except (binascii.Error, ValueError, RecursionError):  # RecursionError: [[[[...
        return None
    return value if isinstance(value, dict) else None


def _is_time(value: object) -> TypeGuard[float]:
    """Seconds since the epoch; never NaN, which JSON may carry and no comparison catches."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _utc(seconds: float) -> str:
    try:
        moment = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    except (OverflowError, OSError, ValueError):
        return f"{seconds:.0f} (seconds since 1970)"
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _shown(value: object) -> str:
    """A value from the token's header or claims, shortened for a message."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
