"""The gate of a catalog without an auth: section: it admits every request as no one in
particular, reads every namespace as public, signs nothing and asks no Git server. A token sent
to it is ignored, not checked. It counts nothing (an open registry keeps no auth counts) and
holds nothing, so one serves every open catalog: a reload between two keeps the same gate."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from gitreg.auth.issued import Identity
from gitreg.auth.principal import Principal
from gitreg.auth.target import GitQuestion, Target
from gitreg.catalog.model import Catalog
from gitreg.catalog.specs import ModuleSpec, ProviderSpec
from gitreg.git.location import RepoLocation


class OpenGate:
    on = False
    settings = None
    login = None

    def is_public(self, namespace: str) -> bool:
        return True

    async def admit(
        self,
        authorization: str | None,
        target: Target,
        session: str | None = None,
        client: str = "",
    ) -> None:
        return None

    async def admit_all(
        self,
        authorization: str | None,
        targets: Sequence[Target],
        session: str | None = None,
        client: str = "",
    ) -> None:
        return None

    def admitted_now(self, authorization: str, targets: Sequence[Target], client: str) -> None:
        return None

    async def admit_download(
        self,
        path: str,
        query: Mapping[str, str],
        authorization: str | None,
        target: Target,
        session: str | None = None,
        client: str = "",
    ) -> None:
        return None

    async def reader(
        self, authorization: str | None, session: str | None = None, client: str = ""
    ) -> None:
        return None

    def readable(self, reader: Principal | None) -> Callable[[str], bool]:
        return _anyone

    async def git_opened(
        self,
        reader: Principal | None,
        authorization: str | None,
        client: str,
        specs: Iterable[ModuleSpec | ProviderSpec],
    ) -> None:
        return None

    def signed(self, path: str, principal: Principal | None, suffix: str = "") -> str:
        return path + suffix

    def signed_all(
        self, urls: tuple[tuple[str, str], ...], principal: Principal
    ) -> tuple[str, ...]:
        return tuple(path + suffix for path, suffix in urls)

    def git_url(self, repo: RepoLocation, git_url: str | None) -> None:
        return None

    def stand_in(self, catalog: Catalog, namespace: str) -> GitQuestion | None:
        return None

    async def sign_in(self, token: str, client: str = "") -> None:
        return None

    async def login_session(self, principal: Principal, identity: Identity) -> str:
        raise AssertionError("an open registry has no sign-in")  # login is None: never asked

    async def sign_out(self, value: str) -> None:
        pass

    def close(self) -> None:
        pass


def _anyone(namespace: str) -> bool:
    return True


OPEN_GATE = OpenGate()
