"""Where a client downloads a release from: a `git::` source or gitreg's own archive URL.

A `git::` source names the release's commit, never its tag: a tag moved at the Git server
cannot change what a client clones (go-getter checks out `ref` after a full clone).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from gitreg.catalog.specs import ModuleSpec
from gitreg.modules.archive_cache import ArchiveCache, ArchiveKey
from gitreg.modules.resolve import Release
from gitreg.state.ledger import TagLedger

ARCHIVES_PREFIX = "/v1/archives"

# go-getter reads these from a git:: source's query: `ref` is gitreg's to give, and `depth`
# makes it clone `--branch <ref>`, which a commit cannot be.
_GETTER_OWNED = frozenset(("ref", "depth"))


def git_location(url: str, folder: str, commit: str) -> str:
    """The `git::` source of `commit`: `//folder` before the query (go-getter looks for it only
    there), the URL's own parameters kept but `ref` and `depth`, and `ref` the full commit."""
    base, _, query = url.partition("?")
    kept = [p for p in query.split("&") if p and p.partition("=")[0] not in _GETTER_OWNED]
    subdir = f"//{folder}" if folder else ""
    return f"git::{base}{subdir}?{'&'.join([*kept, f'ref={commit}'])}"


def archive_key(spec: ModuleSpec, commit: str) -> ArchiveKey:
    """Whole-tree archives are shared by every module of a repository; folder ones are not."""
    return ArchiveKey(commit, spec.path if spec.archive == "folder" else "")


async def archive_digest(
    archives: ArchiveCache, spec: ModuleSpec, clone_path: Path, commit: str, ledger: TagLedger
) -> str:
    """The SHA-256 `ledger` records for the archive of `commit` ("" when it has none: git),
    once this replica's archive is known to match it: a cold first ask waits for its build."""
    if spec.download != "archive":
        return ""
    key = archive_key(spec, commit)
    known = archives.known_digest(key)
    if known is not None:
        return known
    return await archives.digest(clone_path, key, ledger)


def download_location(spec: ModuleSpec, release: Release, digest: str = "") -> str:
    """Where clients download `release`; an archive's ends in `?checksum=sha256:<digest>` when
    `digest` is given, after its `//folder` (the one form go-getter splits), which the client
    verifies before it unpacks anything."""
    if spec.download == "git":
        return git_location(spec.git_url or spec.repo.clone_url, spec.path, release.commit)
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
