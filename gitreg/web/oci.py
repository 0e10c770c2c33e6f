"""The OCI Distribution API, read-only, at /v2/ (`oci: {enabled: true}`): module versions as
OpenTofu's `oci://` module packages, hosted provider versions as its `oci_mirror` reads them.
Every repository is admitted by the gate before it is looked up, as modules.v1 is: a namespace
outside a token's scope is refused the same way whether it holds the repository or not."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response

from gitreg.address import ModuleAddress, ProviderAddress
from gitreg.auth.authorization import bearer_token
from gitreg.auth.target import GitQuestion
from gitreg.errors import Forbidden, TooManyRequests, Unauthorized
from gitreg.modules.index import ModuleEntry
from gitreg.modules.resolve import Release
from gitreg.oci import packages, provider_packages
from gitreg.oci.manifests import EMPTY_BLOB, EMPTY_DIGEST, Document
from gitreg.oci.names import PROVIDERS, is_digest, is_tag, module_repository, version_tag
from gitreg.oci.packages import Layer
from gitreg.providers.artifacts import ProviderPackage
from gitreg.providers.hosted import ProviderEntry
from gitreg.web import access
from gitreg.web.oci_answers import (
    API_VERSION,
    bearer_challenge,
    challenge,
    document_answer,
    oci_error,
    registry_origin,
)
from gitreg.web.state import state_of, world_of

_WRITES = ("POST", "PUT", "PATCH", "DELETE")
READ_AND_WRITE = ["GET", "HEAD", *_WRITES]
_MOST_TAGS = 10_000
ANONYMOUS_TOKEN = "gitreg-anonymous"  # what /v2/token gives a client that sends no credentials
_TOFU = re.compile(
    r"OpenTofu/(\d+)\.(\d+)"
)  # a page of tags/list, at most (oras reads pages of up to 4 MiB)


class Refusal(Exception):
    """An OCI error answer, raised from deep in a handler."""

    def __init__(self, answer: Response) -> None:
        self.answer = answer


@dataclass(frozen=True)
class Repository:
    """A repository a request named, admitted: a module's or a hosted provider's."""

    name: str
    module: ModuleEntry | None = None
    provider: ProviderEntry | None = None


async def base(request: Request) -> Response:
    """`/v2/`: 200 to everyone, as OpenTofu 1.10 to 1.12 need before anything else (a 401 here
    breaks their anonymous pulls); what a repository holds is asked of the gate per repository.
    With auth:, it names the Bearer realm all the same."""
    if (refused := _disabled(request)) is not None:
        return refused
    headers = dict(API_VERSION)
    if access.gate_of(request).on:
        # Clients of containers/image (skopeo, podman) learn the challenge here, at their ping,
        # and never from a later 401; oras-go reads it from the 401 and ignores it here.
        headers["WWW-Authenticate"] = bearer_challenge(request)
    return JSONResponse({}, headers=headers)


async def token(request: Request) -> Response:
    """The realm of the Bearer challenge: Basic with a gitreg token as password (or the token as
    Bearer) answers with that token, which the gate then honours on every request. Nothing
    new is issued: scopes stay the token's, checked per repository."""
    if (refused := _disabled(request)) is not None:
        return refused
    authorization = access.authorization_of(request)
    if authorization is None:
        # Clients that met the challenge at /v2/ ask for a token before every pull, public
        # namespaces' too: an anonymous one, which reads as no token at all.
        return _token_answer(ANONYMOUS_TOKEN)
    try:
        await access.reader_of(request)
        value = bearer_token(authorization)
    except Unauthorized as exc:
        return oci_error(401, "UNAUTHORIZED", str(exc))
    except TooManyRequests as exc:
        return oci_error(429, "TOOMANYREQUESTS", str(exc), {"Retry-After": str(exc.retry_after)})
    return _token_answer(value)


def _token_answer(value: str) -> Response:
    return JSONResponse(
        {"token": value, "access_token": value, "expires_in": 3600},
        headers={"Cache-Control": "no-store"},
    )


async def tags_list(request: Request) -> Response:
    """`tags/list`, in lexical order, a page of `n` after `last` with a `Link` to the next."""
    try:
        repository = await _admitted(request)
    except Refusal as refusal:
        return refusal.answer
    if repository.module is not None:
        tags = packages.tags_of(repository.module)
    else:
        assert repository.provider is not None
        tags = [version_tag(r.version) for r in repository.provider.releases]
    tags.sort()
    last = request.query_params.get("last", "")
    most = request.query_params.get("n", "")
    if most and not (most.isascii() and most.isdigit()):
        return oci_error(400, "PAGINATION_NUMBER_INVALID", f"n={most!r} is not a number")
    limit = min(int(most), _MOST_TAGS) if most else _MOST_TAGS
    page = [tag for tag in tags if tag > last][:limit] if last else tags[:limit]
    headers = dict(API_VERSION)
    if page and page[-1] != tags[-1]:
        path = f"/v2/{repository.name}/tags/list?n={limit}&last={page[-1]}"
        headers["Link"] = f'<{path}>; rel="next"'
    return JSONResponse({"name": repository.name, "tags": page}, headers=headers)


async def manifest(request: Request) -> Response:
    """A manifest (a module version) or an index (a provider version), by tag or by digest;
    HEAD and GET answer the same headers."""
    try:
        repository = await _admitted(request)
        reference = request.path_params["reference"]
        document = await _document(request, repository, reference)
    except Refusal as refusal:
        return refusal.answer
    return document_answer(request, document)


async def blob(request: Request) -> Response:
    """A layer (a module's zip, a provider's release zip) or the empty config, by digest."""
    try:
        repository = await _admitted(request)
    except Refusal as refusal:
        return refusal.answer
    digest = request.path_params["digest"]
    unknown = oci_error(404, "BLOB_UNKNOWN", f"{repository.name} has no blob {digest[:80]}")
    if not is_digest(digest):
        return unknown
    headers = {**API_VERSION, "Docker-Content-Digest": digest, "ETag": f'"{digest}"'}
    if digest == EMPTY_DIGEST:
        body = b"" if request.method == "HEAD" else EMPTY_BLOB
        headers["Content-Length"] = str(len(EMPTY_BLOB))
        return Response(body, media_type="application/octet-stream", headers=headers)
    found: object = None
    if repository.module is not None:
        zips = state_of(request).packages
        found = await zips.by_digest(repository.name, repository.module, digest)
        path = await zips.layer_file(found) if isinstance(found, Layer) else None
    elif repository.provider is not None:
        found = provider_packages.by_digest(repository.provider, digest)
        path = found.path if isinstance(found, ProviderPackage) else None
    if path is None:
        return unknown
    if access.is_private(request, repository.name.split("/")[0]):
        headers["Cache-Control"] = access.PRIVATE_CACHING
    return FileResponse(path, media_type="application/octet-stream", headers=headers)


async def refused_write(request: Request) -> Response:
    """Every write: this registry's content comes from Git tags and release folders."""
    if (refused := _disabled(request)) is not None:
        return refused
    message = "this registry is read-only: publish a version by pushing a Git tag"
    return oci_error(405, "UNSUPPORTED", message, {"Allow": "GET, HEAD"})


async def module_location(request: Request, entry: ModuleEntry, release: Release) -> str | None:
    """With `oci.module_locations`, where OpenTofu 1.10 and later (by its User-Agent: it alone
    has the `oci` getter) fetch a module version: `oci://HOST/REPOSITORY?digest=...`, pinned by
    digest (immutable, and no tag to resolve). None for every other client, for a module
    cloned with git or whose address is no OCI name, and where the registry is no HTTPS."""
    settings = world_of(request).catalog.oci
    if not (settings.enabled and settings.module_locations) or entry.spec.download != "archive":
        return None
    version = _TOFU.match(request.headers.get("user-agent", ""))
    if version is None or (int(version[1]), int(version[2])) < (1, 10):
        return None
    origin = registry_origin(request)
    if origin.scheme != "https":
        return None
    try:
        repository = module_repository(entry.spec.address)
    except ValueError:
        return None
    document = await state_of(request).packages.manifest(repository, entry, release)
    return f"oci://{str(origin).removeprefix('https://')}/{repository}?digest={document.digest}"


async def _document(request: Request, repository: Repository, reference: str) -> Document:
    unknown = Refusal(
        oci_error(404, "MANIFEST_UNKNOWN", f"{repository.name} has no manifest {reference[:80]}")
    )
    if repository.module is not None:
        zips = state_of(request).packages
        if is_digest(reference):
            found = await zips.by_digest(repository.name, repository.module, reference)
            if isinstance(found, Document):
                return found
            raise unknown
        release = (
            packages.release_tagged(repository.module, reference) if is_tag(reference) else None
        )
        if release is None:
            raise unknown
        return await zips.manifest(repository.name, repository.module, release)
    assert repository.provider is not None
    if is_digest(reference):
        found_document = provider_packages.by_digest(repository.provider, reference)
        if isinstance(found_document, Document):
            return found_document
        raise unknown
    provider_release = (
        provider_packages.release_tagged(repository.provider, reference)
        if is_tag(reference)
        else None
    )
    if provider_release is None:
        raise unknown
    return provider_packages.documents(provider_release).index


async def _admitted(request: Request) -> Repository:
    """The repository the path names, once the gate admits the request to its namespace: a
    write is refused first, and a name that cannot be one of ours is unknown (its shape alone
    says so, not what any namespace holds)."""
    if (refused := _disabled(request)) is not None:
        raise Refusal(refused)
    if request.method in _WRITES:
        raise Refusal(await refused_write(request))
    _forget_anonymous(request)
    name = request.path_params["name"]
    unknown = Refusal(
        oci_error(404, "NAME_UNKNOWN", f"no repository {name[:200]} on this registry")
    )
    parts = name.split("/")
    if len(parts) != 3 or name != name.lower():
        raise unknown
    if parts[0] == PROVIDERS:
        return await _provider(request, name, parts[1], parts[2], unknown)
    try:
        address = ModuleAddress.parse(*parts)
    except ValueError:
        raise unknown from None
    git = access.module_git(request, address)
    await _admit(request, name, f"module {address}", address.namespace, git)
    entry = world_of(request).snapshot.index.get(*address.key)
    if entry is None or entry.spec.download != "archive":
        # A module downloaded with git is cloned with its clients' own credentials: gitreg's
        # would show them what its repository holds besides.
        raise unknown
    try:
        if module_repository(entry.spec.address) != name:
            raise unknown
    except ValueError:
        raise unknown from None
    return Repository(name, module=entry)


async def _provider(
    request: Request, name: str, namespace: str, provider_type: str, unknown: Refusal
) -> Repository:
    try:
        address = ProviderAddress.of(namespace, provider_type)
    except ValueError:
        raise unknown from None
    git = access.provider_git(request, address)
    await _admit(
        request, name, f"provider {address.namespace}/{address.type}", address.namespace, git
    )
    entry = world_of(request).side.providers.get(address.namespace, address.type)
    if entry is None:
        raise unknown
    return Repository(name, provider=entry)


async def _admit(
    request: Request,
    name: str,
    what: str,
    namespace: str,
    git: Callable[[], GitQuestion | None],
) -> None:
    try:
        await access.admit(request, "read", what, namespace, git)
    except Unauthorized as exc:
        raise Refusal(challenge(request, name, str(exc))) from None
    except Forbidden as exc:
        raise Refusal(oci_error(403, "DENIED", str(exc))) from None
    except TooManyRequests as exc:
        retry = {"Retry-After": str(exc.retry_after)}
        raise Refusal(oci_error(429, "TOOMANYREQUESTS", str(exc), retry)) from None


def _forget_anonymous(request: Request) -> None:
    """The anonymous token /v2/token hands out, taken out of the request: the gate sees a
    request with no token, as it is."""
    headers = request.scope["headers"]
    anonymous = f"Bearer {ANONYMOUS_TOKEN}".encode()
    if any(key == b"authorization" and value == anonymous for key, value in headers):
        request.scope["headers"] = [(k, v) for k, v in headers if k != b"authorization"]


def _disabled(request: Request) -> Response | None:
    if world_of(request).catalog.oci.enabled:
        return None
    return oci_error(404, "UNSUPPORTED", "this registry does not serve OCI (oci: enabled: false)")
