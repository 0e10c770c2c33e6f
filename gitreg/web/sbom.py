"""A module version's software bill of materials (CycloneDX) for the reader a request comes from:
its archive's recorded digest, and calls to this registry's modules resolved where it may read."""

from __future__ import annotations

from starlette.requests import Request

from gitreg.auth.principal import ANONYMOUS, Principal
from gitreg.docs.sbom import MEDIA_TYPE, module_sbom, resolver, this_registry
from gitreg.errors import ArchiveTooLarge
from gitreg.modules.downloads import archive_digest
from gitreg.modules.index import ModuleEntry
from gitreg.modules.resolve import Release
from gitreg.web import access
from gitreg.web.state import state_of, world_of

CONTENT_TYPE = f"{MEDIA_TYPE}; version=1.6"


async def sbom_bytes(
    request: Request, entry: ModuleEntry, release: Release, reader: Principal | None
) -> bytes:
    """The bill of `release` as `reader` may read it, once the gate admitted it to the module
    (as no one in particular, for a public one: then the request's token says who reads)."""
    if reader is None or reader is ANONYMOUS:
        reader = await access.reader_of(request)
    world, state = world_of(request), state_of(request)
    ledger = world.snapshot.ledgers[entry.spec.repo]
    try:
        digest = await archive_digest(
            state.archives, entry.spec, entry.clone_path, release.commit, ledger
        )
    except ArchiveTooLarge:  # never served, so no digest to name: the bill says what it can
        digest = ""
    server = world.catalog.server
    registry = this_registry(
        server, resolver(world.snapshot.index, access.may_read(request, reader))
    )
    return await module_sbom(state.docs, entry, release, digest, registry)
