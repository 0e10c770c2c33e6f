"""Where a module's repository can be read in a browser: its https URL (without `.git` or a user
name), and links into it at a commit for the README's relative links and images."""

from __future__ import annotations

import posixpath
from urllib.parse import quote, urlsplit

from gitreg.catalog.model import ModuleSpec


def web_url(spec: ModuleSpec) -> str | None:
    """The repository's page: its https URL (or the module's https git_url), else None. A local
    path, ssh or git:// URL names no page a browser can open."""
    for url in (spec.git_url, spec.repo.url if spec.repo.transport == "https" else None):
        if not url:
            continue
        url = url.removeprefix("git::")
        parts = urlsplit(url)
        if parts.scheme != "https" or not parts.hostname or parts.query:
            continue
        host = parts.hostname + (f":{parts.port}" if parts.port else "")
        path = parts.path.rstrip("/").removesuffix(".git")
        return f"https://{host}{path}"
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
