"""Where a survey reads a repository's `.gitreg.yaml`: at its default branch.

It is read in the repository itself for a folder source, else in the bare clone gitreg keeps of
it (the default branch fetched beside the tags). See docs/sources.md."""

from __future__ import annotations

from pathlib import Path

from gitreg.catalog.declaration import DECLARATION
from gitreg.catalog.model import Catalog
from gitreg.git.clone import BareClone
from gitreg.git.location import RepoLocation
from gitreg.git.trees import branch_file
from gitreg.sources.found import FoundRepository

DECLARATION_MOST = 256 << 10  # bytes: a larger .gitreg.yaml is refused, not read


class DeclarationFiles:
    """`read(found, location)`: the repository's `.gitreg.yaml` at its default branch, or None
    when it holds none; SourceError when it cannot be read."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def __call__(self, found: FoundRepository, location: RepoLocation) -> bytes | None:
        ref = f"refs/heads/{found.default_branch}" if found.default_branch else "HEAD"
        if location.transport == "local":
            return branch_file(Path(location.url), ref, DECLARATION, most=DECLARATION_MOST)
        catalog = self.catalog
        credential = catalog.credential_for(location.url)
        clone = BareClone(location, catalog.cache_dir, credential, catalog.freshness.fetch_timeout)
        # A source that names no default branch (Bitbucket's listing, or GitLab's for an empty
        # repository) leaves it to the repository's HEAD; one with no HEAD declares nothing yet.
        fetched = clone.fetch_branch(found.default_branch or None)
        if fetched is None:
            return None
        return branch_file(clone.path, fetched, DECLARATION, most=DECLARATION_MOST)
