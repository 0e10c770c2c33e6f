"""The hot routes, each defined once: what the gate is asked, whether a kept answer still says
what the handler would, and how that answer is made for another reader.
A handler is admitted through its route (`admit`), signs its URLs through that admission, and
keeps its answer with it (`Admission.keep`); `kept_routes.py` asks the same route of a kept
answer before sending it, so the two cannot drift apart. Which cache serves what:
docs/how-it-works/internals.md."""

from __future__ import annotations

from typing import Generic

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Scope

from gitreg.address import ModuleAddress, ProviderAddress
from gitreg.auth.gatekeeper import Gatekeeper
from gitreg.auth.principal import Principal
from gitreg.auth.target import Target
from gitreg.git.location import RepoLocation
from gitreg.providers.hosted import ProviderEntry
from gitreg.state.download_counts import Kind
from gitreg.web import access
from gitreg.web.kept import ByInstalls, HotRoute, KeptAnswer, Made, S, Serving, W
from gitreg.web.signed_answers import Headers, SignedUrls
from gitreg.web.state import state_of, world_of
from gitreg.web.usage import count_download
from gitreg.world.world import World

MIRROR = Target("mirror", "the network mirror")


class Admission(Generic[S, W]):
    """A request as the gate admitted it to its route: in `world`, asked `targets` for `subject`,
    as `principal`; and the URLs its answer signed for that principal."""

    __slots__ = ("download", "principal", "route", "signed", "subject", "targets", "world")

    def __init__(
        self,
        route: HotRoute[S, W],
        subject: S,
        world: World,
        targets: tuple[Target, ...],
        principal: Principal | None,
    ) -> None:
        self.route, self.subject, self.world = route, subject, world
        self.targets, self.principal = targets, principal
        self.signed: list[tuple[str, str, str]] = []
        self.download: tuple[Kind, str, str] | None = None

    def downloaded(self, request: Request, kind: Kind, address: str, version: str) -> None:
        """This answer is an install of `version` of `address`: counted now, and each time a
        kept copy of it is sent."""
        self.download = (kind, address, version)
        count_download(state_of(request), request.scope, self.download, self.principal)

    def sign(self, path: str, suffix: str = "") -> str:
        """`path` (then `suffix`, a `//folder`) as the gate hands it to the principal: signed so
        that it opens without a token until the download TTL runs out. A kept answer has the
        same paths signed for each reader."""
        url = self.world.gate.signed(path, self.principal, suffix)
        self.signed.append((path, suffix, url))
        return url

    def keep(
        self,
        request: Request,
        response: Response,
        witness: W,
        by_installs: ByInstalls | None = None,
    ) -> Response:
        """`response`, kept for the next GET of this path in this world, with what its route
        checks it against (and `by_installs`, when each reader's answer depends on what they
        installed); returned as it is."""
        if request.method != "GET" or response.status_code != 200:
            return response
        headers, body = self.route.kept_parts(response)
        signed = None
        if self.signed:
            signed = SignedUrls.of(headers, body, self.signed)
            if signed is None:
                return response
        state, world = state_of(request), world_of(request)
        # A fresh read may have moved the request to a later world: its questions are asked there.
        targets = self.targets if world is self.world else self.route.targets(request, self.subject)
        matched = request.scope.get("route")
        answer = KeptAnswer(
            self.route, matched, targets, witness, headers, body, signed, self.download, by_installs
        )
        state.kept.keep(world, state.current.world, request.url.path, answer)
        return response


async def admit(request: Request, route: HotRoute[S, W], subject: S) -> Admission[S, W]:
    """`request`, admitted by its gate to what `route` asks for `subject` (the gate's refusal is
    raised): before anything is looked up, so a client outside a namespace learns nothing of it."""
    targets = route.targets(request, subject)
    principal = await access.admit_all(request, targets) if targets else None
    return Admission(route, subject, world_of(request), targets, principal)


class _Discovery(HotRoute[None, None]):
    """`/.well-known/terraform.json`: anyone's, the same until another world is served."""


class _ModuleRoute(HotRoute[ModuleAddress, W]):
    def targets(self, request: Request, subject: ModuleAddress) -> tuple[Target, ...]:
        return (module_target(request, subject),)


def module_target(request: Request, address: ModuleAddress) -> Target:
    """What a request for a module asks the gate: to read its namespace, and with auth.git, its
    repository's Git server (`access.module_git`)."""
    git = access.module_git(request, address)
    return Target("read", f"module {address}", address.namespace, git)


class _ModuleVersions(_ModuleRoute[RepoLocation]):
    """modules.v1 `versions`: current while no fresh read of its repository is due."""

    def current(self, answer: KeptAnswer[RepoLocation], serving: Serving, world: World) -> bool:
        return not serving.fresh_reads.due(answer.witness)

    def made(
        self,
        answer: KeptAnswer[RepoLocation],
        scope: Scope,
        serving: Serving,
        gate: Gatekeeper,
        principal: Principal | None,
    ) -> Made | None:
        if principal is not None and principal.preview:
            return None  # a preview token sees versions held back: its handler answers it
        return super().made(answer, scope, serving, gate, principal)


class _ModuleDownload(_ModuleRoute[None]):
    """modules.v1 `download`: an open namespace's, or a private one's archive URL, signed for
    each reader."""


class _ModuleArchive(HotRoute[None, tuple[str, str]]):
    """A module archive held in memory, kept without auth: what is kept is its name and its
    Cache-Control, not its bytes (the memory budget holds them), and it is sent while it is held.
    A conditional or ranged request goes to the handler (a 304, or the range)."""

    def kept_parts(self, response: Response) -> tuple[Headers, bytes]:
        return (), b""

    def made(
        self,
        answer: KeptAnswer[tuple[str, str]],
        scope: Scope,
        serving: Serving,
        gate: Gatekeeper,
        principal: Principal | None,
    ) -> Made | None:
        for key, _ in scope["headers"]:
            if key == b"if-none-match" or key == b"range":
                return None
        return serving.held_archives.held_parts(*answer.witness)


class _ProviderRoute(HotRoute[ProviderAddress, tuple[ProviderAddress, ProviderEntry]]):
    """providers.v1 `versions` and `download`: current while the provider's entry is the one
    served (a release folder read again replaces it without a swap)."""

    def targets(self, request: Request, subject: ProviderAddress) -> tuple[Target, ...]:
        git = access.provider_git(request, subject)
        return (Target("read", f"provider {subject}", subject.namespace, git),)

    def current(
        self,
        answer: KeptAnswer[tuple[ProviderAddress, ProviderEntry]],
        serving: Serving,
        world: World,
    ) -> bool:
        address, entry = answer.witness
        return world.side.providers.get(address.namespace, address.type) is entry


class _MirrorRoute(HotRoute[tuple[str, str, str], tuple[str, bytes]]):
    """The network mirror's `index.json` or `VERSION.json` (hostname, namespace, type): current
    while the mirror reuses the body it was made from (its recent bodies); counted when sent."""

    def __init__(self, kind: str) -> None:
        self.counted = (kind, "ok")

    def targets(self, request: Request, subject: tuple[str, str, str]) -> tuple[Target, ...]:
        hostname, namespace, provider_type = subject
        own = world_of(request).catalog.server.hostname
        if hostname.lower() != own or not access.is_private(request, namespace):
            return (MIRROR,)
        # The hosted providers are the registry's own: the mirror opens no namespace that
        # providers.v1 would keep closed to the same token.
        return (MIRROR, Target("read", f"provider {own}/{namespace}/{provider_type}", namespace))

    def current(
        self, answer: KeptAnswer[tuple[str, bytes]], serving: Serving, world: World
    ) -> bool:
        key, body = answer.witness
        return world.side.recent_bodies.get(key) is body


DISCOVERY = _Discovery()
MODULE_VERSIONS = _ModuleVersions()
MODULE_DOWNLOAD = _ModuleDownload()
MODULE_ARCHIVE = _ModuleArchive()
PROVIDER_VERSIONS = _ProviderRoute()
PROVIDER_DOWNLOAD = _ProviderRoute()
MIRROR_INDEX = _MirrorRoute("index")
MIRROR_VERSION = _MirrorRoute("version")
