"""A provider's releases as its forge lists them, each with its files' names and download places.

They come from GitLab's `GET /api/v4/projects/:id/releases` (its `assets.links`), Gitea's and
Forgejo's `GET /api/v1/repos/:owner/:repo/releases` and GitHub's `GET /repos/:owner/:repo/
releases` (their `assets`); and a file of the repository at a release's tag (GitLab's
`repository/files/:path/raw`, Gitea's `raw/:path`, GitHub's `contents/:path`, each `?ref=`).
See docs/providers.md."""

from __future__ import annotations

import io
import ssl
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import BinaryIO
from urllib.parse import quote

import httpx

from gitreg.catalog.specs import ForgeReleases
from gitreg.sources.forge_faults import ForgeSite
from gitreg.sources.forge_http import ForgeApi, OnForgeApi, endpoint, forge_url, token_headers
from gitreg.sources.forge_json import Item, Malformed, items, member, optional_text, text
from gitreg.sources.found import SourceUnavailable

PER_PAGE = 50
FILE_DEADLINE = 60.0  # seconds a repository's small file (a tag's .gitreg.yaml) may take
# Where GitHub sends a release asset's download: its storage, reached without the token.
_GITHUB_STORAGE = frozenset(
    {"objects.githubusercontent.com", "release-assets.githubusercontent.com"}
)
_KINDS = {"gitlab": "GitLab", "gitea": "Gitea", "github": "GitHub"}


@dataclass(frozen=True)
class ReleaseAsset:
    name: str
    url: str  # where the forge says it is downloaded


@dataclass(frozen=True)
class ListedRelease:
    tag: str
    assets: tuple[ReleaseAsset, ...]
    # What the forge says of the release and its files that an upload changes (ids, sizes,
    # times, URLs): a refused release listed otherwise is fetched again.
    stamp: tuple[str, ...] = ()


class ReleaseList(OnForgeApi):
    """One provider's releases on its forge, through the forge listers' HTTP client: the token
    in a header, pages and downloads kept on the forge's own address, faults naming it."""

    def __init__(
        self,
        releases: ForgeReleases,
        provider: str,
        verify: ssl.SSLContext | bool = True,
        client: httpx.Client | None = None,
    ) -> None:
        self.releases = releases
        root = forge_url(releases.url)
        self.site = ForgeSite(
            _KINDS[releases.kind],
            str(root).rstrip("/"),
            f"releases of {releases.project} (provider {provider})",
        )
        token = releases.token.value() if releases.token else None
        project = quote(releases.project, safe="" if releases.kind == "gitlab" else "/")
        if releases.kind == "gitlab":
            self._repository = f"/api/v4/projects/{project}"
        elif releases.kind == "gitea":
            self._repository = f"/api/v1/repos/{project}"
        else:
            self._repository = f"/repos/{project}"
        headers = token_headers(releases.kind, token)
        size = "limit" if releases.kind == "gitea" else "per_page"
        path = f"{self._repository}/releases"
        self._root = root
        self._first = endpoint(root, path, {"page": "1", size: str(PER_PAGE)})
        self._api = ForgeApi(self.site, root, headers, token, verify, client)

    def listed(self) -> list[ListedRelease]:
        """Every release, drafts left out. Raises SourceUnavailable or SourceRefused."""
        found = self._api.every_item(self._first, _releases, _following)
        read = self._read_gitlab if self.releases.kind == "gitlab" else self._read_assets
        return [r for item in found if (r := self._api_read(read, item)) is not None]

    def download(self, asset: ReleaseAsset, into: BinaryIO, most: int, deadline: float) -> None:
        """An asset's bytes, from the forge's own address (GitHub's API asks for them with
        `Accept: application/octet-stream`, and sends them from its storage)."""
        url = httpx.URL(asset.url)
        if self.releases.kind == "github":
            headers = {"Accept": "application/octet-stream"}
            hosts = _GITHUB_STORAGE if url.host == "api.github.com" else frozenset()
            self._api.download(url, into, most, deadline, headers, hosts)
        else:
            self._api.download(url, into, most, deadline)

    def file_at(self, tag: str, name: str, most: int) -> bytes | None:
        """The repository's file `name` (at its root) at `tag`: None when the forge says it
        has none there. Raises SourceUnavailable or SourceRefused, and SourceRefused when it is
        over `most` bytes."""
        kind = self.releases.kind
        if kind == "gitlab":
            path = f"{self._repository}/repository/files/{quote(name, safe='')}/raw"
        elif kind == "gitea":
            path = f"{self._repository}/raw/{quote(name)}"
        else:
            path = f"{self._repository}/contents/{quote(name)}"
        url = endpoint(self._root, path, {"ref": tag})
        # GitHub's contents API answers the file's bytes, not JSON, when asked for them so (the
        # media type GitHub Enterprise Server documents before 3.9 too; `raw+json` after it).
        headers = {"Accept": "application/vnd.github.raw"} if kind == "github" else {}
        into = io.BytesIO()
        found = self._api.download(url, into, most, FILE_DEADLINE, headers, absent_ok=True)
        return into.getvalue() if found else None

    def _api_read(self, read: _Reader, item: Item) -> ListedRelease | None:
        try:
            return read(item)
        except Malformed as exc:
            raise SourceUnavailable(f"{self.site}: {exc}") from None

    def _read_gitlab(self, item: Item) -> ListedRelease | None:
        links = items(member(member(item, "assets"), "links"), "link")
        assets = []
        for link in links:
            url = optional_text(link, "direct_asset_url") or text(link, "url")
            assets.append(ReleaseAsset(text(link, "name"), url))
        if item.get("upcoming_release") is True:
            return None
        return ListedRelease(text(item, "tag_name"), tuple(assets), _stamp(item, links))

    def _read_assets(self, item: Item) -> ListedRelease | None:
        if item.get("draft") is True:
            return None
        key = "url" if self.releases.kind == "github" else "browser_download_url"
        files = items(member(item, "assets"), "asset")
        assets = tuple(ReleaseAsset(text(a, "name"), text(a, key)) for a in files)
        return ListedRelease(text(item, "tag_name"), assets, _stamp(item, files))


_Reader = Callable[[Item], ListedRelease | None]
# The fields of a release and of its files, on any of the three forges, that tell an upload.
_RELEASE_STAMPED = ("id", "updated_at", "published_at", "released_at")
_FILE_STAMPED = ("id", "name", "size", "uuid", "updated_at", "created_at", "url")


def _stamp(release: Item, files: Sequence[Item]) -> tuple[str, ...]:
    said = [repr(release.get(k)) for k in _RELEASE_STAMPED]
    said += ["|".join(repr(f.get(k)) for k in _FILE_STAMPED) for f in files]
    return tuple(said)


def _releases(body: object) -> Sequence[Item]:
    return items(body, "release")


def _following(response: httpx.Response, body: object, page: Sequence[Item]) -> str | None:
    """The Link rel=next the three forges send; else GitLab's X-Next-Page; else the end."""
    link = response.links.get("next", {}).get("url")
    if link:
        return str(link)
    next_page = response.headers.get("x-next-page", "").strip()
    if next_page:
        return str(response.url.copy_set_param("page", next_page))
    return None
