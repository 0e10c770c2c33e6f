"""A Bitbucket Data Center project's repositories from its REST API 1.0 (`GET /rest/api/1.0/
projects/:key/repos`): an HTTP access token with PROJECT_READ (or REPO_READ on each). Bitbucket
has no topics; the default branch is left to the clone's HEAD (one call a repository to ask
otherwise)."""

from __future__ import annotations

import ssl
import time
from collections.abc import Callable, Sequence
from urllib.parse import quote

import httpx

from gitreg.sources.forge_faults import ForgeSite
from gitreg.sources.forge_http import ForgeApi, OnForgeApi, endpoint, forge_url, token_headers
from gitreg.sources.forge_json import (
    BitbucketPage,
    BitbucketRepository,
    Malformed,
    Shaped,
)
from gitreg.sources.found import FoundRepository

# Bitbucket's most a page (its `page.max.repositories`, 1,000 unless an administrator set it
# lower: the answer's nextPageStart then says so, and is followed).
LIMIT = 1000


class BitbucketLister(OnForgeApi):
    def __init__(
        self,
        url: str,
        project: str,
        token: str | None,
        verify: ssl.SSLContext | bool = True,
        client: httpx.Client | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        root = forge_url(url)
        self.project = project
        site = ForgeSite("Bitbucket", str(root).rstrip("/"), f"project {project}")
        headers = token_headers("bitbucket", token)
        self._api = ForgeApi(site, root, headers, token, verify, client, clock)
        key = quote(project, safe="")
        self._first = endpoint(
            root, f"/rest/api/1.0/projects/{key}/repos", {"start": "0", "limit": str(LIMIT)}
        )

    def repositories(self) -> Sequence[FoundRepository]:
        return self._api.collect(
            self._first, _PAGE, _values, self._repository, _following, offset="start"
        )

    def _repository(self, listed: BitbucketRepository) -> FoundRepository:
        key = (listed.project.key if listed.project else None) or self.project
        https = ssh = ""
        for link in listed.links.clone if listed.links else ():
            if link.name == "http":
                https = link.href
            elif link.name == "ssh":
                ssh = link.href
        return FoundRepository(
            name=listed.slug,
            path=f"{key}/{listed.slug}",
            clone_https=https,
            clone_ssh=ssh,
            default_branch="",  # the clone's HEAD
            archived=bool(listed.archived),  # Data Center 8.0 and later
        )


_PAGE = Shaped(BitbucketPage)


def _values(page: BitbucketPage) -> list[BitbucketRepository]:
    return page.values


def _following(
    response: httpx.Response, page: BitbucketPage, listed: Sequence[BitbucketRepository]
) -> httpx.URL | None:
    if page.isLastPage:
        return None
    if page.nextPageStart is None:
        raise Malformed("a page that is not the last without nextPageStart")
    return response.url.copy_set_param("start", str(page.nextPageStart))
