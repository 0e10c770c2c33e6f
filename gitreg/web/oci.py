"""The OCI Distribution API, read-only, at /v2/ (`oci: {enabled: true}`).

It serves module versions as OpenTofu's `oci://` module packages, and provider versions (hosted,
and the network mirror's) as its `oci_mirror` reads them. Every repository is admitted by the
gate before it is looked up (`oci_repositories.py`), as modules.v1 is. See docs/opentofu-oci.md."""

from __future__ import annotations

import re
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response

from gitreg.auth.authorization import bearer_token
from gitreg.errors import TooManyRequests, Unauthorized
from gitreg.modules.index import ModuleEntry
from gitreg.modules.resolve import Release
from gitreg.oci import mirror_packages, packages, provider_packages
from gitreg.oci.manifests import EMPTY_BLOB, EMPTY_DIGEST, Document, referrers_index
from gitreg.oci.names import (
    PROVIDERS,
    is_digest,
    is_tag,
    is_well_formed_digest,
    module_repository,
    version_tag,
)
from gitreg.oci.packages import Layer
from gitreg.oci.referrers import AttachingModule
from gitreg.state.download_counts import Kind
from gitreg.state.ledger import TagLedger
from gitreg.web import access
from gitreg.web.oci_answers import (
    API_VERSION,
    bearer_challenge,
    document_answer,
    oci_error,
    registry_origin,
)
from gitreg.web.oci_repositories import ANONYMOUS_TOKEN, Refusal, Repository, admitted
from gitreg.web.revocations import withheld
from gitreg.web.state import state_of, world_of
from gitreg.web.usage import count_download, module_key

_WRITES = ("POST", "PUT", "PATCH", "DELETE")
READ_AND_WRITE = ["GET", "HEAD", *_WRITES]
_MOST_TAGS = 10_000  # a page of tags/list, at most (oras reads pages of up to 4 MiB)
_TOFU = re.compile(r"OpenTofu/(\d{1,6})\.(\d{1,6})(?!\d)")


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
        # Here, credentials are asked as Basic: the password a gitreg token.
        basic = {"WWW-Authenticate": 'Basic realm="gitreg", charset="UTF-8"'}
        return oci_error(401, "UNAUTHORIZED", str(exc), basic)
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
        tags = await _tags(request, repository)
    except Refusal as refusal:
        return refusal.answer
    tags.sort()
    last = request.query_params.get("last", "")
    most = request.query_params.get("n", "")
    if most and not (most.isascii() and most.isdigit() and len(most) <= 9):
        return oci_error(400, "PAGINATION_NUMBER_INVALID", f"n={most[:20]!r} is not a number")
    limit = min(int(most), _MOST_TAGS) if most else _MOST_TAGS
    page = [tag for tag in tags if tag > last][:limit] if last else tags[:limit]
    headers = dict(API_VERSION)
    if page and page[-1] != tags[-1]:
        path = f"/v2/{repository.name}/tags/list?n={limit}&last={page[-1]}"
        headers["Link"] = f'<{path}>; rel="next"'
    return JSONResponse({"name": repository.name, "tags": page}, headers=headers)


async def manifest(request: Request) -> Response:
    """A manifest (a module version, a provider platform) or an index (a provider version), by
    tag or by digest; HEAD and GET answer the same headers."""
    try:
        repository = await _admitted(request)
        reference = request.path_params["reference"]
        unknown = Refusal(
            oci_error(
                404, "MANIFEST_UNKNOWN", f"{repository.name} has no manifest {reference[:80]}"
            )
        )
        if is_digest(reference):
            found = await _by_digest(request, repository, reference)
            document = found if isinstance(found, Document) else None
        else:
            document = await _tagged(request, repository, reference) if is_tag(reference) else None
    except Refusal as refusal:
        return refusal.answer
    if document is None:
        return unknown.answer
    if not is_digest(reference):
        _count(request, repository, reference)
    return document_answer(request, document)


def _count(request: Request, repository: Repository, tag: str) -> None:
    """A manifest asked for by its version's tag is an install (a module's, or a provider's
    index: the platform's manifest then asked by digest is not counted again, nor is a module
    manifest asked by the digest a modules.v1 download counted already)."""
    if repository.module is not None:
        release = packages.release_tagged(repository.module, tag)
        if release is None:
            return
        download: tuple[Kind, str, str] = (
            "module",
            module_key(repository.module.spec.address),
            release.version,
        )
    else:
        counted = repository.name.removeprefix(f"{PROVIDERS}/")  # NAMESPACE/TYPE
        if (address := repository.mirrored) is not None:
            own = address.hostname == world_of(request).catalog.server.hostname
            counted = f"{address.namespace}/{address.type}" if own else str(address)
        download = ("provider", counted, tag.replace("_", "+"))
    count_download(state_of(request), request.scope, download, repository.principal)


async def blob(request: Request) -> Response:
    """A layer (a module's zip, a provider's release zip) or the empty config, by digest."""
    try:
        repository = await _admitted(request)
    except Refusal as refusal:
        return refusal.answer
    digest = request.path_params["digest"]
    headers = {**API_VERSION, "Docker-Content-Digest": digest, "ETag": f'"{digest}"'}
    if digest == EMPTY_DIGEST:  # every manifest's config
        body = b"" if request.method == "HEAD" else EMPTY_BLOB
        headers["Content-Length"] = str(len(EMPTY_BLOB))
        return Response(body, media_type="application/octet-stream", headers=headers)
    found = await _by_digest(request, repository, digest) if is_digest(digest) else None
    if isinstance(found, Layer):
        found = await state_of(request).packages.layer_file(found)
    if not isinstance(found, (Path, bytes)):
        return oci_error(404, "BLOB_UNKNOWN", f"{repository.name} has no blob {digest[:80]}")
    if access.is_private(request, repository.namespace):
        headers["Cache-Control"] = access.PRIVATE_CACHING
    if isinstance(found, bytes):  # a document attached to a version
        headers["Content-Length"] = str(len(found))
        body = b"" if request.method == "HEAD" else found
        return Response(body, media_type="application/octet-stream", headers=headers)
    return FileResponse(found, media_type="application/octet-stream", headers=headers)


async def referrers(request: Request) -> Response:
    """The referrers API of OCI 1.1: what is attached to the manifest `digest` names, as an
    image index; an empty one when nothing is, never a 404 (which `oras discover` reads as
    "no referrers API"). Only module versions carry attachments."""
    try:
        repository = await _admitted(request)
        digest = request.path_params["digest"]
        if not is_well_formed_digest(digest):
            message = f"{digest[:80]!r} is no digest (sha256:<64 lowercase hex digits>)"
            raise Refusal(oci_error(400, "DIGEST_INVALID", message))
        if repository.mirrored is not None:
            await _tags(request, repository)  # NAME_UNKNOWN as tags/list, for no such provider
        found: tuple[Document, ...] = ()
        if repository.module is not None and is_digest(digest):
            module = _attaching(request, repository.name, repository.module)
            found = await state_of(request).referrers.referring_to(module, digest)
    except Refusal as refusal:
        return refusal.answer
    # Filtered here, and said so: oras then filters no more on its side.
    wanted = request.query_params.get("artifactType", "")
    applied = {"OCI-Filters-Applied": "artifactType"} if wanted else {}
    return document_answer(request, referrers_index(found, wanted), applied)


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
    packages = state_of(request).packages
    document = await packages.manifest(repository, entry, release, _ledger(request, entry))
    return f"oci://{str(origin).removeprefix('https://')}/{repository}?digest={document.digest}"


async def _admitted(request: Request) -> Repository:
    if (refused := _disabled(request)) is not None:
        raise Refusal(refused)
    if request.method in _WRITES:
        raise Refusal(await refused_write(request))
    return await admitted(request)


async def _tags(request: Request, repository: Repository) -> list[str]:
    hidden = await _withheld(request, repository)
    if repository.module is not None:
        tags = packages.tags_of(repository.module)
        if not hidden:
            return tags
        module = repository.module

        def shown(tag: str) -> bool:
            release = packages.release_tagged(module, tag)
            return release is None or release.version not in hidden

        return [tag for tag in tags if shown(tag)]
    if repository.provider is not None:
        releases = repository.provider.releases
        return [version_tag(r.version) for r in releases if r.version not in hidden]
    assert repository.mirrored is not None
    mirror = world_of(request).side.mirror
    versions = await mirror_packages.versions(mirror, repository.mirrored)
    if versions is None:
        message = f"no repository {repository.name} on this registry"
        raise Refusal(oci_error(404, "NAME_UNKNOWN", message))
    return [version_tag(v) for v in versions]


async def _tagged(request: Request, repository: Repository, tag: str) -> Document | None:
    """The manifest or index a tag names: a module version, or a provider version's index."""
    if repository.module is not None:
        release = packages.release_tagged(repository.module, tag)
        if release is None:
            return None
        module = repository.module
        await _refuse_revoked(request, repository, release.version)
        return await state_of(request).packages.manifest(
            repository.name, module, release, _ledger(request, module)
        )
    version = tag.replace("_", "+")  # no version holds `_`: OpenTofu reads it back as `+`
    if repository.provider is not None:
        await _refuse_revoked(request, repository, version)
        found = repository.provider.release(version)
        zips = provider_packages.hosted_zips(found) if found is not None else None
    else:
        assert repository.mirrored is not None
        mirror = world_of(request).side.mirror
        zips = await mirror_packages.zips(mirror, repository.mirrored, version)
    if zips is None:
        return None
    try:
        made = provider_packages.documents(version, zips)
    except OSError:  # a release file gone since the folder was read: read again soon
        return None
    if repository.mirrored is not None:
        state_of(request).packages.mirrored.remember(repository.name, made)
    return made.index


async def _withheld(request: Request, repository: Repository) -> frozenset[str]:
    """The revoked versions of a module or hosted provider its reader never installed, left out
    of its tags and refused by tag, as modules.v1 and providers.v1 do."""
    if repository.module is not None and repository.module.revoked:
        key = module_key(repository.module.spec.address)
        revoked = repository.module.revoked
        return await withheld(request, "module", key, revoked, repository.principal)
    if repository.provider is not None and (revoked := repository.provider.revoked()):
        counted = repository.name.removeprefix(f"{PROVIDERS}/")
        return await withheld(request, "provider", counted, revoked, repository.principal)
    return frozenset()


async def _refuse_revoked(request: Request, repository: Repository, version: str) -> None:
    """A 404 MANIFEST_UNKNOWN saying why, when `version` is revoked and the reader never
    installed it (OCI has no code for a version gone on purpose)."""
    if version in await _withheld(request, repository):
        module, provider = repository.module, repository.provider
        reason = (
            module.revocation(module.by_version[version])
            if module is not None
            else provider.revocation(version)
            if provider is not None
            else None
        )
        message = f"{repository.name} {version} is revoked: {(reason or '').rstrip('.')}."
        raise Refusal(oci_error(404, "MANIFEST_UNKNOWN", message))


async def _by_digest(
    request: Request, repository: Repository, digest: str
) -> Document | Layer | Path | bytes | None:
    """What a digest names in this repository, and in no other: a file, a layer of a module
    version, a manifest, or the bytes of a document attached to a version."""
    if repository.module is not None:
        state, module = state_of(request), repository.module
        found = await state.packages.by_digest(
            repository.name, module, digest, _ledger(request, module)
        )
        if found is None:  # a referrer manifest, or a document attached to a version
            attaching = _attaching(request, repository.name, module)
            return await state.referrers.by_digest(attaching, digest)
        return found
    try:
        if repository.provider is not None:
            return provider_packages.by_digest(repository.provider, digest)
        assert repository.mirrored is not None
        mirror = world_of(request).side.mirror
        mirrored = state_of(request).packages.mirrored
        return await mirrored.by_digest(mirror, repository.name, repository.mirrored, digest)
    except OSError:
        return None


def _disabled(request: Request) -> Response | None:
    if world_of(request).catalog.oci.enabled:
        return None
    return oci_error(404, "UNSUPPORTED", "this registry does not serve OCI (oci: enabled: false)")


def _ledger(request: Request, entry: ModuleEntry) -> TagLedger | None:
    """The ledger of the module's repository, where its zips' digests are recorded."""
    return world_of(request).snapshot.ledgers.get(entry.spec.repo)


def _attaching(request: Request, name: str, entry: ModuleEntry) -> AttachingModule:
    return AttachingModule(name, entry, _ledger(request, entry), world_of(request).catalog)
