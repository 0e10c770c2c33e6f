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

import httpx

from gitreg.catalog.model import Credential, GitCheck
from gitreg.errors import AuthUnavailable
from gitreg.git.location import RepoLocation, redact

log = logging.getLogger(__name__)

ADVERTISEMENT = "application/x-git-upload-pack-advertisement"
MAX_ENTRIES = 10_000
_REFUSED = frozenset((401, 403, 404))  # the server's "no": this token may not read it
_LATER = frozenset((408, 429))  # with 5xx: the server cannot say now

_Key = tuple[str, str]  # (sha256 of the token, url): the token itself is never kept


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
    """`await access(token, url)`: whether the Git server at `url` lets `token` read it.

    Asked as `git ls-remote` starts, with httpx rather than a git process: one GET of
    `URL/info/refs?service=git-upload-pack` with Basic `username:token`, whose status code and
    Content-Type say exactly what the server answered (a git process says "failed" for a wrong
    token and a server that is down alike), and no process per check. Yes and no are kept
    `settings.cache` seconds; a server that cannot answer raises AuthUnavailable, never kept.
    Concurrent checks of one token and URL share one request."""

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
        self._answers: OrderedDict[_Key, tuple[bool, float]] = OrderedDict()
        self._flights: dict[_Key, asyncio.Task[bool]] = {}
        self._tls: dict[Path | None, ssl.SSLContext] = {}
        self._down: set[str] = set()  # URLs whose server failed last time: said once

    async def __call__(self, token: str, url: str) -> bool:
        if not url.lower().startswith("https://"):
            _say_not_asked(url, "it is not an https URL (a token is never sent in clear)")
            return False
        key = (hashlib.sha256(token.encode()).hexdigest(), url)
        known = self._answers.get(key)
        if known is not None:
            answer, until = known
            if self.clock() < until:
                return answer
            del self._answers[key]
        flight = self._flights.get(key)
        if flight is None:
            flight = asyncio.ensure_future(self._ask(token, url))
            self._flights[key] = flight
            flight.add_done_callback(functools.partial(self._landed, key))
        # A client that hangs up does not cancel the check the others wait for.
        return await asyncio.shield(flight)

    def _landed(self, key: _Key, flight: asyncio.Task[bool]) -> None:
        if self._flights.get(key) is flight:
            del self._flights[key]
        if flight.cancelled() or flight.exception() is not None:
            return  # an unavailable server is asked again next time: nothing is kept
        self._answers[key] = (flight.result(), self.clock() + self.settings.cache)
        self._answers.move_to_end(key)
        while len(self._answers) > self.max_entries:
            self._answers.popitem(last=False)  # the oldest answer goes first

    async def _ask(self, token: str, url: str) -> bool:
        shown = redact(url)
        try:
            status, content_type = await self._get(token, url)
        except httpx.TooManyRedirects:
            log.warning("auth.git: %s redirects too often; taken as a no", shown)
            return False
        except (httpx.HTTPError, OSError) as exc:  # OSError: ssl.SSLError, an unreadable CA
            # httpx keeps the token in the request it raises with: not chained (`from None`).
            raise self._unavailable(url, _scrubbed(exc, token)) from None
        if status in _LATER or status >= 500:
            raise self._unavailable(url, f"it answered HTTP {status}")
        if url in self._down:
            self._down.discard(url)
            log.info("auth.git: %s answers again", shown)
        if status == 200 and content_type.split(";")[0].strip().lower() == ADVERTISEMENT:
            return True
        if status == 200:
            # A login page, a dumb-HTTP server, a proxy's notice: not the Git server's yes.
            log.info("auth.git: %s answered 200 with %r, not Git refs: a no", shown, content_type)
        elif status not in _REFUSED:
            log.info("auth.git: %s answered HTTP %s: a no", shown, status)
        return False

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


def _scrubbed(exc: BaseException, token: str) -> str:
    text = str(exc) or type(exc).__name__
    return text.replace(token, "***") if token else text
