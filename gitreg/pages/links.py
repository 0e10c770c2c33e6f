"""Where a module's repository can be read in a browser (its https page), and links into it at a
commit for the README's relative links and images."""

from __future__ import annotations

import posixpath
from urllib.parse import quote, urlsplit

from gitreg.catalog.specs import ModuleSpec
from gitreg.directory.repository_url import web_url as repository_web_url
from gitreg.git.location import RepoLocation


def web_url(spec: ModuleSpec) -> str | None:
    """The repository's page when a browser can open it over https: from the URL gitreg
    fetches, else from the module's `git_url` (a module fetched from a local path may name
    where people clone it)."""
    candidates = [spec.repo]
    if spec.git_url and spec.git_url.removeprefix("git::").startswith("https://"):
        candidates.append(RepoLocation(spec.git_url.removeprefix("git::"), "https"))
    for location in candidates:
        url = repository_web_url(location)
        if url is not None and url.startswith("https://"):
            return url
    return None


class RepositoryLinks:
    """Links relative to a README in `folder` at `commit`, as the forge at `web` shows them:
    GitHub and Gitea spell a file `/blob/COMMIT/PATH` (`/raw/` for its bytes), GitLab
    `/-/blob/`. Other forges, or a path leaving the repository, get no link."""

    def __init__(self, web: str | None, commit: str, folder: str) -> None:
        self.web, self.commit, self.folder = web, commit, folder
        host = urlsplit(web).hostname or "" if web else ""
        self.prefix = "/-" if "gitlab" in host else ""
        self.known = bool(web) and any(f in host for f in ("github", "gitlab", "gitea", "codeberg"))

    def link(self, relative: str) -> str | None:
        return self._at("blob", relative)

    def image(self, relative: str) -> str | None:
        return self._at("raw", relative)

    def _at(self, kind: str, relative: str) -> str | None:
        if not self.known or relative.startswith("/"):
            return None
        path, _, fragment = relative.partition("#")
        path = path.partition("?")[0]
        joined = posixpath.normpath(posixpath.join(self.folder or ".", path))
        if joined == ".." or joined.startswith("../"):
            return None
        target = "" if joined == "." else "/" + quote(joined)
        anchor = f"#{quote(fragment)}" if fragment else ""
        return f"{self.web}{self.prefix}/{kind}/{self.commit}{target}{anchor}"
