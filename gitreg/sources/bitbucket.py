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
    Item,
    Malformed,
    PageShape,
    flag,
    items,
    member,
    optional_text,
    text,
)
from gitreg.sources.found import FoundRepository

LIMIT = 100


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
        return self._api.collect(self._first, _SHAPE, _values, self._repository, _following)

    def _repository(self, item: Item) -> FoundRepository:
        slug = text(item, "slug")
        key = self.project
        if isinstance(owner := item.get("project"), dict):
            key = optional_text(owner, "key") or key
        clone = _clone_links(item)
        return FoundRepository(
            name=slug,
            path=f"{key}/{slug}",
            clone_https=clone.get("http", ""),
            clone_ssh=clone.get("ssh", ""),
            default_branch="",  # the clone's HEAD
            archived=flag(item, "archived"),  # Data Center 8.0 and later
        )


# What a page is read for: its repositories' fields that _repository reads, and its paging.
_SHAPE = PageShape(
    "BitbucketRepository",
    ("slug", "project", "links", "archived"),
    page=("values", "isLastPage", "nextPageStart"),
    within="values",
)


def _values(body: object) -> Sequence[Item]:
    return items(member(body, "values"), "repository")


def _clone_links(item: Item) -> dict[str, str]:
    links = item.get("links") or {}
    clone = links.get("clone", []) if isinstance(links, dict) else None
    return {text(link, "name"): text(link, "href") for link in items(clone, "clone link")}


def _following(response: httpx.Response, body: object, page: Sequence[Item]) -> httpx.URL | None:
    last = member(body, "isLastPage")
    if last is True:
        return None
    start = member(body, "nextPageStart")
    if last is not False or not isinstance(start, int) or isinstance(start, bool):
        raise Malformed("a page without isLastPage, or not the last without nextPageStart")
    return response.url.copy_set_param("start", str(start))
