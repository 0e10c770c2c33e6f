"""The hot routes' answers kept for the world served, by path, each with its route's definition.
A handler keeps what it made (`hot_routes.Admission.keep`); `kept_routes.py` sends it again,
once its route says it is still current and the gate admits the reader, and a swap lets them
all go. `HotRoute` is what a kept answer asks of its route; the routes are in `hot_routes.py`.
Which cache serves what: docs/how-it-works/internals.md."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Scope

from gitreg.auth.gatekeeper import Gatekeeper
from gitreg.auth.principal import ANONYMOUS, GIT, Principal
from gitreg.auth.target import Target
from gitreg.freshness.fresh_reads import FreshReads
from gitreg.state.download_counts import Kind
from gitreg.usage.installed import InstalledBefore
from gitreg.web.held_archives import HeldArchives
from gitreg.web.signed_answers import Headers, SignedUrls
from gitreg.world.world import World

# Answers kept for one world: enough for every route a busy registry is asked in a while; past
# it, the others are made per request until the next swap (paths are the client's to vary).
MOST_KEPT = 20_000

S = TypeVar("S")  # what a request of a route names: a module's address, a provider's, nothing
W = TypeVar("W")  # what a kept answer's route checks it against (`HotRoute.current`)
Made = tuple[Sequence[tuple[bytes, bytes]], bytes]


class Serving(Protocol):
    """What a route reads of the app's state (`RegistryState`) to judge or make a kept answer."""

    @property
    def fresh_reads(self) -> FreshReads: ...

    @property
    def held_archives(self) -> HeldArchives: ...

    @property
    def installed(self) -> InstalledBefore: ...


class HotRoute(Generic[S, W]):
    """One hot route, defined once for its handler and for the answers kept of it: what the gate
    is asked for the `S` a request names, whether a kept answer still says what the handler
    would (by its witness, a `W`), and how it is made for another reader. By default: asked
    nothing, always current, the same bytes for everyone the gate admits."""

    counted: tuple[str, str] | None = None  # the mirror's (kind, outcome) of each answer sent

    def targets(self, request: Request, subject: S) -> tuple[Target, ...]:
        """What the gate is asked, in order: by the handler, and again before a kept answer."""
        return ()

    def current(self, answer: KeptAnswer[W], serving: Serving, world: World) -> bool:
        """Whether a kept answer still says what its handler would say in `world`."""
        return True

    def kept_parts(self, response: Response) -> tuple[Headers, bytes]:
        """What is kept of the handler's answer: its headers and body."""
        return tuple(response.raw_headers), bytes(response.body)

    def made(
        self,
        answer: KeptAnswer[W],
        scope: Scope,
        serving: Serving,
        gate: Gatekeeper,
        principal: Principal | None,
    ) -> Made | None:
        """The kept answer for `principal`, whom the gate admitted: its handler's bytes, or its
        URLs signed anew for them; None: its handler makes this one."""
        if answer.by_installs is not None:
            return answer.by_installs.made_for(serving.installed, principal)
        if answer.signed is None:
            return answer.headers, answer.body
        if principal is None:  # never so: kept only where the gate names who asks
            return None
        return answer.signed.made_for(gate, principal)


@dataclass(frozen=True, slots=True)
class ByInstalls:
    """A kept `versions` answer of a module or provider with revoked versions: made for each set
    of them its reader never installed (`make`), each made once. `anonymous`: the set left out
    for readers the download counts cannot tell apart (`downloads.revoked_for_anonymous`)."""

    kind: Kind
    address: str
    revoked: frozenset[str]
    anonymous: frozenset[str]
    make: Callable[[frozenset[str]], Made]
    made: dict[frozenset[str], Made] = field(default_factory=dict)

    def made_for(self, installed: InstalledBefore, principal: Principal | None) -> Made | None:
        """The answer for `principal`; None when the counts must be asked (its handler does)."""
        if principal is None or principal is ANONYMOUS or principal is GIT:
            withheld = self.anonymous
        else:
            left = []
            for version in self.revoked:
                known = installed.known(self.kind, self.address, version, principal.name)
                if known is None:
                    return None
                if not known:
                    left.append(version)
            withheld = frozenset(left)
        answer = self.made.get(withheld)
        if answer is None:
            answer = self.made[withheld] = self.make(withheld)
        return answer


@dataclass(frozen=True, slots=True)
class KeptAnswer(Generic[W]):
    """A 200 its handler made, with its route, the gate's questions the handler asked, and what
    the route checks it against; with `signed`, what each reader's answer is made from (`body`
    and `headers` are then not sent); `download`: the install each one sent counts, if any;
    `by_installs`: what each reader's answer is made from when it depends on their installs."""

    route: HotRoute[Any, W]
    matched: object  # the Starlette route the handler was found by, for the access log
    targets: tuple[Target, ...]
    witness: W
    headers: Headers
    body: bytes
    signed: SignedUrls | None = None
    download: tuple[Kind, str, str] | None = None
    by_installs: ByInstalls | None = None


class KeptAnswers:
    """The answers kept for one world, replaced whole when another world is served."""

    def __init__(self) -> None:
        self.kept: tuple[World | None, dict[str, KeptAnswer[Any]]] = (None, {})

    def __len__(self) -> int:
        """How many answers are kept (for the world served, or the last one kept for)."""
        return len(self.kept[1])

    def get(self, world: World, path: str) -> KeptAnswer[Any] | None:
        """What is kept for `path` in `world`, the world served now; what was kept for another
        is let go (it holds that world)."""
        kept_for, answers = self.kept
        if kept_for is world:
            return answers.get(path)
        if kept_for is not None:
            self.kept = (None, {})
        return None

    def keep(self, world: World, served: World, path: str, answer: KeptAnswer[Any]) -> None:
        """Kept when `world`, the one the answer was made from, is still the one `served`."""
        if world is not served:
            return
        kept_for, answers = self.kept
        if kept_for is not world:
            answers = {}
            self.kept = (world, answers)
        if len(answers) < MOST_KEPT:
            answers[path] = answer
