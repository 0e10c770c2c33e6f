"""What web/ asks of auth, and all it asks: one protocol that both gates keep.

The gate of a catalog with an auth: section (`gate.py`) and the open gate of one without
(`open_gate.py`) both keep it, so that a handler asks the same questions of either and never
asks whether auth is on to decide itself."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol

from gitreg.auth.git_opened import Opens
from gitreg.auth.issued import Identity
from gitreg.auth.login import Login
from gitreg.auth.principal import Principal
from gitreg.auth.target import GitQuestion, Target
from gitreg.catalog.auth_settings import AuthSettings
from gitreg.catalog.model import Catalog
from gitreg.catalog.specs import ModuleSpec, ProviderSpec
from gitreg.git.location import RepoLocation


class Gatekeeper(Protocol):
    @property
    def on(self) -> bool:
        """Whether anything is closed: what the pages, /healthz, /readyz and /v1/status say."""
        ...

    @property
    def settings(self) -> AuthSettings | None:
        """The auth: section it was made for (a reload keeps a gate whose section is unchanged)."""
        ...

    @property
    def login(self) -> Login | None:
        """auth.login's sign-ins (`terraform login`, the sign-in page); None without one."""
        ...

    def is_public(self, namespace: str) -> bool: ...

    async def admit(
        self,
        authorization: str | None,
        target: Target,
        session: str | None = None,
        client: str = "",
    ) -> Principal | None:
        """The principal `target` is opened to (None: to no one in particular, and the answer is
        anyone's); Unauthorized, Forbidden, AuthUnavailable or TooManyRequests otherwise."""
        ...

    async def admit_all(
        self,
        authorization: str | None,
        targets: Sequence[Target],
        session: str | None = None,
        client: str = "",
    ) -> Principal | None:
        """`admit` to each of `targets` (a mirror answer's archives): the principal the first
        admits as; the first refusal otherwise."""
        ...

    def admitted_now(
        self, authorization: str, targets: Sequence[Target], client: str
    ) -> Principal | None:
        """`admit_all`'s common yes, without a coroutine: the principal of a token of
        registry.yaml's that opens every one of `targets` (none public); None when `admit_all`
        must be asked (TooManyRequests when the sender is slowed for its wrong tokens)."""
        ...

    async def admit_download(
        self,
        path: str,
        query: Mapping[str, str],
        authorization: str | None,
        target: Target,
        session: str | None = None,
        client: str = "",
    ) -> str | None:
        """Who a file an answer pointed at is opened to; None when it is anyone's."""
        ...

    async def reader(
        self, authorization: str | None, session: str | None = None, client: str = ""
    ) -> Principal | None:
        """Who asks, for what a list or a page shows them; None: no one in particular."""
        ...

    def readable(self, reader: Principal | None) -> Callable[[str], bool]:
        """Whether `reader` may read a namespace."""
        ...

    async def git_opened(
        self,
        reader: Principal | None,
        authorization: str | None,
        client: str,
        specs: Iterable[ModuleSpec | ProviderSpec],
    ) -> Opens | None:
        """Which of `specs`, that `reader` may not read, a Git server opens to its token."""
        ...

    def signed(self, path: str, principal: Principal | None, suffix: str = "") -> str:
        """`path` (then `suffix`) as handed to `principal`: signed when it must be."""
        ...

    def signed_all(
        self, urls: tuple[tuple[str, str], ...], principal: Principal
    ) -> tuple[str, ...]:
        """`signed` each of `urls` (a path and a suffix) for `principal`."""
        ...

    def git_url(self, repo: RepoLocation, git_url: str | None) -> str | None:
        """The URL a repository's Git server is asked at for a token; None: never asked."""
        ...

    def stand_in(self, catalog: Catalog, namespace: str) -> GitQuestion | None:
        """What is asked for something `namespace` does not hold; None: nothing."""
        ...

    async def sign_in(self, token: str, client: str = "") -> tuple[Principal, str] | None:
        """A pasted token's principal and the session cookie's value; None: no session."""
        ...

    async def login_session(self, principal: Principal, identity: Identity) -> str:
        """The session cookie's value for a person who signed in with the OpenID provider."""
        ...

    async def sign_out(self, value: str) -> None: ...

    def close(self) -> None: ...
