"""How the OCI Distribution API answers: its errors, its Bearer challenge, its manifests' headers.

Error bodies are `{"errors": [{"code": ...}]}`, the codes OpenTofu and oras read; the Bearer
challenge's realm is this registry's own `/v2/token`; manifests carry their exact type, length
and digest on HEAD and GET alike."""

from __future__ import annotations

from collections.abc import Mapping

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from gitreg.auth.own_origin import own_origin, reached_loopback
from gitreg.oci.manifests import Document
from gitreg.web.state import world_of
from gitreg.web_origin import WebOrigin, parse_origin

API_VERSION = {"Docker-Distribution-API-Version": "registry/2.0"}


def oci_error(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> Response:
    return JSONResponse(
        {"errors": [{"code": code, "message": message}]},
        status_code=status,
        headers={**API_VERSION, **(headers or {})},
    )


def challenge(request: Request, repository: str, message: str) -> Response:
    """401, telling the client where to trade its credentials for a token."""
    header = bearer_challenge(request, repository)
    return oci_error(401, "UNAUTHORIZED", message, {"WWW-Authenticate": header})


def bearer_challenge(request: Request, repository: str | None = None) -> str:
    """Where to trade credentials for a token: always this registry's own origin (OpenTofu
    refuses a realm on another private address)."""
    origin = registry_origin(request)
    service = str(origin).partition("://")[2]
    scope = f',scope="repository:{repository}:pull"' if repository else ""
    return f'Bearer realm="{origin}/v2/token",service="{service}"{scope}'


def registry_origin(request: Request) -> WebOrigin:
    """The registry's own origin (`public_url`, else `hostname`), or the loopback address the
    connection reached when the request names it: never another Host a request names."""
    catalog = world_of(request).catalog
    own = own_origin(catalog.server.hostname, catalog.server.public_url)
    reached = reached_loopback(request.url.scheme, request.scope.get("server"))
    named = parse_origin(f"{request.url.scheme}://{request.headers.get('host', '')}")
    return named if named is not None and named in reached else own


def document_answer(
    request: Request, document: Document, headers: Mapping[str, str] | None = None
) -> Response:
    """A manifest or an index, with `headers` besides: its exact bytes on GET; on HEAD no body,
    the same headers. Its type is exactly the media type: oras-go compares whole strings."""
    sent = {
        **(headers or {}),
        **API_VERSION,
        "Content-Type": document.media_type,
        "Content-Length": str(len(document.body)),
        "Docker-Content-Digest": document.digest,
        "ETag": f'"{document.digest}"',
    }
    body = b"" if request.method == "HEAD" else document.body
    return Response(body, headers=sent)
