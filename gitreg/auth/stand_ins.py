"""auth.git for what does not exist: a missing module or provider is checked at a stand-in.

A module or provider that is not in a namespace is checked at a stand-in repository, so that it
costs the same Git request and answers the same status (403, or 503 when the Git server is down)
as one that exists. The stand-in of a namespace is the first of its repositories, in the order
of their addresses; a namespace the catalog does not hold has the catalog's first, whose yes
opens nothing. A namespace whose repositories are never asked (none over https) asks nothing for
a missing one either, as for those it holds."""

from __future__ import annotations

from dataclasses import dataclass

from gitreg.auth.git_access import check_url
from gitreg.auth.target import GitQuestion
from gitreg.catalog.auth_settings import GitCheck
from gitreg.catalog.model import Catalog


@dataclass(frozen=True)
class StandIns:
    by_namespace: dict[str, str | None]  # lowercase namespace → the URL asked (None: never)
    anywhere: str | None  # for a namespace the catalog does not hold

    @classmethod
    def of(cls, catalog: Catalog, settings: GitCheck) -> StandIns:
        asked: list[tuple[tuple[str, ...], str]] = []
        by_namespace: dict[str, str | None] = {}
        for module in catalog.modules:
            by_namespace[module.address.key[0]] = None
            url = check_url(settings, module.repo, module.git_url)
            if url is not None:
                asked.append(((*module.address.key, ""), url))
        for provider in catalog.providers:
            by_namespace[provider.key[0]] = None
            url = check_url(settings, provider.repo, None) if provider.repo else None
            if url is not None:
                asked.append(((*provider.key, "provider"), url))
        for where, url in sorted(asked, reverse=True):  # the first in order is written last
            by_namespace[where[0]] = url
        return cls(by_namespace, min(asked)[1] if asked else None)

    def question(self, namespace: str) -> GitQuestion | None:
        """What is asked for something `namespace` does not hold: a yes opens it only at a
        stand-in of its own namespace."""
        key = namespace.lower()
        if key in self.by_namespace:
            own = self.by_namespace[key]
            return GitQuestion(own) if own is not None else None
        return GitQuestion(self.anywhere, opens=False) if self.anywhere is not None else None
