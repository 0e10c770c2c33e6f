"""Hosted providers: their releases, read from artifact folders (and gated by tags when a
provider names a repository), in an immutable index swapped whole on each rescan. A catalog
reload builds new Providers from the old ones, and the watch follows whichever is served.

A rescan never waits on a forge: it serves what cache_dir already holds of a forge's releases,
with the problems of that provider's last read. The reads themselves (`read_forge`) run beside,
asked by the interval and by webhooks (freshness/release_reads.py); `gitreg check` reads every
forge at once (`refresh(poll_forges=True)`)."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Protocol

from watchfiles import awatch

from gitreg.catalog.declaration import DECLARATION, VERSION_FILE_MOST, version_deprecation
from gitreg.catalog.model import Catalog
from gitreg.catalog.specs import ProviderSpec, deprecation_of
from gitreg.errors import SourceError
from gitreg.git.clone import TagRef
from gitreg.git.location import RepoLocation
from gitreg.git.trees import root_files
from gitreg.providers.artifacts import ArtifactFolder, ProviderRelease, ReleaseProblem
from gitreg.providers.fetched_releases import ReleaseFetcher, declared_in
from gitreg.providers.hashes import HashCache
from gitreg.signing import Keyring, PublicKey
from gitreg.tags import released_version

log = logging.getLogger(__name__)

_RESCAN_MS = 2000  # also rescan this often: tags of gating repositories change without file events
_FORGES_AT_ONCE = 8  # forges `refresh(poll_forges=True)` reads at once
_NONE_DECLARED: Mapping[str, str] = MappingProxyType({})


class RepositoryTags(Protocol):
    """Where a gating repository's tags come from (the module side, as it last read them)."""

    def tags_of(self, location: RepoLocation) -> Sequence[TagRef]: ...

    def clone_path(self, location: RepoLocation) -> Path | None:
        """Where the repository's clone is (its tags' `.gitreg.yaml` are read there), if any."""
        ...


@dataclass(frozen=True)
class ProviderEntry:
    spec: ProviderSpec
    releases: tuple[ProviderRelease, ...]  # newest first
    problems: tuple[ReleaseProblem, ...]
    untagged: tuple[str, ...] = ()  # good releases left out: no tag of the repository fits them
    # Releases from a forge not read yet by this process, with none in cache_dir: not known yet
    # (a 503), rather than a provider with no version.
    pending: bool = False
    # Version → the `deprecated:` line of `.gitreg.yaml` at its release's tag: read with the
    # release from a forge (fetched_releases.py), or from the gating repository's clone;
    # only those that say one.
    declared: Mapping[str, str] = field(default_factory=lambda: _NONE_DECLARED, hash=False)

    def release(self, version: str) -> ProviderRelease | None:
        return next((r for r in self.releases if r.version == version), None)

    def deprecation(self, version: str) -> str | None:
        """Why `version` is deprecated, or None. The entry's `deprecated:` list (registry.yaml's,
        or for a found provider its repository's `.gitreg.yaml` at the default branch)
        wins: it is the later word; else the `deprecated:` line of `.gitreg.yaml` at the
        release's tag. A version revoked too is said revoked, not deprecated. The `versions`
        answer, pages and tools ask this, so that they agree."""
        if self.spec.revoked and self.revocation(version):
            return None
        return deprecation_of(self.spec.deprecated, version) or self.declared.get(version) or None

    def revocation(self, version: str) -> str | None:
        """Why `version` is revoked (the entry's `revoked:` list), or None: a revoked version
        installs only for who installed it before (`web/revocations.py`)."""
        return deprecation_of(self.spec.revoked, version) if self.spec.revoked else None

    def revoked(self) -> frozenset[str]:
        """The versions released that are revoked; empty for almost every provider."""
        if not self.spec.revoked:
            return frozenset()
        return frozenset(r.version for r in self.releases if self.revocation(r.version))

    def warning(self) -> str | None:
        """Why nothing is served when no release was refused: a provider before its first
        release looks just like a mistyped artifacts folder, so it is said, not an error."""
        if self.releases or self.problems:
            return None
        if self.pending and self.spec.releases is not None:
            forge = self.spec.releases
            return f"has no release in cache_dir yet: {forge.url} ({forge.project}) not read yet"
        if self.untagged:
            templates = ", ".join(str(t) for t in self.spec.tags)
            return f"serves no version: no tag fits {templates} for {', '.join(self.untagged)}"
        pattern = f"terraform-provider-{self.spec.type}_VERSION_OS_ARCH.zip"
        if self.spec.releases is not None:
            forge = self.spec.releases
            return f"has no release on {forge.url} ({forge.project}; no {pattern})"
        return f"has no release in {self.spec.artifacts} (no {pattern})"


class Providers:
    def __init__(
        self, catalog: Catalog, repositories: RepositoryTags, previous: Providers | None = None
    ) -> None:
        """With `previous` (the providers of the catalog served before), what did not change is
        kept: the keyring, and each release folder reader with its zip hashes."""
        self.repositories = repositories
        keyring = Keyring.load(catalog.signing.keys, catalog.signing.verify_keys)
        if previous is not None and _same_keys(previous.keyring, keyring):
            keyring = previous.keyring
        self.keyring: Keyring = keyring
        kept = previous.folders if previous is not None and previous.keyring is keyring else {}
        signatures = catalog.cache_dir / "signatures"
        # Each zip hashed once: by the scan, for the download answers, and by the network mirror.
        self.hashes: HashCache = previous.hashes if previous is not None else HashCache()
        self.folders: dict[tuple[str, str], tuple[ProviderSpec, ArtifactFolder]] = {}
        for spec in catalog.providers:
            folder = _kept_folder(kept.get(spec.key), spec) or ArtifactFolder(
                spec.artifacts, spec.type, keyring, signatures, self.hashes
            )
            self.folders[spec.key] = (spec, folder)
        # The forge readers of providers whose releases are on a forge, kept while unchanged.
        fetchers = previous.fetchers if previous is not None else {}
        self.fetchers: dict[tuple[str, str], ReleaseFetcher] = {}
        # What the releases' tags declared, of those whose forge is no longer read.
        self._declared: dict[tuple[str, str], Mapping[str, str]] = {}
        for spec in catalog.providers:
            if spec.releases is not None and spec.removed:
                # Its repository left its source: what was fetched serves; the forge is not read.
                spec.artifacts.mkdir(parents=True, exist_ok=True)
                self._declared[spec.key] = declared_in(spec.artifacts)
            elif spec.releases is not None:
                old = fetchers.get(spec.key)
                same = old is not None and old.spec == spec
                self.fetchers[spec.key] = (
                    old if old is not None and same else ReleaseFetcher(spec, catalog.credentials)
                )
        # The index served before: the first rescan logs what changed, not everything again.
        self._index: Mapping[tuple[str, str], ProviderEntry] = (
            previous._index if previous is not None else MappingProxyType({})
        )
        # Whether the folders were scanned once (a server answers 503, not 404, until then).
        self.scanned: bool = previous.scanned if previous is not None else False
        # Shared with `previous`: the two never scan the same folders at once.
        self._lock: threading.Lock = previous._lock if previous is not None else threading.Lock()
        # A gating repository's commit → the `deprecated:` line of `.gitreg.yaml` at it ("" for
        # none): a commit's file never changes, so each is read once (under `_lock`).
        self._tag_reasons: dict[str, str] = previous._tag_reasons if previous is not None else {}
        self._tag_reads_failed: set[RepoLocation] = set()  # said in the log, until a read works

    def get(self, namespace: str, provider_type: str) -> ProviderEntry | None:
        return self._index.get((namespace.lower(), provider_type.lower()))

    def entries(self) -> list[ProviderEntry]:
        return list(self._index.values())

    def public_keys(self) -> list[PublicKey]:
        return self.keyring.public_keys()

    def watched_folders(self) -> list[Path]:
        """The release folders that exist now (watchfiles cannot watch a missing one)."""
        return [folder.folder for _, folder in self.folders.values() if folder.folder.is_dir()]

    def read_forge(self, key: tuple[str, str]) -> None:
        """Read one provider's release list now and fetch what the cache lacks (this blocks on
        the forge: run it in a thread), then rescan."""
        fetcher = self.fetchers.get(key)
        if fetcher is not None:
            fetcher.poll(now=True)
            self.refresh()

    def due_forges(self) -> list[tuple[str, str]]:
        """The providers whose release list is due a read (their `interval` passed)."""
        return [key for key, fetcher in self.fetchers.items() if fetcher.due()]

    def refresh(self, poll_forges: bool = False) -> None:
        """Rescan every artifact folder (zip hashes are kept while files do not change); with
        `poll_forges`, read every forge first, several at once (`gitreg check`)."""
        if poll_forges and self.fetchers:
            workers = min(_FORGES_AT_ONCE, len(self.fetchers))
            with ThreadPoolExecutor(workers, thread_name_prefix="forge-releases") as pool:
                list(pool.map(lambda f: f.poll(now=True), self.fetchers.values()))
        with self._lock:
            index = {}
            for key, (spec, folder) in self.folders.items():
                fetcher = self.fetchers.get(key)
                fetching = fetcher.problems if fetcher is not None else ()
                releases, problems = folder.scan()
                if fetcher is not None:
                    refused = {p.version for p in problems if p.version != "*"}
                    fetcher.checked({r.version for r in releases} | refused, refused)
                problems = [*fetching, *problems]
                pending = fetcher is not None and not fetcher.read and not releases
                releases, untagged, tagged = self._gate(spec, releases)
                declared = (
                    fetcher.declared() if fetcher is not None else self._declared.get(key, tagged)
                )
                entry = ProviderEntry(
                    spec, tuple(releases), tuple(problems), tuple(untagged), pending, declared
                )
                old = self._index.get(key)
                if old is None or old.problems != tuple(problems):
                    for problem in problems:
                        log.warning("provider %s %s", spec, problem)
                warning = entry.warning()
                if warning and not pending and (old is None or old.warning() != warning):
                    log.warning("provider %s %s", spec, warning)
                if old is None or [r.version for r in old.releases] != [
                    r.version for r in releases
                ]:
                    log.info(
                        "provider %s: versions %s",
                        spec,
                        ", ".join(r.version for r in releases) or "none",
                    )
                index[key] = entry
            self._index = MappingProxyType(index)
            self.scanned = True

    def _gate(
        self, spec: ProviderSpec, releases: list[ProviderRelease]
    ) -> tuple[list[ProviderRelease], list[str], Mapping[str, str]]:
        """With a repository, a version is published only while a matching tag exists: the
        releases served, the versions left out, and what the served versions' tags declare
        deprecated."""
        if spec.repo is None:
            return releases, [], _NONE_DECLARED
        tagged = {
            str(version): tag.commit
            for tag in self.repositories.tags_of(spec.repo)
            if tag.commit is not None
            and (version := released_version(spec.tags, tag.name)) is not None
        }
        served = [r for r in releases if r.version in tagged]
        left_out = [r.version for r in releases if r.version not in tagged]
        commits = {r.version: tagged[r.version] for r in served}
        return served, left_out, self._declared_at(spec.repo, commits)

    def _declared_at(self, repo: RepoLocation, commits: Mapping[str, str]) -> Mapping[str, str]:
        """Version → the `deprecated:` line of `.gitreg.yaml` at its tag's commit, of those
        that say one; commits not read yet are read at once, by one git process."""
        unread = sorted({c for c in commits.values() if c not in self._tag_reasons})
        path = self.repositories.clone_path(repo) if unread else None
        if path is not None:
            try:
                files = root_files(path, unread, DECLARATION, most=VERSION_FILE_MOST)
            except SourceError as exc:  # read again at the next rescan; no deprecation meanwhile
                # Said once a repository, not at every rescan (every couple of seconds).
                if repo not in self._tag_reads_failed:
                    self._tag_reads_failed.add(repo)
                    log.warning("provider tags of %s: %s", repo, exc)
            else:
                self._tag_reasons.update(
                    (c, version_deprecation(files[c]) if c in files else "") for c in unread
                )
                self._tag_reads_failed.discard(repo)
        said = {v: r for v, c in commits.items() if (r := self._tag_reasons.get(c))}
        return MappingProxyType(said) if said else _NONE_DECLARED


def _same_keys(old: Keyring, new: Keyring) -> bool:
    """Whether two keyrings sign and verify alike: the same keys in the same order."""
    return old.can_sign == new.can_sign and old.public_keys() == new.public_keys()


def _kept_folder(
    old: tuple[ProviderSpec, ArtifactFolder] | None, spec: ProviderSpec
) -> ArtifactFolder | None:
    if old is None or (old[0].artifacts, old[0].type) != (spec.artifacts, spec.type):
        return None
    return old[1]


async def watch_providers(served: Callable[[], Providers]) -> None:
    """Rescan the served providers when a release lands in a folder, and every couple of
    seconds; when a reload serves other providers, or a folder appears or goes, watch anew.
    Runs until cancelled."""
    while True:
        providers = served()
        folders = providers.watched_folders()
        if not folders:
            while served() is providers and not providers.watched_folders():
                await asyncio.sleep(_RESCAN_MS / 1000)
            continue
        async for _ in awatch(*folders, rust_timeout=_RESCAN_MS, yield_on_timeout=True, step=200):
            if served() is not providers:
                break
            try:
                await asyncio.to_thread(providers.refresh)
            except Exception:  # a background loop: one bad scan must not end the watch
                log.exception("rescanning the provider folders failed; trying again")
            if providers.watched_folders() != folders:
                break
