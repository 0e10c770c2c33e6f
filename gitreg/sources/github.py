"""A GitHub organization's repositories from the REST API (`GET /orgs/:org/repos`).

On github.com or a GitHub Enterprise Server (`api_url` `https://HOST/api/v3`), with a
fine-grained token with read access to the organization's repositories' metadata, or a classic
one with `repo` (private repositories) or none (public ones). See docs/sources.md."""

from __future__ import annotations

import ssl
import time
from collections.abc import Callable, Sequence
from urllib.parse import quote

import httpx

from gitreg.sources import github_json
from gitreg.sources.forge_faults import ForgeSite
from gitreg.sources.forge_http import ForgeApi, OnForgeApi, endpoint, forge_url, token_headers
from gitreg.sources.found import FoundRepository

PER_PAGE = 100  # GitHub's most


class GitHubLister(OnForgeApi):
    def __init__(
        self,
        org: str,
        token: str | None,
        api_url: str = "https://api.github.com",
        verify: ssl.SSLContext | bool = True,
        client: httpx.Client | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        root = forge_url(api_url)
        self.org = org
        site = ForgeSite("GitHub", str(root).rstrip("/"), f"organization {org}")
        headers = token_headers("github", token)
        self._api = ForgeApi(site, root, headers, token, verify, client, clock)
        path = f"/orgs/{quote(org, safe='')}/repos"
        self._first = endpoint(root, path, {"type": "all", "per_page": str(PER_PAGE)})

    def repositories(self) -> Sequence[FoundRepository]:
        return self._api.collect(
            self._first,
            github_json.PAGE,
            github_json.repositories,
            github_json.repository,
            ahead=_next_link,
        )


def _next_link(response: httpx.Response) -> str | None:
    return response.links.get("next", {}).get("url") or None
