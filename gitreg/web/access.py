"""Auth as the handlers meet it: what a request carries, handed to its gate.
Every question goes to the request's gate (`auth/gatekeeper.py`), open or not, which alone
decides; an answer made for a principal is marked so (`answered_to`), which a shared cache must
not keep."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from types import MappingProxyType

from starlette.requests import Request

from gitreg.address import ModuleAddress, ProviderAddress
from gitreg.auth.gatekeeper import Gatekeeper
from gitreg.auth.principal import ANONYMOUS, Access, Principal
from gitreg.auth.sessions import COOKIE
from gitreg.auth.target import GitQuestion, Target
from gitreg.web.answer_headers import answered_to
from gitreg.web.state import world_of
from gitreg.world.world import World

# A private file may be kept by the client that fetched it, never by a shared cache.
PRIVATE_CACHING = "private, max-age=31536000, immutable"
_NO_QUERY: Mapping[str, str] = MappingProxyType({})


def gate_of(request: Request) -> Gatekeeper:
    return world_of(request).gate


def authorization_of(request: Request) -> str | None:
    """The credential a request carries, as an Authorization header value: the one place that
    reads it, so that the gate and the lists honour the same ones (and a browser's session
    cookie, `session_of`, where there is none)."""
    return _header(request, b"authorization")


async def reader_of(request: Request) -> Principal | None:
    """Who asks, for what a list shows them (the gate's `reader`): None for anyone without a
    token or a session (who sees every namespace without auth:, and only `auth.public` ones
    with it). A token that is sent but not accepted is Unauthorized, as on every other route.
    With auth.git, a token no one here knows is the `git` principal, which reads what its Git
    servers accept (`web/directory.py` has the gate ask them)."""
    gate = gate_of(request)
    reader = await gate.reader(authorization_of(request), session_of(request), client_of(request))
    if reader is not None:
        answered_to(request.scope, reader.name)
    return reader


def may_read(request: Request, reader: Principal | None) -> Callable[[str], bool]:
    """Whether `reader` may read a namespace (the gate's `readable`)."""
    return gate_of(request).readable(reader)


async def admit(
    request: Request,
    access: Access,
    what: str,
    namespace: str | None = None,
    git: Callable[[], GitQuestion | None] | None = None,
) -> Principal | None:
    """The principal this request is admitted as; None: no one in particular (an open registry
    admits every request so, and its answer is anyone's)."""
    return await admit_all(request, (Target(access, what, namespace, git),))


async def admit_all(request: Request, targets: Sequence[Target]) -> Principal | None:
    """`admit` to each of `targets` (a mirror answer's archives), its headers read once; the
    principal the first admits as."""
    gate = gate_of(request)
    authorization, client = authorization_of(request), client_of(request)
    # A token of registry.yaml's is answered at once; a cookie is read only when it is not.
    principal = None if authorization is None else gate.admitted_now(authorization, targets, client)
    if principal is None:
        principal = await gate.admit_all(authorization, targets, session_of(request), client)
    if principal is not None and principal is not ANONYMOUS:
        answered_to(request.scope, principal.name)
    return principal


def client_of(request: Request) -> str:
    """The sender's address, as the per-address limits count it: the socket's peer, as the
    access log shows it (behind a proxy, the proxy's)."""
    client = request.scope.get("client")  # as request.client, without making an Address
    return str(client[0]) if client else ""


def session_of(request: Request) -> str | None:
    """The browser session's cookie, honoured for reading only: a GET or HEAD (with
    SameSite=Strict, another site's page cannot make the browser send it at all)."""
    if request.method not in ("GET", "HEAD") or _header(request, b"cookie") is None:
        return None
    return request.cookies.get(COOKIE)


def _header(request: Request, name: bytes) -> str | None:
    """A header's first value, as `request.headers` gives it, read from the scope as the server
    passed it (lowercase names): every request of an open registry asks its gate, which reads
    none, and building Starlette's `Headers` to find none would cost more than its answer."""
    for key, value in request.scope["headers"]:
        if key == name:
            value_text: str = value.decode("latin-1")
            return value_text
    return None


def is_private(request: Request, namespace: str) -> bool:
    return not gate_of(request).is_public(namespace)


async def download_admitted(request: Request, target: Target) -> str | None:
    """Who a file an answer pointed at is opened to, by its signed URL or a token that opens it
    (the gate's `admit_download`); None when it is anyone's."""
    # The path and query as the scope holds them, where they read the same as request.url's:
    # the open gate reads neither, and a URL and a query built for it cost an archive from
    # memory a quarter of its answer.
    scope = request.scope
    path: str = scope["path"]
    if "?" in path or "#" in path or "\\" in path:  # which URL escapes
        path = request.url.path
    query = request.query_params if scope["query_string"] else _NO_QUERY
    return await gate_of(request).admit_download(
        path,
        query,
        authorization_of(request),
        target,
        session_of(request),
        client_of(request),
    )


async def admit_download(request: Request, what: str, namespace: str) -> bool:
    """A module's or a provider's file: True when it is private (and answered to whom it is
    opened to)."""
    name = await download_admitted(request, Target("read", what, namespace))
    if name is None:
        return False
    answered_to(request.scope, name)
    return True


def module_git(request: Request, address: ModuleAddress) -> Callable[[], GitQuestion | None]:
    """With auth.git, what is asked for a module in the request's world: its repository, or its
    namespace's stand-in when there is no such module (the same cost and status:
    `gitreg/auth/stand_ins.py`). Bound to that world: a kept answer asks it again."""
    return partial(_module_question, world_of(request), address)


def _module_question(world: World, address: ModuleAddress) -> GitQuestion | None:
    entry = world.snapshot.index.get(*address.key)
    if entry is None:
        return world.gate.stand_in(world.catalog, address.namespace)
    url = world.gate.git_url(entry.spec.repo, entry.spec.git_url)
    return GitQuestion(url) if url is not None else None


def provider_git(request: Request, address: ProviderAddress) -> Callable[[], GitQuestion | None]:
    """As `module_git`, for a hosted provider (asked at its `repo`, when it has one)."""
    return partial(_provider_question, world_of(request), address)


def _provider_question(world: World, address: ProviderAddress) -> GitQuestion | None:
    entry = world.side.providers.get(address.namespace, address.type)
    if entry is None:
        return world.gate.stand_in(world.catalog, address.namespace)
    url = world.gate.git_url(entry.spec.repo, None) if entry.spec.repo else None
    return GitQuestion(url) if url is not None else None
