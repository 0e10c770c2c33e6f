"""The Lister of a source in registry.yaml: the one place a kind of source becomes the code that
lists it, opened for one survey and closed after it."""

from __future__ import annotations

import ssl
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from gitreg.catalog.specs import SourceSpec
from gitreg.git.credential import Credential
from gitreg.sources.bitbucket import BitbucketLister
from gitreg.sources.folder import FolderLister
from gitreg.sources.found import Lister
from gitreg.sources.gitea import GiteaLister
from gitreg.sources.github import GitHubLister
from gitreg.sources.gitlab import GitLabLister


class ForgeLister(Lister, Protocol):
    """A forge's Lister: it holds a connection to the forge's API, closed after a survey."""

    def close(self) -> None: ...


@contextmanager
def opened_lister(spec: SourceSpec, credentials: Sequence[Credential]) -> Iterator[Lister]:
    """The source's Lister, for one survey. A forge's API is reached with the source's token,
    over HTTPS that trusts what Git trusts there: the `credentials` entry's `ca_file` for its
    URL, else the system's store."""
    if spec.kind == "folder":
        yield FolderLister(Path(spec.where), spec.scope)
        return
    forge = _forge_lister(spec, credentials)
    try:
        yield forge
    finally:
        forge.close()


def _forge_lister(spec: SourceSpec, credentials: Sequence[Credential]) -> ForgeLister:
    token = spec.token.value() if spec.token else None
    ca_file = ca_file_for(spec.where, credentials)
    verify: ssl.SSLContext | bool = (
        ssl.create_default_context(cafile=str(ca_file)) if ca_file else True
    )
    if spec.kind == "gitlab":
        return GitLabLister(spec.where, spec.scope, token, verify)
    if spec.kind == "gitea":
        return GiteaLister(spec.where, spec.scope, token, verify)
    if spec.kind == "github":
        return GitHubLister(spec.scope, token, api_url=spec.where, verify=verify)
    return BitbucketLister(spec.where, spec.scope, token, verify)


def ca_file_for(url: str, credentials: Sequence[Credential]) -> Path | None:
    """The CA bundle Git trusts for `url` (the longest matching credential's), or None: the
    system's store."""
    matching = [c for c in credentials if url.startswith(c.url)]
    best = max(matching, key=lambda c: len(c.url), default=None)
    return best.ca_file if best else None
