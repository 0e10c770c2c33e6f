"""The repository an OCI request names, admitted by the gate before anything is looked up.

It is a module's (`NAMESPACE/NAME/SYSTEM`), a hosted provider's (`providers/NAMESPACE/TYPE`) or
one of the network mirror's (`mirror/HOSTNAME/NAMESPACE/TYPE`). A name that cannot be one of ours
is unknown by its shape alone; one outside the token's scope is refused the same way whether it
exists or not."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

from gitreg.address import ModuleAddress, ProviderAddress
from gitreg.auth.principal import Access, Principal
from gitreg.auth.target import GitQuestion
from gitreg.errors import Forbidden, TooManyRequests, Unauthorized
from gitreg.modules.index import ModuleEntry
from gitreg.oci.mirror_packages import MIRROR
from gitreg.oci.names import PROVIDERS, is_repository, module_repository
from gitreg.providers.hosted import ProviderEntry
from gitreg.web import access
from gitreg.web.oci_answers import challenge, oci_error
from gitreg.web.state import world_of

ANONYMOUS_TOKEN = "gitreg-anonymous"  # what /v2/token gives a client that sends no credentials
_MIRROR_WHAT = "the network mirror"


class Refusal(Exception):
    """An OCI error answer, raised from deep in a handler."""

    def __init__(self, answer: Response) -> None:
        self.answer = answer


@dataclass(frozen=True)
class Repository:
    """A repository a request named, admitted: a module's, a hosted provider's, or a provider
    of the network mirror (`mirrored`: its address, whose versions the mirror's sources hold)."""

    name: str
    namespace: str
    module: ModuleEntry | None = None
    provider: ProviderEntry | None = None
    mirrored: ProviderAddress | None = None
    principal: Principal | None = None  # who the gate admitted; None: no one in particular


async def admitted(request: Request) -> Repository:
    """The repository the path names, once the gate admits the request to it."""
    _forget_anonymous(request)
    name = request.path_params["name"]
    unknown = Refusal(
        oci_error(404, "NAME_UNKNOWN", f"no repository {name[:200]} on this registry")
    )
    parts = name.split("/")
    if name != name.lower() or len(parts) not in (3, 4) or not is_repository(name):
        raise unknown
    if parts[0] == MIRROR and len(parts) == 4:
        return await _mirrored(request, name, parts[1:], unknown)
    if len(parts) != 3:
        raise unknown
    if parts[0] == PROVIDERS:
        return await _provider(request, name, parts[1], parts[2], unknown)
    try:
        address = ModuleAddress.parse(*parts)
    except ValueError:
        raise unknown from None
    git = access.module_git(request, address)
    principal = await _admit(request, name, f"module {address}", address.namespace, git)
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
    return Repository(name, address.namespace, module=entry, principal=principal)


async def _provider(
    request: Request, name: str, namespace: str, provider_type: str, unknown: Refusal
) -> Repository:
    try:
        address = ProviderAddress.of(namespace, provider_type)
    except ValueError:
        raise unknown from None
    git = access.provider_git(request, address)
    what = f"provider {address.namespace}/{address.type}"
    principal = await _admit(request, name, what, address.namespace, git)
    entry = world_of(request).side.providers.get(address.namespace, address.type)
    if entry is None:
        raise unknown
    return Repository(name, address.namespace, provider=entry, principal=principal)


async def _mirrored(request: Request, name: str, parts: list[str], unknown: Refusal) -> Repository:
    """As `/v1/mirror/`: a token with `mirror: true`, and for the hosted providers under the
    registry's own hostname, one that reads their namespace too."""
    try:
        address = ProviderAddress.of(parts[1], parts[2], parts[0])
    except ValueError:
        raise unknown from None
    principal = await _admit(request, name, _MIRROR_WHAT, None, None, "mirror")
    own = world_of(request).catalog.server.hostname
    if address.hostname == own and access.is_private(request, address.namespace):
        what = f"provider {own}/{address.namespace}/{address.type}"
        await _admit(request, name, what, address.namespace, None)
    return Repository(name, address.namespace, mirrored=address, principal=principal)


async def _admit(
    request: Request,
    name: str,
    what: str,
    namespace: str | None,
    git: Callable[[], GitQuestion | None] | None,
    kind: Access = "read",
) -> Principal | None:
    try:
        return await access.admit(request, kind, what, namespace, git)
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
