"""Documents attached to a module version's OCI package, served as OCI referrers.

Producers (`attached_by`) give a version's documents, a signed provenance or an SBOM; each
becomes a referrer manifest whose `subject` is the version's manifest, listed by the referrers
API (`oras discover`) and fetched by digest (`oras pull`). Their bytes are the same on every
replica and after a restart, so a digest this process has not made is found by making each
version's referrers again, newest first, each once per process and catalog. See
docs/opentofu-oci.md."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from gitreg.catalog.model import Catalog
from gitreg.modules.index import ModuleEntry
from gitreg.modules.resolve import Release
from gitreg.oci.manifests import Blob, Document, digest_of, referrer_manifest
from gitreg.oci.packages import ModulePackages
from gitreg.state.ledger import TagLedger

IN_TOTO = "application/vnd.in-toto+json"  # a provenance's artifact type
PROVENANCE_DSSE = "application/vnd.in-toto.provenance+dsse"  # its layer: the DSSE envelope
CYCLONEDX = "application/vnd.cyclonedx+json"  # an SBOM's artifact type and layer
_HELD = 64 << 20  # attached documents' bytes kept; past it, everything forgotten and made again
_REMEMBERED = 50_000  # versions whose referrers are kept, as for packages


@dataclass(frozen=True)
class Attachment:
    """A document attached to a module version: its artifact type, its layer's media type, its
    bytes (the same bytes each time they are made), and the file name `oras pull` saves."""

    artifact_type: str
    media_type: str
    data: bytes
    title: str


@dataclass(frozen=True)
class AttachedTo:
    """The module version a producer is asked about, with the catalog served and its
    repository's ledger (where the version's archive digest is recorded)."""

    catalog: Catalog
    entry: ModuleEntry
    release: Release
    ledger: TagLedger | None


class Attached(Protocol):
    """What is attached to a module version: () when nothing is."""

    async def __call__(self, version: AttachedTo) -> tuple[Attachment, ...]: ...


Producer = Callable[[AttachedTo], Awaitable[Attachment | None]]


def attached_by(*producers: Producer) -> Attached:
    """Each producer's document, in the producers' order; a producer that has none for a
    version answers None."""

    async def attached(version: AttachedTo) -> tuple[Attachment, ...]:
        made = await asyncio.gather(*(produce(version) for produce in producers))
        return tuple(attachment for attachment in made if attachment is not None)

    return attached


@dataclass(frozen=True)
class DocumentKind:
    """A kind of document attached to versions: its artifact type, its layer's media type, and
    the end of the file name `oras pull` saves it as."""

    artifact_type: str
    media_type: str
    suffix: str


PROVENANCE = DocumentKind(IN_TOTO, PROVENANCE_DSSE, "intoto.json")
SBOM = DocumentKind(CYCLONEDX, CYCLONEDX, "cdx.json")


def producing(
    kind: DocumentKind, make: Callable[[AttachedTo], Awaitable[bytes | None]]
) -> Producer:
    """A producer of `kind` from what makes its bytes (None: the version has none), each saved
    as `NAMESPACE-NAME-SYSTEM-VERSION.<suffix>`, as the version's zip is."""

    async def produce(version: AttachedTo) -> Attachment | None:
        data = await make(version)
        if data is None:
            return None
        address = version.entry.spec.address
        title = f"{address.namespace}-{address.name}-{address.system}-{version.release.version}"
        return Attachment(kind.artifact_type, kind.media_type, data, f"{title}.{kind.suffix}")

    return produce


CommitTime = Callable[[ModuleEntry, Release], Awaitable[int | None]]


@dataclass(frozen=True)
class AttachingModule:
    """A module's OCI repository as referrers are asked of it, in the catalog served."""

    repository: str
    entry: ModuleEntry
    ledger: TagLedger | None
    catalog: Catalog

    def at(self, release: Release) -> AttachedTo:
        return AttachedTo(self.catalog, self.entry, release, self.ledger)


class ModuleReferrers:
    """Each version's referrer manifests, made when first asked and kept with their documents
    by (repository, digest), within a budget; forgotten when the catalog served changes,
    since producers read it (a provenance key may be added or rotated)."""

    def __init__(self, packages: ModulePackages, attached: Attached, commit_time: CommitTime):
        self.packages = packages
        self.attached = attached
        self.commit_time = commit_time  # the version's commit time: each manifest's `created`
        self._catalog: Catalog | None = None
        self._made: dict[tuple[str, Release], tuple[Document, ...]] = {}
        self._manifests: dict[tuple[str, str], Document] = {}
        self._documents: dict[tuple[str, str], bytes] = {}
        self._held = 0

    async def of(self, module: AttachingModule, release: Release) -> tuple[Document, ...]:
        """The referrer manifests of `release`, in the producers' order."""
        self._follow(module.catalog)
        made = self._made.get((module.repository, release))
        if made is not None:
            return made
        entry, repository = module.entry, module.repository
        subject = await self.packages.manifest(repository, entry, release, module.ledger)
        attachments = await self.attached(module.at(release))
        created = _rfc3339(await self.commit_time(entry, release)) if attachments else ""
        manifests = tuple(
            referrer_manifest(
                a.artifact_type,
                a.media_type,
                Blob(digest_of(a.data), len(a.data)),
                a.title,
                subject,
                created,
            )
            for a in attachments
        )
        if module.catalog is self._catalog:  # not made for a catalog served no longer
            self._remember(repository, release, manifests, attachments)
        return manifests

    async def referring_to(self, module: AttachingModule, digest: str) -> tuple[Document, ...]:
        """The referrer manifests whose subject is `digest`: none unless it is a version's
        manifest (a referrer's own digest, as `oras discover` asks next, answered from memory).
        A version whose manifest this process has not made is made, newest first."""
        self._follow(module.catalog)
        if (module.repository, digest) in self._manifests:
            return ()
        releases = module.entry.versions.releases
        for release in releases:  # first those made already, as a HEAD by tag made its own
            made = self.packages.made(module.repository, module.entry, release)
            if made is not None and made.digest == digest:
                return await self.of(module, release)
        for release in releases:
            subject = await self.packages.manifest(
                module.repository, module.entry, release, module.ledger
            )
            if subject.digest == digest:
                return await self.of(module, release)
        return ()

    async def by_digest(self, module: AttachingModule, digest: str) -> Document | bytes | None:
        """A referrer manifest or an attached document by digest: remembered, else each
        version's referrers made, newest first, until one has it. A digest none has costs
        each version's documents once, as `ModulePackages.by_digest` costs each zip once."""
        self._follow(module.catalog)
        found = self._find(module.repository, digest)
        if found is not None:
            return found
        for release in module.entry.versions.releases:
            await self.of(module, release)
            found = self._find(module.repository, digest)
            if found is not None:
                return found
        return None

    def _find(self, repository: str, digest: str) -> Document | bytes | None:
        key = (repository, digest)
        manifest = self._manifests.get(key)
        return manifest if manifest is not None else self._documents.get(key)

    def _follow(self, catalog: Catalog) -> None:
        if catalog is not self._catalog:
            self._forget()
            self._catalog = catalog

    def _remember(
        self,
        repository: str,
        release: Release,
        manifests: tuple[Document, ...],
        attachments: tuple[Attachment, ...],
    ) -> None:
        size = sum(len(attachment.data) for attachment in attachments)
        if len(self._made) >= _REMEMBERED or self._held + size > _HELD:
            self._forget()
        self._made[(repository, release)] = manifests
        for manifest, attachment in zip(manifests, attachments, strict=True):
            self._manifests[(repository, manifest.digest)] = manifest
            self._documents[(repository, digest_of(attachment.data))] = attachment.data
        self._held += size

    def _forget(self) -> None:
        self._made.clear()
        self._manifests.clear()
        self._documents.clear()
        self._held = 0


def _rfc3339(seconds: int | None) -> str:
    return "" if seconds is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))
