"""Auth as the handlers meet it: admit a request to a module's or a provider's namespace, the
network mirror or the ops pages; sign the download URLs a private answer hands out, and check
them when they come back without a token."""

from __future__ import annotations

from collections.abc import Callable

from starlette.requests import Request

from gitreg.address import ModuleAddress, ProviderAddress
from gitreg.auth.gate import Gate, GitQuestion, Target
from gitreg.auth.git_access import check_url
from gitreg.auth.principal import ANONYMOUS, Access, Principal
from gitreg.auth.sessions import COOKIE
from gitreg.auth.stand_ins import StandIns
from gitreg.catalog.model import Catalog, GitCheck
from gitreg.git.location import RepoLocation
from gitreg.web.answer_headers import answered_to
from gitreg.web.state import world_of

# A private file may be kept by the client that fetched it, never by a shared cache.
PRIVATE_CACHING = "private, max-age=31536000, immutable"


def gate_of(request: Request) -> Gate | None:
    return world_of(request).gate


def authorization_of(request: Request) -> str | None:
    """The credential a request carries, as an Authorization header value: the one place that
    reads it, so that the gate and the lists honour the same ones (and a browser's session
    cookie, `session_of`, where there is none)."""
    return request.headers.get("authorization")


async def reader_of(request: Request) -> Principal | None:
    """Who asks, for what a list shows them: None for anyone without a token (who sees every
    namespace without auth:, and only `auth.public` ones with it). A token that is sent but not
    accepted is Unauthorized, as on every other route: a bad token is never quietly read as
    none. With auth.git, a token no one here knows is the `git` principal, which reads what its
    Git servers accept (`web/listings.py` asks them)."""
    gate = gate_of(request)
    if gate is None:
        return None
    authorization = authorization_of(request)
    if authorization is None:
        # A signed-in browser: its session, while it lasts (an ended one reads as anonymous,
        # so that the list still shows the public namespaces, and the page offers to sign in).
        session = session_of(request)
        reader = await gate.session_principal(session) if session is not None else None
        if reader is not None:
            answered_to(request.scope, reader.name)
        return reader
    principal, _ = await gate.identify(authorization, client_of(request))
    answered_to(request.scope, principal.name)
    return principal


def may_read(request: Request, reader: Principal | None) -> Callable[[str], bool]:
    """Whether `reader` may read a namespace: every one without auth:, public ones and those
    of its token with it."""
    gate = gate_of(request)
    if gate is None:
        return lambda namespace: True
    if reader is None:
        return gate.is_public
    return lambda namespace: gate.is_public(namespace) or reader.may("read", namespace)


async def admit(
    request: Request,
    access: Access,
    what: str,
    namespace: str | None = None,
    git: Callable[[], GitQuestion | None] | None = None,
) -> Principal | None:
    """The principal this request is admitted as; None when the registry is open to all."""
    gate = gate_of(request)
    if gate is None:
        return None
    target = Target(access, what, namespace, git)
    client = client_of(request)
    principal = await gate.admit(authorization_of(request), target, session_of(request), client)
    if principal is not ANONYMOUS:
        answered_to(request.scope, principal.name)
    return principal


def client_of(request: Request) -> str:
    """The sender's address, as the per-address limits count it: the socket's peer, as the
    access log shows it (behind a proxy, the proxy's)."""
    return request.client.host if request.client else ""


def session_of(request: Request) -> str | None:
    """The browser session's cookie, honoured for reading only: a GET or HEAD (with
    SameSite=Strict, another site's page cannot make the browser send it at all)."""
    if request.method not in ("GET", "HEAD"):
        return None
    return request.cookies.get(COOKIE)


def is_private(request: Request, namespace: str) -> bool:
    gate = gate_of(request)
    return gate is not None and not gate.is_public(namespace)


def signed(request: Request, path: str, principal: Principal | None, suffix: str = "") -> str:
    """`path` (then `suffix`, a `//folder`) with a signature that lets `principal` fetch it
    without a token until the download TTL runs out."""
    gate = gate_of(request)
    if gate is None or principal is None:
        return path + suffix
    return f"{path}{suffix}?{gate.sign(path, principal)}"


async def admit_download(request: Request, what: str, namespace: str) -> bool:
    """A file a private answer pointed at: its signed URL, or a token that opens it (what
    OpenTofu sends with `use_registry_credentials`). True when it is private."""
    gate = gate_of(request)
    if gate is None or gate.is_public(namespace):
        return False
    query = request.query_params
    if "signature" in query or authorization_of(request) is None:
        signer = gate.signed_url_principal(request.url.path, dict(query), "read", namespace)
        answered_to(request.scope, signer)
        return True
    await admit(request, "read", what, namespace)
    return True


def module_git(request: Request, address: ModuleAddress) -> Callable[[], GitQuestion | None]:
    """With auth.git, what is asked for a module: its repository, or its namespace's stand-in
    when there is no such module (the same cost and status: `gitreg/auth/stand_ins.py`)."""

    def question() -> GitQuestion | None:
        entry = world_of(request).snapshot.index.get(*address.key)
        if entry is None:
            return stand_in(request, address.namespace)
        url = git_check_url(entry.spec.repo, entry.spec.git_url, request)
        return GitQuestion(url) if url is not None else None

    return question


def provider_git(request: Request, address: ProviderAddress) -> Callable[[], GitQuestion | None]:
    """As `module_git`, for a hosted provider (asked at its `repo`, when it has one)."""

    def question() -> GitQuestion | None:
        entry = world_of(request).side.providers.get(address.namespace, address.type)
        if entry is None:
            return stand_in(request, address.namespace)
        url = git_check_url(entry.spec.repo, None, request) if entry.spec.repo else None
        return GitQuestion(url) if url is not None else None

    return question


_stand_ins: tuple[Catalog, GitCheck, StandIns] | None = None  # of the catalog served last


def stand_in(request: Request, namespace: str) -> GitQuestion | None:
    global _stand_ins
    gate = gate_of(request)
    if gate is None or gate.settings.git is None:
        return None
    catalog, settings = world_of(request).catalog, gate.settings.git
    if _stand_ins is None or _stand_ins[0] is not catalog or _stand_ins[1] is not settings:
        _stand_ins = (catalog, settings, StandIns.of(catalog, settings))
    return _stand_ins[2].question(namespace)


def git_check_url(repo: RepoLocation, git_url: str | None, request: Request) -> str | None:
    """Which URL the module's Git server is asked at, when auth.git is on."""
    gate = gate_of(request)
    if gate is None or gate.settings.git is None:
        return None
    return check_url(gate.settings.git, repo, git_url)
