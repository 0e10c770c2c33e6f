"""The directory (`gitreg/directory/`) as a request's sender may read it: its view, for lists.
Lists are never refused: without a token they show the public namespaces (every one without
auth:), with one what it reads; a bad token is a 401, as everywhere."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Protocol

from starlette.requests import Request

from gitreg.catalog.specs import ModuleSpec, ProviderSpec
from gitreg.directory.view import Describe, DirectoryView, directory_view
from gitreg.modules.index import ModuleEntry
from gitreg.modules.resolve import Release
from gitreg.modules.snapshot import RegistrySnapshot
from gitreg.providers.hosted import Providers
from gitreg.web import access
from gitreg.web.state import state_of, world_of


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


async def directory_for(request: Request) -> DirectoryView:
    """Every module and hosted provider the request's sender may read (with auth.git, those its
    token opens at their Git servers too: the gate asks them)."""
    state = state_of(request)
    reader = await access.reader_of(request)
    world = world_of(request)
    snapshot, providers, gate = world.snapshot, world.side.providers, world.gate
    may_read = gate.readable(reader)
    closed = (s for s in _specs(snapshot, providers) if not may_read(_namespace(s)))
    authorization, client = access.authorization_of(request), access.client_of(request)
    opened = await gate.git_opened(reader, authorization, client, closed)
    return directory_view(snapshot, providers, may_read, describer(state.docs), opened)


def _specs(snapshot: RegistrySnapshot, providers: Providers) -> Iterator[ModuleSpec | ProviderSpec]:
    yield from (e.spec for e in snapshot.index.entries())
    yield from (e.spec for e in providers.entries())


def _namespace(spec: ModuleSpec | ProviderSpec) -> str:
    return spec.address.namespace if isinstance(spec, ModuleSpec) else spec.namespace
