"""Each module version's provenance: its statement, signed with the registry's key, as bytes.

The archive's digest is the one the ledger records (a cold version's archive is built first, as
for its download); the tree and tag object are read from the clone. Envelopes are kept in
memory, a bounded number, by what they are made of: making one again costs a signature and a
small read of the clone, and with Ed25519 gives the same bytes, so nothing is kept on disk."""

from __future__ import annotations

import asyncio

from gitreg import __version__
from gitreg.attestations.envelopes import signed
from gitreg.attestations.keys import RegistryKey, registry_key
from gitreg.attestations.statement import ReleaseFacts, payload
from gitreg.auth.own_origin import own_origin
from gitreg.catalog.model import Catalog
from gitreg.git.trees import release_objects
from gitreg.modules.archive_cache import ArchiveCache
from gitreg.modules.downloads import archive_key
from gitreg.modules.index import ModuleEntry
from gitreg.modules.resolve import Release
from gitreg.state.ledger import TagLedger

KEPT = 4096  # envelopes kept in memory, a kilobyte or two each; past it, forgotten and made again
_kept: dict[tuple[object, ...], bytes] = {}


async def provenance_of(
    archives: ArchiveCache,
    catalog: Catalog,
    ledger: TagLedger | None,
    entry: ModuleEntry,
    release: Release,
) -> bytes | None:
    """The DSSE envelope of `release`'s provenance; None when `catalog` sets no
    `provenance.key`. `archives` is the tar.gz cache the version's downloads are served from,
    `ledger` its repository's: an archive not built yet is built (ArchiveMismatch when its
    bytes are not the recorded)."""
    if catalog.provenance is None:
        return None
    key = registry_key(catalog.provenance)
    builder = f"{own_origin(catalog.server.hostname, catalog.server.public_url)}/"
    spec = entry.spec
    made_of = (
        key.keyid,
        builder,
        str(spec.address),
        release,
        spec.path,
        spec.repo,
        spec.download,
        spec.archive,
    )
    known = _kept.get(made_of)
    if known is not None:
        return known
    digest = ""
    if spec.download == "archive":
        if ledger is None:  # not reached: a repository served has its ledger
            return None
        digest = await archives.digest(entry.clone_path, archive_key(spec, release.commit), ledger)
    envelope = await asyncio.to_thread(_made, entry, release, digest, builder, key)
    if len(_kept) >= KEPT:
        _kept.clear()
    _kept[made_of] = envelope
    return envelope


def _made(
    entry: ModuleEntry, release: Release, digest: str, builder: str, key: RegistryKey
) -> bytes:
    tree, tag_object = release_objects(entry.clone_path, release.tag, release.commit)
    spec = entry.spec
    facts = ReleaseFacts(
        address=str(spec.address),
        version=release.version,
        archive_sha256=digest,
        repository=spec.repo.clone_url,
        tag=release.tag,
        path=spec.path,
        commit=release.commit,
        tree=tree,
        tag_object=tag_object,
        signer=release.signer,
        signer_kind=spec.signed_tags.kind if spec.signed_tags and release.signer else "",
        builder=builder,
        gitreg_version=__version__,
    )
    return signed(payload(facts), key)
