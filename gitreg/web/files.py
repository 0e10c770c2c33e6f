"""Zips served from disk. The index that names a file can outlive it by one rescan (a release
folder removed, a cached package dropped as corrupt); Starlette would only notice while sending,
as a 500. Checked here, it is what it is: not found."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from starlette.responses import FileResponse

from gitreg.errors import NotFound


def zip_response(path: Path, gone: str, headers: Mapping[str, str] | None = None) -> FileResponse:
    if not path.is_file():
        raise NotFound(gone)
    return FileResponse(path, media_type="application/zip", headers=headers)


def etag_matches(if_none_match: str, etag: str) -> bool:
    """Whether an If-None-Match header names `etag` (weak comparison, as RFC 9110 asks for it),
    or is `*`, which any existing representation matches."""
    for candidate in if_none_match.split(","):
        candidate = candidate.strip()
        if candidate == "*" or candidate.removeprefix("W/") == etag:
            return True
    return False
