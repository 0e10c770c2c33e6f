"""auth.git for a list: which of the repositories a list would show a token opens, asked of
their Git servers (each URL once, a few at a time, answers kept by auth.git's cache). A list
never waits long for them, and never shows what a token may not read."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable

from gitreg.catalog.specs import ModuleSpec, ProviderSpec
from gitreg.errors import AuthUnavailable, TooManyRequests
from gitreg.git.location import RepoLocation

log = logging.getLogger(__name__)

GIT_CHECKS = 8  # Git servers asked at once for one list
GIT_WAIT = 10.0  # seconds a list waits for them; what is not known by then is left out

# Asks the module's Git server whether `token` may read the repository at `url`, for a client
# at an address (whose logins at Git servers are counted).
GitAsk = Callable[[str, str, str], Awaitable[bool]]
Opens = Callable[[ModuleSpec | ProviderSpec], bool]
# The URL a repository's Git server is asked at (given the module's git_url); None: never asked.
GitUrl = Callable[[RepoLocation, str | None], str | None]


async def opened_by_git(
    ask: GitAsk,
    token: str,
    client: str,
    specs: Iterable[ModuleSpec | ProviderSpec],
    git_url: GitUrl,
    who: str,
) -> Opens:
    """Which of `specs` `token` opens, for `who`'s list. A server that cannot answer now, or
    does not answer in time, is a no for this list, said in the log rather than failing the
    whole list. A client over auth.git.checks_per_minute gets a 429 instead: its list could not
    be told whole."""
    urls: dict[ModuleSpec | ProviderSpec, str] = {}
    for spec in specs:
        if isinstance(spec, ModuleSpec):
            url = git_url(spec.repo, spec.git_url)
        else:
            url = git_url(spec.repo, None) if spec.repo else None
        if url is not None:
            urls[spec] = url
    turns = asyncio.Semaphore(GIT_CHECKS)
    over: list[TooManyRequests] = []

    async def check(url: str) -> bool:
        async with turns:
            try:
                return await ask(token, url, client)
            except AuthUnavailable:
                return False
            except TooManyRequests as exc:
                over.append(exc)
                return False

    tasks = {url: asyncio.ensure_future(check(url)) for url in sorted(set(urls.values()))}
    try:
        if tasks:
            _, pending = await asyncio.wait(tasks.values(), timeout=GIT_WAIT)
            if pending:
                log.info(
                    "auth.git: %d of %d repositories not checked in time for %s's list; left out",
                    len(pending),
                    len(tasks),
                    who,
                )
    finally:
        for task in tasks.values():
            task.cancel()  # a check under way goes on in auth.git's cache: the next list has it
    if over:
        raise over[0]
    yes = {url for url, task in tasks.items() if _said_yes(task)}
    return lambda spec: urls.get(spec) in yes


def _said_yes(task: asyncio.Future[bool]) -> bool:
    if not task.done() or task.cancelled():
        return False
    if task.exception() is not None:
        # The type alone: what an unforeseen error says might carry the token.
        log.warning("auth.git: a check for a list failed: %s", type(task.exception()).__name__)
        return False
    return task.result()
