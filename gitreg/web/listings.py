"""What a request may see listed: the directory (`gitreg/directory/`), filtered for who asks.
Lists are never refused: without a token they show the public namespaces (every one without
auth:), with one what it reads; a bad token is a 401, as everywhere."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Iterable
from typing import Protocol

from starlette.requests import Request

from gitreg.auth.gate import Gate, bearer_token
from gitreg.auth.principal import Principal
from gitreg.catalog.model import ModuleSpec, ProviderSpec
from gitreg.directory.listing import Describe, Listing, Opened, readable_listing
from gitreg.errors import AuthUnavailable, TooManyRequests
from gitreg.modules.index import ModuleEntry
from gitreg.modules.resolve import Release
from gitreg.web import access
from gitreg.web.state import state_of, world_of

log = logging.getLogger(__name__)

GIT_CHECKS = 8  # Git servers asked at once for one list (auth.git)
GIT_WAIT = 10.0  # seconds a list waits for them; what is not known by then is left out


class KnownDocs(Protocol):
    """The descriptions a list may show without waiting: of docs already read
    (DocsService.description)."""

    def description(self, entry: ModuleEntry, release: Release) -> str | None: ...


@functools.lru_cache(maxsize=8)
def describer(docs: KnownDocs | None) -> Describe:
    """A module version's description: its README's first paragraph, once its docs are built
    (a list never waits for a build; the description shows up once one has run). One per docs
    service, so the directory keeps what it described."""

    def describe(entry: ModuleEntry, release: Release) -> str | None:
        return docs.description(entry, release) if docs is not None else None

    return describe


async def listing_for(request: Request) -> Listing:
    """Every module and hosted provider the request's sender may read."""
    state = state_of(request)
    reader = await access.reader_of(request)
    world = world_of(request)
    snapshot, providers = world.snapshot, world.side.providers
    may_read = access.may_read(request, reader)
    opened: Opened | None = None
    gate = access.gate_of(request)
    if gate is not None and reader is not None and reader.git:
        specs: list[ModuleSpec | ProviderSpec] = [e.spec for e in snapshot.index.entries()]
        specs += [e.spec for e in providers.entries()]
        closed = [s for s in specs if not may_read(_namespace(s))]
        opened = await _git_opened(request, gate, reader, closed)
    return readable_listing(snapshot, providers, may_read, describer(state.docs), opened)


async def _git_opened(
    request: Request, gate: Gate, reader: Principal, specs: Iterable[ModuleSpec | ProviderSpec]
) -> Opened:
    """auth.git: which of `specs` the sender's token opens, asked of their Git servers (each
    URL once, a few at a time, answers kept by the gate's cache). A server that cannot answer
    now, or does not answer in time, is a no for this list: a list never shows what a token
    may not read, and it says so in the log rather than failing the whole list. A client over
    auth.git.checks_per_minute gets a 429 instead: its list could not be told whole."""
    ask = gate.git
    authorization = access.authorization_of(request)
    if ask is None or authorization is None:
        return lambda spec: False
    token, client = bearer_token(authorization), access.client_of(request)
    urls: dict[ModuleSpec | ProviderSpec, str] = {}
    for spec in specs:
        if isinstance(spec, ModuleSpec):
            url = access.git_check_url(spec.repo, spec.git_url, request)
        else:
            url = access.git_check_url(spec.repo, None, request) if spec.repo else None
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
                    reader.name,
                )
    finally:
        for task in tasks.values():
            task.cancel()  # a check under way goes on in the gate's cache: the next list has it
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


def _namespace(spec: ModuleSpec | ProviderSpec) -> str:
    return spec.address.namespace if isinstance(spec, ModuleSpec) else spec.namespace
