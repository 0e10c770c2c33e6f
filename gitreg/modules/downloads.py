"""Where a client downloads a release from: a `git::` source or gitreg's own archive URL."""

from __future__ import annotations

from urllib.parse import quote

from gitreg.catalog.specs import ModuleSpec
from gitreg.modules.archive_cache import ArchiveKey
from gitreg.modules.resolve import Release

ARCHIVES_PREFIX = "/v1/archives"


def archive_key(spec: ModuleSpec, commit: str) -> ArchiveKey:
    """Whole-tree archives are shared by every module of a repository; folder ones are not."""
    return ArchiveKey(commit, spec.path if spec.archive == "folder" else "")


def download_location(spec: ModuleSpec, release: Release, digest: str = "") -> str:
    """Where clients download `release`; an archive's ends in `?checksum=sha256:<digest>` when
    `digest` is given, after its `//folder` (the one form go-getter splits), which the client
    verifies before it unpacks anything."""
    if spec.download == "git":
        base = spec.git_url or spec.repo.clone_url
        subdir = f"//{spec.path}" if spec.path else ""
        separator = "&" if "?" in base else "?"
        # `+` in build metadata would read as a space in a query string: encode it.
        return f"git::{base}{subdir}{separator}ref={quote(release.tag, safe='/')}"
    key = archive_key(spec, release.commit)
    address = "/".join(
        quote(part, safe="")
        for part in (spec.address.namespace, spec.address.name, spec.address.system)
    )
    subdir = f"//{spec.path}" if spec.path and not key.folder else ""
    checksum = f"?{checksum_query(digest)}" if digest else ""
    return f"{ARCHIVES_PREFIX}/{address}/{key.name}.tar.gz{subdir}{checksum}"


def checksum_query(digest: str) -> str:
    """The query parameter go-getter verifies an archive's SHA-256 (hex) with."""
    return f"checksum=sha256:{digest}"
