"""Where people read a repository on the web, worked out from the URL gitreg fetches it from."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from gitreg.git.location import RepoLocation, is_scp_like

_SCP = re.compile(r"(?:[^@/:]+@)?(?P<host>[^/:]+):(?P<path>[^/].*)")
_HOST = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?")
_PATH = re.compile(r"[A-Za-z0-9._~/+-]+")


def web_url(location: RepoLocation) -> str | None:
    """`https://host/owner/repo` for an https or http URL (without `.git` or a user name), and
    for an ssh one on the default port, since forges serve both from one host and path; None
    when it cannot be told (a local path, `git://`, an ssh port of its own, odd characters)."""
    if location.transport in ("local", "git"):
        return None
    if location.transport == "ssh" and is_scp_like(location.url):
        match = _SCP.fullmatch(location.url)
        if match is None:
            return None
        scheme, host, port, path = "https", match["host"], None, match["path"]
    else:
        parts = urlsplit(location.url)
        try:
            port = parts.port
        except ValueError:
            return None
        scheme = "https" if location.transport == "ssh" else location.transport
        host, path = parts.hostname or "", parts.path
        if location.transport == "ssh" and port not in (None, 22):
            return None  # a Git server on its own ssh port says nothing of its web port
        if location.transport == "ssh":
            port = None
    path = path.strip("/").removesuffix(".git").strip("/")
    if not _HOST.fullmatch(host) or not path or not _PATH.fullmatch(path) or ".." in path:
        return None
    netloc = f"{host.lower()}:{port}" if port else host.lower()
    return f"{scheme}://{netloc}/{path}"
