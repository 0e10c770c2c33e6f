"""A GitLab group's projects, subgroups included, from the v4 API (`GET /api/v4/groups/:id/
projects`): a token with `read_api` scope (a personal, group or project access token)."""

from __future__ import annotations

import ssl
import time
from collections.abc import Callable, Sequence
from urllib.parse import quote

import httpx

from gitreg.sources.forge_faults import ForgeSite
from gitreg.sources.forge_http import ForgeApi, OnForgeApi, endpoint, forge_url, token_headers
from gitreg.sources.forge_json import GitLabProject, Shaped
from gitreg.sources.found import FoundRepository

PER_PAGE = 100  # GitLab's most


class GitLabLister(OnForgeApi):
    def __init__(
        self,
        url: str,
        group: str,
        token: str | None,
        verify: ssl.SSLContext | bool = True,
        client: httpx.Client | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        root = forge_url(url)
        self.group = group.strip("/")
        site = ForgeSite("GitLab", str(root).rstrip("/"), f"group {self.group}")
        headers = token_headers("gitlab", token)
        self._api = ForgeApi(site, root, headers, token, verify, client, clock)
        # The group's path is its id, with its slashes encoded: `platform%2Fterraform`.
        path = f"/api/v4/groups/{quote(self.group, safe='')}/projects"
        self._first = endpoint(
            root,
            path,
            {
                "include_subgroups": "true",
                "with_shared": "false",  # projects of other groups shared with this one: not its
                "order_by": "id",  # new projects come last, so offset pages do not shift
                "sort": "asc",
                "per_page": str(PER_PAGE),
                "page": "1",
            },
        )

    def repositories(self) -> Sequence[FoundRepository]:
        # Past 10,000 projects GitLab's first page does not say how many there are (no
        # rel="last"): the pages are then asked a page number ahead.
        return self._api.collect(
            self._first, _PAGE, _projects, _project, ahead=_next_page, offset="page"
        )


_PAGE = Shaped(list[GitLabProject])


def _projects(page: list[GitLabProject]) -> list[GitLabProject]:
    return page


def _project(project: GitLabProject) -> FoundRepository:
    topics = project.topics
    if topics is None:  # before GitLab 14.0, topics were `tag_list`
        topics = project.tag_list or ()
    return FoundRepository(
        name=project.path,
        path=project.path_with_namespace,
        clone_https=project.http_url_to_repo,
        clone_ssh=project.ssh_url_to_repo or "",
        default_branch=project.default_branch or "",  # null for an empty project
        topics=topics,
        archived=bool(project.archived),
    )


def _next_page(response: httpx.Response) -> str | httpx.URL | None:
    """GitLab's Link rel=next (offset or keyset alike); else its X-Next-Page, "" on the last."""
    link = response.links.get("next", {}).get("url")
    if link:
        return link
    next_page = response.headers.get("x-next-page", "").strip()
    if next_page:
        return response.url.copy_set_param("page", next_page)
    return None
