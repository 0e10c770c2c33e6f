"""Whether a module's own Git server accepts a client's token: the first request of an
authenticated `git ls-remote` over smart HTTP, its answers kept for a bounded time."""

from __future__ import annotations

import asyncio
import functools
import hashlib
import logging
import ssl
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from gitreg.auth.check_budget import CheckBudget
from gitreg.auth.host_logins import HostLogins, Login
from gitreg.catalog.auth_settings import GitCheck
from gitreg.errors import AuthUnavailable, TooManyRequests
from gitreg.git.credential import Credential
from gitreg.git.location import RepoLocation, redact

log = logging.getLogger(__name__)

ADVERTISEMENT = "application/x-git-upload-pack-advertisement"
MAX_ENTRIES = 10_000
_NO_ACCESS = frozenset((403, 404))  # credentials taken, but not for this repository
_LATER = frozenset((408, 429))  # with 5xx: the server cannot say now

_Key = tuple[str, str]  # (sha256 of the token, url or host): the token itself is never kept


def check_url(settings: GitCheck, repo: RepoLocation, git_url: str | None) -> str | None:
    """The URL whose Git server decides for a module: its repository or its `git_url`, as
    `settings.check` says; None when that is not https (a token is never sent in clear, nor
    over ssh, where it means nothing)."""
    url = repo.clone_url if settings.check == "repo" else git_url
    if url is None:
        _say_not_asked("", "the module has no git_url (auth.git.check is git_url)")
        return None
    if not url.lower().startswith("https://"):
        _say_not_asked(url, "it is not an https URL")
        return None
    return url.rstrip("/")


@functools.lru_cache(maxsize=1024)  # said once per URL, not once per request
def _say_not_asked(url: str, why: str) -> None:
    where = f" {redact(url)}" if url else ""
    log.warning("auth.git: never asking%s whether a token may read it: %s", where, why)


class GitAccess:
    """`await access(token, url, client)`: whether the Git server at `url` lets `token` read it.

    Asked as `git ls-remote` starts, with httpx rather than a git process: one GET of
    `URL/info/refs?service=git-upload-pack` with Basic `username:token`, whose status code and
    Content-Type say exactly what the server answered (a git process says "failed" for a wrong
    token and a server that is down alike), and no process per check. Yes and no are kept
    `settings.cache` seconds; a server that cannot answer raises AuthUnavailable, never kept.
    Concurrent checks of one token and URL share one request.

    A login costs the Git server's goodwill: a forge bans the address that fails too many. So
    a token is taken to a host once before any other repository of it is asked (a login); a
    host that rejects it as credentials (401) answers no for all its repositories, without a
    request, for the cache time; and each login is counted against the client address's
    `checks_per_minute` (TooManyRequests beyond). Once a host took the token (200, or 403/404
    for one repository), its other repositories are asked without counting. A host that
    refused `failed_logins_per_minute` tokens in the last minute (whoever sent them) gets no
    new login until that falls, and addresses it took no token from lately may use only half
    of them (HostLogins): AuthUnavailable, so that no flood of made-up tokens, from any number
    of addresses, gets gitreg's own address banned there or locks out the clients it knows."""

    def __init__(
        self,
        settings: GitCheck,
        credential_for: Callable[[str], Credential | None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        max_entries: int = MAX_ENTRIES,
    ) -> None:
        """`credential_for`: the catalog's credential for a URL, whose ca_file is trusted for
        that server when auth.git gives none of its own."""
        self.settings = settings
        self.credential_for = credential_for
        self.clock = clock
        self.max_entries = max_entries
        self.budget = CheckBudget(settings.checks_per_minute, clock)
        self._answers: OrderedDict[_Key, tuple[bool, float]] = OrderedDict()
        self._logins: OrderedDict[_Key, tuple[bool, float]] = OrderedDict()  # (token, host)
        self._flights: dict[_Key, asyncio.Task[bool]] = {}
        self._first_logins: dict[_Key, asyncio.Task[bool]] = {}
        self.hosts = HostLogins(settings.failed_logins_per_minute, clock)
        self._tls: dict[Path | None, ssl.SSLContext] = {}
        self._down: set[str] = set()  # URLs whose server failed last time: said once

    async def __call__(self, token: str, url: str, client: str = "") -> bool:
        if not url.lower().startswith("https://"):
            _say_not_asked(url, "it is not an https URL (a token is never sent in clear)")
            return False
        hashed = hashlib.sha256(token.encode()).hexdigest()
        key, login = (hashed, url), (hashed, _host(url))
        while True:
            taken = self._kept(self._logins, login)
            if taken:
                self.hosts.took(login[1], client)  # an address that holds a token the host takes
            answer = self._kept(self._answers, key)
            if answer is not None:
                return answer
            if taken is False:
                return False  # the host rejected this token: none of its repositories is asked
            flight = self._flights.get(key)
            if flight is not None:
                break
            first = self._first_logins.get(login)
            if taken is None and first is not None and not first.done():
                # Another repository of this host is asked first: its answer tells for this one.
                # (A login done is not waited for again: its answer said nothing of the host.)
                await asyncio.shield(first)
                continue
            started = None
            if taken is None:
                started = self.hosts.start(login[1], client)
                try:
                    self.budget.spend(client)
                except TooManyRequests:
                    self.hosts.ended(started, None)
                    raise
            flight = asyncio.ensure_future(self._check(token, key, login, started))
            self._flights[key] = flight
            flight.add_done_callback(functools.partial(self._landed, key))
            if taken is None:
                self._first_logins[login] = flight
                flight.add_done_callback(functools.partial(self._landed_login, login))
            break
        # A client that hangs up does not cancel the check the others wait for.
        answer = await asyncio.shield(flight)
        if self._kept(self._logins, login):
            self.hosts.took(login[1], client)
        return answer

    def _kept(self, table: OrderedDict[_Key, tuple[bool, float]], key: _Key) -> bool | None:
        known = table.get(key)
        if known is None:
            return None
        if self.clock() < known[1]:
            return known[0]
        del table[key]
        return None

    def _keep(self, table: OrderedDict[_Key, tuple[bool, float]], key: _Key, value: bool) -> None:
        table[key] = (value, self.clock() + self.settings.cache)
        table.move_to_end(key)
        while len(table) > self.max_entries:
            table.popitem(last=False)  # the oldest answer goes first

    async def _check(self, token: str, key: _Key, login: _Key, started: Login | None) -> bool:
        """Asked, and kept before anyone waiting is told (an unavailable server: nothing).
        `started`: a login at the host, counted while under way and when refused."""
        taken: bool | None = None
        try:
            answer, taken = await self._ask(token, key[1])
        finally:
            if started is not None:
                self.hosts.ended(started, taken)
        self._keep(self._answers, key, answer)
        if taken is not None:
            self._keep(self._logins, login, taken)
        return answer

    def _landed(self, key: _Key, flight: asyncio.Task[bool]) -> None:
        if self._flights.get(key) is flight:
            del self._flights[key]

    def _landed_login(self, login: _Key, flight: asyncio.Task[bool]) -> None:
        if self._first_logins.get(login) is flight:
            del self._first_logins[login]

    async def _ask(self, token: str, url: str) -> tuple[bool, bool | None]:
        """Whether `token` may read `url`, and whether its host took the token as credentials
        (None: its answer does not say)."""
        shown = redact(url)
        try:
            status, content_type = await self._get(token, url)
        except httpx.TooManyRedirects:
            log.warning("auth.git: %s redirects too often; taken as a no", shown)
            return False, None
        except (httpx.HTTPError, OSError) as exc:  # OSError: ssl.SSLError, an unreadable CA
            # httpx keeps the token in the request it raises with: not chained (`from None`).
            raise self._unavailable(url, _scrubbed(exc, token)) from None
        if status in _LATER or status >= 500:
            raise self._unavailable(url, f"it answered HTTP {status}")
        if url in self._down:
            self._down.discard(url)
            log.info("auth.git: %s answers again", shown)
        if status == 200 and content_type.split(";")[0].strip().lower() == ADVERTISEMENT:
            return True, True
        if status == 200:
            # A login page, a dumb-HTTP server, a proxy's notice: not the Git server's yes, and
            # the sign that it did not take the credentials.
            log.info("auth.git: %s answered 200 with %r, not Git refs: a no", shown, content_type)
            return False, False
        if status == 401:
            return False, False
        if status in _NO_ACCESS:
            return False, True
        log.info("auth.git: %s answered HTTP %s: a no", shown, status)
        return False, None

    async def _get(self, token: str, url: str) -> tuple[int, str]:
        async with (
            httpx.AsyncClient(
                verify=self._context(url),
                timeout=self.settings.timeout,
                follow_redirects=True,  # as git does (GitLab: /x to /x.git); httpx drops the
                max_redirects=5,  # credentials when a redirect leaves the origin or https
            ) as client,
            client.stream(
                "GET",
                f"{url}/info/refs",
                params={"service": "git-upload-pack"},
                auth=httpx.BasicAuth(self.settings.username, token),
                # Protocol v2: a few capabilities, not every ref of a large repository.
                headers={"Git-Protocol": "version=2", "User-Agent": "git/2 (gitreg)"},
            ) as response,
        ):
            return response.status_code, response.headers.get("content-type", "")

    def _context(self, url: str) -> ssl.SSLContext:
        """The server's certificate is checked against auth.git's ca_file, else the ca_file of
        the catalog's credential for `url`, else the system's store."""
        ca_file = self.settings.ca_file
        if ca_file is None and self.credential_for is not None:
            credential = self.credential_for(url)
            ca_file = credential.ca_file if credential else None
        context = self._tls.get(ca_file)
        if context is None:
            context = ssl.create_default_context(cafile=ca_file)
            self._tls[ca_file] = context
        return context

    def _unavailable(self, url: str, why: str) -> AuthUnavailable:
        """Said in the log once until the server answers again. The client is told no more
        than that: not the repository's URL, nor what failed on the way to it."""
        level = logging.DEBUG if url in self._down else logging.WARNING
        self._down.add(url)
        log.log(level, "auth.git: cannot ask %s whether a token may read it: %s", redact(url), why)
        return AuthUnavailable(
            "the Git server that decides who may read this cannot be asked now; try again later"
        )


def _host(url: str) -> str:
    """Where a login happens: the host and port of an https URL."""
    parts = urlsplit(url)
    return f"{(parts.hostname or '').lower()}:{parts.port or 443}"


def _scrubbed(exc: BaseException, token: str) -> str:
    text = str(exc) or type(exc).__name__
    return text.replace(token, "***") if token else text
