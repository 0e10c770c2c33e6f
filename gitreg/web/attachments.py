"""What module versions carry as OCI referrers: their signed provenance and their bill of
materials, the same bytes for every reader, so that a referrer's digest is one.

The bill attached resolves no call to this registry's modules (which versions a reader may see
differs by reader, and a newer callee would change the digest); `…/VERSION/sbom` resolves them
for whoever asks."""

from __future__ import annotations

from gitreg.attestations.provenance import provenance_of
from gitreg.docs.sbom import module_sbom, resolving_nothing, this_registry
from gitreg.docs.service import DocsService
from gitreg.errors import ArchiveTooLarge
from gitreg.modules.archive_cache import ArchiveCache
from gitreg.modules.downloads import archive_digest
from gitreg.oci.referrers import PROVENANCE, SBOM, Attached, AttachedTo, attached_by, producing


def attached(archives: ArchiveCache, docs: DocsService) -> Attached:
    """Each version's provenance (when registry.yaml sets `provenance.key`), then its bill."""

    async def provenance(version: AttachedTo) -> bytes | None:
        try:
            return await provenance_of(
                archives, version.catalog, version.ledger, version.entry, version.release
            )
        except ArchiveTooLarge:  # never served, so nothing to attest: the bill alone refers
            return None

    async def bill(version: AttachedTo) -> bytes | None:
        entry, release = version.entry, version.release
        digest = ""
        if version.ledger is not None:
            try:
                digest = await archive_digest(
                    archives, entry.spec, entry.clone_path, release.commit, version.ledger
                )
            except ArchiveTooLarge:  # never served, so no digest to name
                digest = ""
        registry = this_registry(version.catalog.server, resolving_nothing)
        return await module_sbom(docs, entry, release, digest, registry)

    return attached_by(producing(PROVENANCE, provenance), producing(SBOM, bill))
