"""What each forge's API documents for a release, as JSON: a GitLab v4 release (its files in
`assets.links`), a Gitea/Forgejo v1 and a GitHub REST release (their files in `assets`). The
stand-in forges (tests/support/forges.py) list these and serve their files, and the files of
the repository at a release's tag, as each forge's API answers a file at a `ref`."""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from tests.support.forge_shapes import ForgeKind


@dataclass(frozen=True)
class ForgeRelease:
    """A release a stand-in forge holds for a project (`group/name`, `owner/name`): its tag and
    files; `elsewhere` lists files whose URL the forge gives on another address."""

    project: str
    tag: str
    files: tuple[tuple[str, bytes], ...]
    elsewhere: dict[str, str] = field(default_factory=dict, compare=False, hash=False)
    draft: bool = False
    # Files at the root of the repository at the tag (its `.gitreg.yaml`, say): name → bytes.
    tree: tuple[tuple[str, bytes], ...] = ()

    @classmethod
    def of_folder(cls, project: str, tag: str, folder: Path) -> ForgeRelease:
        """The release of the files goreleaser wrote into `folder` (write_release's)."""
        files = tuple((p.name, p.read_bytes()) for p in sorted(folder.iterdir()) if p.is_file())
        return cls(project, tag, files)

    def file(self, name: str) -> bytes | None:
        return next((data for n, data in self.files if n == name), None)


def download_path(release: ForgeRelease, name: str) -> str:
    """Where the stand-in serves one of a release's files (GitLab's and Gitea's download URL)."""
    return f"/downloads/{quote(release.project, safe='/')}/{quote(release.tag)}/{quote(name)}"


def asset_id(release: ForgeRelease, name: str) -> int:
    """A GitHub asset's id: stable for a release's file."""
    return sum(ord(c) for c in f"{release.project}{release.tag}") * 100 + [
        n for n, _ in release.files
    ].index(name)


def release_json(kind: ForgeKind, release: ForgeRelease, number: int, url: str) -> bytes:
    def where(name: str) -> str:
        return release.elsewhere.get(name) or url + download_path(release, name)

    if kind == "gitlab":
        links = [
            {
                "id": number * 100 + i,
                "name": name,
                "url": where(name),
                "direct_asset_url": where(name),
                "link_type": "package",
            }
            for i, (name, _) in enumerate(release.files)
        ]
        body: dict[str, object] = {
            "name": release.tag,
            "tag_name": release.tag,
            "description": "",
            "created_at": "2026-01-02T03:04:05Z",
            "released_at": "2026-01-02T03:04:05Z",
            "upcoming_release": False,
            "assets": {"count": len(links), "sources": [], "links": links},
        }
    elif kind == "gitea":
        body = {
            "id": number,
            "tag_name": release.tag,
            "name": release.tag,
            "draft": release.draft,
            "prerelease": False,
            "assets": [
                {
                    "id": number * 100 + i,
                    "name": name,
                    "size": len(data),
                    "download_count": 0,
                    "uuid": f"{number:08x}-{i:04x}",
                    "browser_download_url": where(name),
                }
                for i, (name, data) in enumerate(release.files)
            ],
        }
    else:
        body = {
            "id": number,
            "tag_name": release.tag,
            "name": release.tag,
            "draft": release.draft,
            "prerelease": False,
            "assets": [
                {
                    "id": asset_id(release, name),
                    "name": name,
                    "size": len(data),
                    "content_type": "application/octet-stream",
                    "state": "uploaded",
                    "url": release.elsewhere.get(name)
                    or f"{url}/repos/{release.project}/releases/assets/{asset_id(release, name)}",
                    "browser_download_url": where(name),
                }
                for name, data in release.files
            ],
        }
    return json.dumps(body).encode()


# Where each forge's API answers a repository's file at a ref: before and after the file's name.
_FILE_ROUTES = {
    "gitlab": ("/api/v4/projects/", "/repository/files/", "/raw"),
    "gitea": ("/api/v1/repos/", "/raw/", ""),
    "github": ("/repos/", "/contents/", ""),
}


def repository_file(
    kind: ForgeKind, releases: Sequence[ForgeRelease], path: str, ref: str, accept: str
) -> tuple[int, bytes, dict[str, str]] | None:
    """A file of a project at the tag `ref`, as the forge answers it (GitHub's contents API: its
    bytes only when asked for the raw media type, else JSON with them in base64); a 404 when the
    tag's tree has none; None when `path` (unquoted) asks for no file."""
    if kind not in _FILE_ROUTES:
        return None
    before, middle, after = _FILE_ROUTES[kind]
    if not path.startswith(before) or middle not in path or not path.endswith(after):
        return None
    project, _, name = path[len(before) : len(path) - len(after)].partition(middle)
    found = next(
        (
            data
            for r in releases
            if (r.project, r.tag) == (project, ref)
            for n, data in r.tree
            if n == name
        ),
        None,
    )
    if found is None:
        return 404, b'{"message": "404 File Not Found"}', {"Content-Type": "application/json"}
    if kind == "github" and accept not in (
        "application/vnd.github.raw+json",
        "application/vnd.github.raw",
    ):
        content = base64.b64encode(found).decode()
        body = {"type": "file", "name": name, "encoding": "base64", "content": content}
        return 200, json.dumps(body).encode(), {"Content-Type": "application/json"}
    return 200, found, {"Content-Type": "text/plain; charset=utf-8"}
