"""`GET /v1/modules/:namespace/:name/:system/dependents`: who calls a module, as its reader may
see them. Admitted by the gate before anything is looked up, as every module route is."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from gitreg.dependents.answers import dependents_json
from gitreg.web import access
from gitreg.web.modules import admitted
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
