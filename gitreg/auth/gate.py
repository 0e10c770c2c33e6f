"""The one decision every protected request goes through: who sends it, and what that opens.

The sender is named by a client token from registry.yaml, a CI identity token, or a token only
the module's Git server knows. Counted per principal and outcome for /v1/status and /metrics."""

from __future__ import annotations

import contextlib
import logging
import re
import secrets
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from gitreg.auth.authorization import bearer_token
from gitreg.auth.browser_sessions import BrowserSessions
from gitreg.auth.git_access import GitAccess, check_url
from gitreg.auth.git_opened import GitAsk, Opens, opened_by_git
from gitreg.auth.issued import IssuedPrincipals
from gitreg.auth.login import CALLBACK, Login
from gitreg.auth.oidc import OidcVerifier
from gitreg.auth.principal import ANONYMOUS, GIT, Principal, Refused, Verifier
from gitreg.auth.review import short_tokens
from gitreg.auth.sessions import EndedHere, SessionSigner
from gitreg.auth.signed_downloads import SignedDownloads
from gitreg.auth.signed_urls import UrlSigner, generated_key
from gitreg.auth.stand_ins import StandIns
from gitreg.auth.target import GitQuestion as GitQuestion
from gitreg.auth.target import Target as Target
from gitreg.auth.target import refusal
from gitreg.auth.tokens import StaticTokens
from gitreg.auth.wrong_tokens import WrongTokens
from gitreg.catalog.auth_settings import AuthSettings
from gitreg.catalog.model import Catalog
from gitreg.catalog.namespace_scope import NamespaceScope
from gitreg.catalog.specs import ModuleSpec, ProviderSpec
from gitreg.errors import AuthUnavailable, Forbidden, TooManyRequests, Unauthorized
from gitreg.git.credential import Credential
from gitreg.git.location import RepoLocation
from gitreg.state.ended_sessions import EndedSessionFiles, EndedSessions
from gitreg.state.issued_tokens import IssuedTokenFiles, IssuedTokens

log = logging.getLogger(__name__)


MAX_GIT_TOKEN = 1024  # characters: a longer token is no forge's, and is not matched at all
# Reasons of a 401 that are no wrong token: none was sent, or a browser's session ended.
_NOT_GUESSES = frozenset(("missing", "session_expired"))


class Gate(BrowserSessions, SignedDownloads):
    """The gate of a catalog with an auth: section (`auth/gatekeeper.py`: what web/ asks it)."""

    on = True  # a namespace, the mirror and the ops pages open only as auth: says

    def __init__(
        self,
        settings: AuthSettings,
        signer: UrlSigner,
        counts: Counter[tuple[str, str]],
        verifiers: Sequence[Verifier] = (),
        git: GitAsk | None = None,
        sessions: SessionSigner | None = None,
        ended: EndedSessions | None = None,
        wrong_tokens: WrongTokens | None = None,
        login: Login | None = None,
    ) -> None:
        """`sessions`: signs browser sessions (by default with a key made now, which a restart
        forgets: Gate.build derives it from the URL-signing keys); `ended`: where sign-outs are
        recorded (by default in this process alone: Gate.build is given the shared state's).
        `wrong_tokens`: how wrong tokens are slowed per client address. `login`: auth.login's
        sign-ins, and the tokens they issued, which open what they were issued for."""
        self.settings = settings
        self.public = NamespaceScope(settings.public)
        self.tokens = StaticTokens(settings.tokens)
        self.signer = signer
        self.counts = counts
        self.verifiers = tuple(verifiers)
        self.git = git
        self.git_tokens = re.compile(settings.git.token_pattern) if settings.git else None
        self.sessions = sessions or SessionSigner([secrets.token_bytes(32)])
        self.ended = ended or EndedHere()
        self.wrong_tokens = wrong_tokens or WrongTokens()
        self.login = login
        self.issued: IssuedPrincipals | None = login.issued if login else None
        self._stand_ins: tuple[Catalog, StandIns] | None = None  # of the catalog asked last

    @classmethod
    def build(
        cls,
        settings: AuthSettings,
        cache_dir: Path,
        counts: Counter[tuple[str, str]],
        verifiers: Sequence[Verifier] = (),
        git: GitAsk | None = None,
        credential_for: Callable[[str], Credential | None] | None = None,
        ended: EndedSessions | None = None,
        issued: IssuedTokens | None = None,
        origin: str = "https://localhost",
    ) -> Gate:
        """With auth.git, the module's Git server is asked (`git`, else a GitAccess that
        trusts the CA of `credential_for(url)`, the catalog's credential for that server).
        `ended`: where sign-outs are recorded, `issued`: where auth.login's tokens are kept
        (the shared state; by default in cache_dir); `origin`: the registry's own web origin,
        where the OpenID provider sends people back."""
        for warning in short_tokens(settings):
            log.warning("%s", warning.removeprefix("warning: "))
        if git is None and settings.git is not None:
            git = GitAccess(settings.git, credential_for)
        keys = [v.encode() for ref in settings.url_keys if (v := ref.value())]
        if not keys:
            keys = [generated_key(cache_dir)]
        signer = UrlSigner(keys, settings.download_ttl)
        if settings.oidc:
            ca_keys = [f"auth.oidc[{i}].ca_file" for i in range(len(settings.oidc))]
            verifiers = (*verifiers, OidcVerifier(settings.oidc, ca_keys=ca_keys))
        ended = ended or EndedSessionFiles(cache_dir)
        login = None
        if settings.login is not None:
            book = IssuedPrincipals(issued or IssuedTokenFiles(cache_dir), settings.login)
            taken = {t.name for t in settings.tokens} | {o.name for o in settings.oidc}
            taken |= {GIT.name, "anonymous", "unknown"}
            login = Login(settings.login, origin + CALLBACK, keys, book, taken=frozenset(taken))
        sessions = SessionSigner(keys)
        return cls(settings, signer, counts, verifiers, git, sessions, ended, None, login)

    def is_public(self, namespace: str) -> bool:
        return self.public.covers(namespace)

    def readable(self, reader: Principal | None) -> Callable[[str], bool]:
        """Whether `reader` may read a namespace: a public one, or one its token reads."""
        if reader is None:
            return self.is_public
        return lambda namespace: self.is_public(namespace) or reader.may("read", namespace)

    async def admit(
        self,
        authorization: str | None,
        target: Target,
        session: str | None = None,
        client: str = "",
    ) -> Principal:
        """The principal `target` is opened to; Unauthorized, Forbidden, AuthUnavailable or
        TooManyRequests, each saying why, otherwise. `session`: a browser's session cookie,
        used when the request carries no Authorization header. `client`: the sender's address,
        whose wrong tokens are slowed and whose logins at Git servers are counted."""
        if self._public(target):
            self.counts[(ANONYMOUS.name, "public")] += 1
            return ANONYMOUS
        if authorization is not None:
            # The common yes, without the machinery of every other answer below (a large part
            # of the cost of a request answered from what was kept): a token of registry.yaml's
            # that opens the target. What it does is what the way below does for it, and what
            # `admitted_now` does for several targets (written out, since calling it costs
            # more: bench/RESULTS.md, bench.hot_routes).
            self._throttle(client)
            known = self._client_token(authorization)
            if known is not None and known.may(target.access, target.namespace):
                self.counts[(known.name, "allowed")] += 1
                return known
        async with self._wrong_tokens_slowed(client, authorization):
            with self._failures_counted():
                if authorization is None and session is not None:
                    principal, token = await self._session(session), ""
                else:
                    principal, token = await self._identify(authorization)
                if principal.may(target.access, target.namespace):
                    self.counts[(principal.name, "allowed")] += 1
                    return principal
                if (
                    principal.git
                    and target.access == "read"
                    and await self._git_allows(token, target, client)
                ):
                    self.counts[(principal.name, "allowed")] += 1
                    return principal
            self.counts[(principal.name, "refused")] += 1
            if principal.git:  # a token no Git server here took: a wrong token
                await self.wrong_tokens.wrong(client)
            raise Forbidden(refusal(principal, target))

    async def admit_all(
        self,
        authorization: str | None,
        targets: Sequence[Target],
        session: str | None = None,
        client: str = "",
    ) -> Principal | None:
        """`admit` to each of `targets`: the principal the first admits as. A token of
        registry.yaml's that opens all of them (none public) is looked at once, not once each."""
        if authorization is not None:
            known = self.admitted_now(authorization, targets, client)
            if known is not None:
                return known
        principal: Principal | None = None
        for target in targets:
            admitted = await self.admit(authorization, target, session, client)
            principal = principal or admitted
        return principal

    def admitted_now(
        self, authorization: str, targets: Sequence[Target], client: str
    ) -> Principal | None:
        """`admit_all`'s common yes, without a coroutine (what `admit`'s does, for them all)."""
        if not targets:
            return None
        for target in targets:  # plain loops: a generator would cost more than the checks
            if self._public(target):
                return None
        self._throttle(client)
        known = self._client_token(authorization)
        if known is None:
            return None
        for target in targets:
            if not known.may(target.access, target.namespace):
                return None
        self.counts[(known.name, "allowed")] += len(targets)
        return known

    def _public(self, target: Target) -> bool:
        """Whether anyone may have `target` (a read of a public namespace)."""
        return bool(
            target.access == "read" and target.namespace and self.public.covers(target.namespace)
        )

    async def admit_download(
        self,
        path: str,
        query: Mapping[str, str],
        authorization: str | None,
        target: Target,
        session: str | None = None,
        client: str = "",
    ) -> str | None:
        """Who a file an answer pointed at (`path`) is opened to; None when it is public. Its
        signed URL, which clients fetch without a token, or a token that opens it."""
        if target.access == "read" and target.namespace and self.is_public(target.namespace):
            return None
        if "signature" in query or authorization is None:
            return self.signed_url_principal(path, dict(query), target.access, target.namespace)
        return (await self.admit(authorization, target, session, client)).name

    async def reader(
        self, authorization: str | None, session: str | None = None, client: str = ""
    ) -> Principal | None:
        """Who asks, for what a list shows them: None without a token or a live session (an
        ended one reads as none: the list shows the public namespaces, the page offers to sign
        in). A token sent but not accepted is Unauthorized: never quietly read as none."""
        if authorization is None:
            return await self.session_principal(session) if session is not None else None
        principal, _ = await self.identify(authorization, client)
        return principal

    async def git_opened(
        self,
        reader: Principal | None,
        authorization: str | None,
        client: str,
        specs: Iterable[ModuleSpec | ProviderSpec],
    ) -> Opens | None:
        """With auth.git, which of `specs` (what a list leaves out for `reader`) the token opens
        at their Git servers; None when none decides for `reader` (`specs` is then not read)."""
        if reader is None or not reader.git:
            return None
        if self.git is None or authorization is None:
            return lambda spec: False
        token = bearer_token(authorization)
        return await opened_by_git(self.git, token, client, specs, self.git_url, reader.name)

    async def identify(self, authorization: str, client: str = "") -> tuple[Principal, str]:
        """Who sends `authorization`, and its token, for what a list shows them; Unauthorized
        (counted and slowed as for `admit`) when it is no token this registry, an issuer or
        auth.git accepts, AuthUnavailable when that cannot be told now."""
        async with self._wrong_tokens_slowed(client, authorization):
            with self._failures_counted():
                return await self._identify(authorization)

    @contextlib.asynccontextmanager
    async def _wrong_tokens_slowed(
        self, client: str, authorization: str | None
    ) -> AsyncIterator[None]:
        """A token from an address holding too many wrong ones is refused before it is looked
        at; a wrong one (a 401 for a token sent) is answered after the delay its address is
        due. A right token passes at once."""
        if authorization is not None:
            self._throttle(client)
        try:
            yield
        except Refused as exc:
            if exc.reason not in _NOT_GUESSES:
                await self.wrong_tokens.wrong(client)
            raise

    @contextlib.contextmanager
    def _failures_counted(self) -> Iterator[None]:
        """Count a refusal (by the name and reason it carries) or an unavailable verdict."""
        try:
            yield
        except Refused as exc:
            self.counts[(exc.name, exc.reason)] += 1
            raise
        except Unauthorized:
            self.counts[("unknown", "invalid_token")] += 1
            raise
        except AuthUnavailable:
            self.counts[("unknown", "unavailable")] += 1
            raise
        except TooManyRequests:  # over auth.git.checks_per_minute
            self.counts[("git", "too_many_checks")] += 1
            raise

    def _client_token(self, authorization: str) -> Principal | None:
        """The principal of a client token of registry.yaml's that `authorization` carries;
        None for anything else (`_identify` then says what)."""
        return self.tokens.principal_sent(authorization)

    async def _identify(self, authorization: str | None) -> tuple[Principal, str]:
        token = bearer_token(authorization)
        found = self.tokens.principal(token)
        if found is None and self.issued is not None:
            found = await self.issued.principal(token)
        if found is not None:
            return found, token
        for verifier in self.verifiers:
            found = await verifier.identify(token)
            if found is not None:
                return found, token
        if self._may_be_git(token):
            return GIT, token
        raise Refused("unknown", "unknown_token", "the token is not one this registry knows")

    def _may_be_git(self, token: str) -> bool:
        """Whether a Git server may have issued `token` (auth.git.token_pattern): only such a
        token is ever taken to one."""
        return (
            self.git_tokens is not None
            and len(token) <= MAX_GIT_TOKEN
            and self.git_tokens.fullmatch(token) is not None
        )

    async def _git_allows(self, token: str, target: Target, client: str) -> bool:
        question = target.git() if target.git and self.git else None
        if question is None or self.git is None:
            return False
        return await self.git(token, question.url, client) and question.opens

    def git_url(self, repo: RepoLocation, git_url: str | None) -> str | None:
        """The URL a module's Git server is asked at, with auth.git (None: never asked)."""
        return check_url(self.settings.git, repo, git_url) if self.settings.git else None

    def stand_in(self, catalog: Catalog, namespace: str) -> GitQuestion | None:
        """With auth.git, what is asked for a module or provider `namespace` does not hold in
        `catalog` (`auth/stand_ins.py`), worked out once per catalog."""
        if self.settings.git is None:
            return None
        if self._stand_ins is None or self._stand_ins[0] is not catalog:
            self._stand_ins = (catalog, StandIns.of(catalog, self.settings.git))
        return self._stand_ins[1].question(namespace)

    def close(self) -> None:
        for verifier in self.verifiers:
            verifier.close()
        if self.login is not None:
            self.login.close()
