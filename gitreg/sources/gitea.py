"""A Gitea or Forgejo organization's repositories from the v1 API (`GET /api/v1/orgs/:org/
repos`): a token with `read:organization` and `read:repository` scopes."""

from __future__ import annotations

import ssl
import time
from collections.abc import Callable, Sequence
from urllib.parse import quote

import httpx

from gitreg.sources import github_json
from gitreg.sources.forge_faults import ForgeSite
from gitreg.sources.forge_http import (
    BODY,
    ForgeApi,
    OnForgeApi,
    Unsaid,
    endpoint,
    forge_url,
    token_headers,
)
from gitreg.sources.found import FoundRepository

LIMIT = 50  # Gitea's default MAX_RESPONSE_ITEMS; a server set lower answers fewer a page


class GiteaLister(OnForgeApi):
    def __init__(
        self,
        url: str,
        org: str,
        token: str | None,
        verify: ssl.SSLContext | bool = True,
        client: httpx.Client | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        root = forge_url(url)
        self.org = org
        site = ForgeSite("Gitea", str(root).rstrip("/"), f"organization {org}")
        headers = token_headers("gitea", token)
        self._api = ForgeApi(site, root, headers, token, verify, client, clock)
        path = f"/api/v1/orgs/{quote(org, safe='')}/repos"
        self._first = endpoint(root, path, {"page": "1", "limit": str(LIMIT)})

    def repositories(self) -> Sequence[FoundRepository]:
        return self._api.collect(
            self._first,
            github_json.PAGE,
            github_json.repositories,
            github_json.repository,
            _Following(),
            _linked,
        )


def _linked(response: httpx.Response) -> str | Unsaid | None:
    """Gitea's Link rel=next, when it sends a Link header."""
    if "link" in response.headers:
        return response.links.get("next", {}).get("url") or None
    return BODY


class _Following:
    """Without a Link header, the next page number until a page is empty or shorter than the
    longest yet: the server may cap `limit` below what was asked, so a page of fewer than LIMIT
    is not the last by itself."""

    def __init__(self) -> None:
        self.longest = 0

    def __call__(
        self, response: httpx.Response, body: object, page: Sequence[object]
    ) -> str | httpx.URL | None:
        if not page or len(page) < self.longest:
            return None
        self.longest = len(page)
        number = int(response.url.params.get("page", "1")) + 1
        return response.url.copy_set_param("page", str(number))
