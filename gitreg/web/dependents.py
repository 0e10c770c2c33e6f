"""`GET /v1/modules/:namespace/:name/:system/dependents` and `/v1/providers/:namespace/:type/
dependents`: who uses a module or a hosted provider, as its reader may see them. Admitted by the
gate before anything is looked up, as every module and provider route is."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from gitreg.dependents.answers import dependents_json
from gitreg.dependents.provider_answers import provider_dependents_json
from gitreg.web import access
from gitreg.web.hot_routes import PROVIDER_VERSIONS
from gitreg.web.modules import admitted
from gitreg.web.providers import hosted_entry, provider_address_of
from gitreg.web.state import state_of


async def answer(request: Request) -> Response:
    """The module's dependents: those in namespaces the reader may read named, the rest
    counted (docs/dependents.md)."""
    _, entry, _ = await admitted(request)
    # Who reads, asked again: a public namespace admits anyone as `anonymous`, without asking
    # which token they sent, and that token decides which callers are named.
    reader = await access.reader_of(request)
    index = state_of(request).dependents.current
    address = entry.spec.address
    seen = index.seen_by(address.key, access.may_read(request, reader))
    return JSONResponse(dependents_json(str(address), seen, index))


async def provider_answer(request: Request) -> Response:
    """A hosted provider's dependents, admitted as its providers.v1 routes are: a reader who
    may not read its namespace gets the answer a provider that does not exist gets."""
    address = provider_address_of(request)
    await access.admit_all(request, PROVIDER_VERSIONS.targets(request, address))
    entry = hosted_entry(request, address)
    reader = await access.reader_of(request)  # who is named: as for a module, asked again
    index = state_of(request).dependents.providers
    seen = index.seen_by(entry.spec.key, access.may_read(request, reader))
    return JSONResponse(provider_dependents_json(str(entry.spec), seen, index))
