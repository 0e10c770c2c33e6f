"""People sign in with the company's OpenID provider (auth.login), for `terraform login`
(login.v1) and for the pages. gitreg is the authorization server Terraform talks to and the
provider's client: a sign-in starts at `start` (Terraform's request checked: its client id, a
redirect_uri on localhost within the ports, PKCE S256), which sends the person to the provider
with gitreg's own state, nonce and PKCE, kept sealed in a cookie; it ends at `finish`, where
the provider's code becomes an ID token, verified as `auth.oidc` verifies a CI token (one
verification path), and its claims become namespaces. Terraform then gets a one-time code (60 s,
bound to its PKCE challenge and redirect_uri) that `exchange` turns into a token of gitreg's own.
Every refusal is a LoginRefused saying which check failed; none holds a code, token or secret."""

from __future__ import annotations

import hmac
import re
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

from authlib.oauth2.rfc7636 import create_s256_code_challenge

from gitreg.auth.check_budget import CheckBudget
from gitreg.auth.issued import Identity, IssuedPrincipals
from gitreg.auth.login_provider import OpenIdProvider
from gitreg.auth.oidc import OidcVerifier, rule_claims
from gitreg.auth.principal import Principal, Refused
from gitreg.auth.sealed import Sealer
from gitreg.auth.wrong_tokens import WrongTokens
from gitreg.catalog.auth_settings import LoginSettings, OidcIssuer
from gitreg.catalog.namespace_scope import NamespaceScope
from gitreg.errors import LoginRefused
from gitreg.state.issued_tokens import claims_from_json
from gitreg.terraform_services import LOGIN_CLIENT_ID, LOGIN_PORTS

CALLBACK = "/oauth/callback"
COOKIE = "gitreg_login"  # the sign-in under way, sealed
PENDING_TTL = 600  # seconds a person has to sign in at the provider
CODE_TTL = 60  # seconds Terraform has to exchange its code
SIGN_INS_PER_MINUTE = 20  # sign-ins one client address may start
_CHALLENGE = re.compile(r"[A-Za-z0-9_-]{43}")  # base64url of a SHA-256, unpadded
_VERIFIER = re.compile(r"[A-Za-z0-9._~-]{43,128}")  # RFC 7636 4.1
_STATE = re.compile(r"[!-~]{1,512}")
_URI = re.compile(r"[!-~]{1,2048}")  # printable ASCII: no space, tab, CR, LF or other control
_NAME = re.compile(r"[!-~]{1,128}")  # a person's name as logs and `gitreg token list` show it
_SUBJECT = re.compile(r"[!-~]{1,255}")  # OpenID Connect Core 2: at most 255 ASCII characters


@dataclass(frozen=True)
class CliRequest:
    """What Terraform asked at the authorization endpoint, to be answered at its redirect_uri."""

    redirect_uri: str
    state: str
    challenge: str

    @classmethod
    def parse(cls, query: Mapping[str, str]) -> CliRequest:
        if query.get("client_id") != LOGIN_CLIENT_ID:
            raise LoginRefused(f"client_id must be {LOGIN_CLIENT_ID!r}", "invalid_client")
        redirect_uri = query.get("redirect_uri", "")
        if problem := redirect_problem(redirect_uri):
            raise LoginRefused(problem)
        if query.get("response_type") != "code":
            raise LoginRefused("response_type must be code", "unsupported_response_type")
        if query.get("code_challenge_method") != "S256":
            raise LoginRefused("PKCE is required: code_challenge_method must be S256")
        challenge = query.get("code_challenge", "")
        if not _CHALLENGE.fullmatch(challenge):
            raise LoginRefused("code_challenge must be the base64url SHA-256 of a verifier")
        state = query.get("state", "")
        if not _STATE.fullmatch(state):
            raise LoginRefused("state is required (printable, at most 512 characters)")
        return cls(redirect_uri, state, challenge)


def redirect_problem(uri: str) -> str | None:
    """Why `uri` is no Terraform listener's: only http://localhost:PORT/login or
    http://127.0.0.1:PORT/login within LOGIN_PORTS (anything else would hand a code elsewhere)."""
    try:
        parts = urlsplit(uri)
        port = parts.port
    except ValueError:
        parts, port = None, None
    low, high = LOGIN_PORTS
    if (
        not _URI.fullmatch(uri)  # urlsplit strips or drops what it is not: the code goes to uri
        or parts is None
        or parts.scheme != "http"
        or parts.hostname not in ("localhost", "127.0.0.1")
        or parts.username is not None
        or port is None
        or not low <= port <= high
        or parts.path != "/login"
        or parts.query
        or parts.fragment
        or "#" in uri
    ):
        return (
            f"redirect_uri must be http://localhost:PORT/login (or 127.0.0.1) with PORT from"
            f" {low} to {high}, without spaces or control characters"
        )
    return None


@dataclass(frozen=True)
class SignedIn:
    """A sign-in that ended well: who (as gitreg names them, and as the provider does), and
    where they go now (Terraform's listener, or the page they came from)."""

    principal: Principal
    cli: CliRequest | None
    back_to: str
    identity: Identity


class Login:
    def __init__(
        self,
        settings: LoginSettings,
        callback: str,
        keys: Sequence[bytes],
        issued: IssuedPrincipals,
        clock: Callable[[], float] = time.time,
        taken: frozenset[str] = frozenset(),
    ) -> None:
        """`callback`: this registry's own callback URL, which the provider sends people back
        to; `keys`: the URL-signing keys (sealing keys derive from them); `taken`: the names
        registry.yaml gives its client tokens and issuers, which no person may sign in as,
        whatever the case of either."""
        self.settings = settings
        self.taken = frozenset(name.casefold() for name in taken)
        self.callback = callback
        self.issued = issued
        self.clock = clock
        self.provider = OpenIdProvider(settings)
        # The first entry has no claims: every verified ID token matches it, and it opens
        # nothing. A person outside every rule gets a token that reads nothing (a 403 then).
        base = OidcIssuer(
            settings.name, settings.issuer, settings.client_id, ca_file=settings.ca_file
        )
        self.verifier = OidcVerifier((base, *settings.grants), clock)
        self._pending = Sealer(keys, b"gitreg sign-in under way")
        self._codes = Sealer(keys, b"gitreg authorization code")
        self.budget = CheckBudget(
            SIGN_INS_PER_MINUTE,
            what=f"sign-ins started in the last minute, the most allowed ({SIGN_INS_PER_MINUTE})",
        )
        self.wrong_codes = WrongTokens()  # codes that fail, slowed per address as wrong tokens

    async def start(self, client: str, cli: CliRequest | None, back_to: str) -> tuple[str, str]:
        """Where to send the person (the provider's authorization URL), and the cookie value
        that holds this sign-in until they come back."""
        self.budget.spend(client)
        endpoints = await self.provider.endpoints()
        state, nonce, verifier = (secrets.token_urlsafe(32) for _ in range(3))
        pending = {
            "s": state,
            "n": nonce,
            "v": verifier,
            "e": int(self.clock()) + PENDING_TTL,
            "c": [cli.redirect_uri, cli.state, cli.challenge] if cli else None,
            "b": back_to,
        }
        url = self.provider.authorization_url(
            endpoints, self.callback, state, nonce, create_s256_code_challenge(verifier)
        )
        return url, self._pending.seal(pending)

    async def finish(self, cookie: str | None, query: Mapping[str, str]) -> SignedIn:
        """The person back from the provider: their principal, once the state matches the
        sign-in this browser started, the code is exchanged and the ID token verified."""
        pending = self._pending.open(cookie or "")
        if pending is None:
            raise LoginRefused(
                "this browser has no sign-in under way (its cookie is missing, or from another"
                " registry): start again"
            )
        if not isinstance(pending.get("e"), int) or pending["e"] < self.clock():
            raise LoginRefused("the sign-in took over 10 minutes: start again")
        # The state before an error: a link anyone can make to the callback must not end a
        # sign-in under way. A refusal here ends nothing (the cookie stays): the person's own
        # callback, with the state, still finishes it.
        state = query.get("state")
        error = query.get("error")
        said = f"the OpenID provider {self.settings.name} said {_error_code(error)}"
        if error is not None and state is None:  # RFC 6749 wants the state; some send none
            raise LoginRefused(
                f"{said}, naming no sign-in: if you cancelled at the provider, start again;"
                " if not, this link is not the provider's, and a sign-in under way goes on"
            )
        if not hmac.compare_digest((state or "").encode(), str(pending.get("s", "")).encode()):
            raise LoginRefused(
                "the state sent back is not this sign-in's, which goes on: finish it at the"
                " provider, or start again"
            )
        if error is not None:
            raise LoginRefused(said)
        code = query.get("code", "")
        if not code or len(code) > 2048:
            raise LoginRefused("the OpenID provider sent no code back")
        id_token = await self.provider.id_token(code, str(pending["v"]), self.callback)
        principal, claims = await self.verified(id_token, str(pending["n"]))
        cli = pending.get("c")
        request = CliRequest(*cli) if isinstance(cli, list) and len(cli) == 3 else None
        person, subject = _named(principal, claims, self.settings.name_claim)
        if person.name.casefold() in self.taken:
            raise LoginRefused(
                f"{person.name!r} is the name of a client token or issuer in registry.yaml"
                " (case aside): rename that entry to sign in as this person"
            )
        identity = Identity(
            subject, self.settings.issuer, rule_claims(self.settings.grants, claims)
        )
        return SignedIn(person, request, str(pending.get("b") or "/"), identity)

    def ended(self, cookie: str | None, query: Mapping[str, str]) -> CliRequest | None:
        """The Terraform request whose sign-in this callback ends (its state is the pending
        one's), which a refusal must answer too; None for a sign-in for the pages, or for a
        callback that ends nothing."""
        pending = self._pending.open(cookie or "")
        state = query.get("state")
        if pending is None or state is None:
            return None
        if not hmac.compare_digest(state.encode(), str(pending.get("s", "")).encode()):
            return None
        cli = pending.get("c")
        return CliRequest(*cli) if isinstance(cli, list) and len(cli) == 3 else None

    def refusal_redirect(self, cli: CliRequest, reason: str) -> str:
        """Terraform's listener, with a one-time code that carries only `reason`: Terraform and
        OpenTofu ignore a callback with an error and no code (they wait on, for ever), but a code
        whose exchange is refused ends `login` at once, the reason printed."""
        code = self._codes.seal(
            {
                "i": secrets.token_urlsafe(16),
                "x": _description(reason),
                "u": cli.redirect_uri,
                "h": cli.challenge,
                "e": int(self.clock()) + CODE_TTL,
            }
        )
        return cli.redirect_uri + "?" + urlencode({"code": code, "state": cli.state})

    def code_redirect(self, signed: SignedIn) -> str:
        """Terraform's listener, with a one-time code for what `signed` opens and its state."""
        assert signed.cli is not None
        principal, identity = signed.principal, signed.identity
        code = self._codes.seal(
            {
                "i": secrets.token_urlsafe(16),
                "p": principal.name,
                "r": list(principal.read.patterns),
                "m": principal.mirror,
                "o": principal.ops,
                "w": [identity.subject, identity.issuer],
                "k": {c: v if isinstance(v, str) else list(v) for c, v in identity.claims},
                "u": signed.cli.redirect_uri,
                "h": signed.cli.challenge,
                "e": int(self.clock()) + CODE_TTL,
            }
        )
        return signed.cli.redirect_uri + "?" + urlencode({"code": code, "state": signed.cli.state})

    async def exchange(self, form: Mapping[str, str], client: str) -> tuple[str, int]:
        """Terraform's code exchanged for a token of gitreg's own, issued for token_ttl: the
        token and its lifetime in seconds. Codes that fail are slowed per `client` address."""
        self.wrong_codes.admit(client)
        try:
            return await self._exchange(form)
        except LoginRefused:
            await self.wrong_codes.wrong(client)
            raise

    async def _exchange(self, form: Mapping[str, str]) -> tuple[str, int]:
        if form.get("grant_type") != "authorization_code":
            raise LoginRefused("grant_type must be authorization_code", "unsupported_grant_type")
        if form.get("client_id") != LOGIN_CLIENT_ID:
            raise LoginRefused(f"client_id must be {LOGIN_CLIENT_ID!r}", "invalid_client")
        code = self._codes.open(form.get("code", ""))
        if code is None:
            raise LoginRefused("the code is not one this registry gave", "invalid_grant")
        expires = code.get("e")
        if not isinstance(expires, int) or expires < self.clock():
            raise LoginRefused("the code expired (it lives 60 seconds)", "invalid_grant")
        if form.get("redirect_uri") != code.get("u"):
            raise LoginRefused("redirect_uri is not the one the code was given to", "invalid_grant")
        verifier = form.get("code_verifier", "")
        expected = str(code.get("h", "")).encode()
        if not _VERIFIER.fullmatch(verifier) or not hmac.compare_digest(
            create_s256_code_challenge(verifier).encode(), expected
        ):
            raise LoginRefused(
                "the code_verifier does not match the code_challenge", "invalid_grant"
            )
        if isinstance(code.get("x"), str):  # a sign-in that was refused: said, nothing issued
            raise LoginRefused(f"the sign-in was refused: {code['x']}", "access_denied")
        if not await self.issued.spend(str(code.get("i")), expires):
            raise LoginRefused("the code was already used: sign in again", "invalid_grant")
        principal = Principal(
            str(code.get("p")),
            NamespaceScope(tuple(str(r) for r in code.get("r") or ())),
            mirror=code.get("m") is True,
            ops=code.get("o") is True,
        )
        who = code.get("w")
        subject, issuer = map(str, who) if isinstance(who, list) and len(who) == 2 else ("", "")
        identity = Identity(subject, issuer, claims_from_json(code.get("k")) or ())
        ttl = self.settings.token_ttl
        token, record = await self.issued.issue(principal, identity, ttl, "terraform")
        return token, record.expires - record.issued

    async def verified(self, id_token: str, nonce: str) -> tuple[Principal, dict[str, object]]:
        try:
            verified = await self.verifier.verify(id_token)
        except Refused as exc:
            raise LoginRefused(f"the ID token was refused: {exc}") from None
        if verified is None:
            raise LoginRefused(f"the ID token is not from {self.settings.issuer}")
        principal, claims = verified
        sent = claims.get("nonce")
        if not isinstance(sent, str) or not hmac.compare_digest(sent.encode(), nonce.encode()):
            raise LoginRefused("the ID token's nonce is not this sign-in's")
        return principal, claims

    def close(self) -> None:
        self.verifier.close()


def _description(reason: str) -> str:
    """`reason` as RFC 6749 allows an error_description: printable ASCII without `"` or `\\`."""
    kept = reason.replace('"', "'").replace("\\", "/")
    return "".join(c if " " <= c <= "~" else "?" for c in kept)[:500]


def _error_code(error: str | None) -> str:
    """An OAuth error code as a page may show it (RFC 6749's are lower case and underscores)."""
    return error if error is not None and re.fullmatch(r"[a-z_]{1,64}", error) else "?"


def _named(
    principal: Principal, claims: Mapping[str, object], name_claim: str | None
) -> tuple[Principal, str]:
    """`principal`, named for the person, and their subject: named by `name_claim` (by default
    `email`), else by the subject. An email names no one unless the provider verified it, as
    someone else could give another person's address to an account of their own."""
    subject = claims.get("sub")
    if not isinstance(subject, str) or not _SUBJECT.fullmatch(subject):
        raise LoginRefused("the ID token names no one (no usable sub)")
    claim = name_claim or "email"
    value = claims.get(claim)
    if claim == "email" and not verified_email(claims):
        value = None
    if not (isinstance(value, str) and _NAME.fullmatch(value)):
        value = subject
        if not _NAME.fullmatch(value):
            raise LoginRefused(f"the ID token names no one (no usable {claim}; sub too long)")
    return Principal(value, principal.read, principal.mirror, principal.ops), subject


def verified_email(claims: Mapping[str, object]) -> bool:
    """Whether the provider says it verified the email: `email_verified` true, or the text
    "true", which some providers send in its place (their word, signed as the rest)."""
    verified = claims.get("email_verified")
    return verified is True or verified == "true"
