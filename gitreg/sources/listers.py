"""The Lister of a source in registry.yaml: the one place a kind of source becomes the code that
lists it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gitreg.catalog.model import SourceSpec
from gitreg.git.credential import Credential
from gitreg.sources.folder import FolderLister
from gitreg.sources.found import FoundRepository, Lister, SourceRefused


def lister_for(spec: SourceSpec, credentials: Sequence[Credential]) -> Lister:
    """The source's Lister. A forge's API is reached with the source's token, over HTTPS that
    trusts what Git trusts there: the `credentials` entry's `ca_file` for its URL."""
    if spec.kind == "folder":
        return FolderLister(Path(spec.where), spec.scope)
    return _NotInThisBuild(spec.kind)


@dataclass(frozen=True)
class _NotInThisBuild:
    """A forge whose lister this build lacks: every discovery is refused, naming it."""

    kind: str

    def repositories(self) -> Sequence[FoundRepository]:
        raise SourceRefused(f"{self.kind} sources are not available in this build of gitreg")


def ca_file_for(url: str, credentials: Sequence[Credential]) -> Path | None:
    """The CA bundle Git trusts for `url` (the longest matching credential's), or None: the
    system's store."""
    matching = [c for c in credentials if url.startswith(c.url)]
    best = max(matching, key=lambda c: len(c.url), default=None)
    return best.ca_file if best else None
