"""A provider's releases fetched from its forge into `cache_dir/provider-releases/`.

Each release whose tag fits the provider's templates has its goreleaser-named files fetched into
a folder beside `<namespace>/<type>/<version>/`, renamed into place once every file is in: then a
release folder like any other (artifacts.py checks it). A release fetched whole and served is
never fetched again; one the check refused is fetched again when the forge lists its files
otherwise (new ids, sizes or times), else at most every RETRY_EVERY seconds and once after a
start. Each replica fetches into its own cache_dir; a forge that is down leaves what was fetched
served. The folder also keeps `.gitreg.yaml` as the repository held it at the release's tag
(asked once), for its `deprecated:` line. See docs/providers.md."""

from __future__ import annotations

import logging
import os
import shutil
import ssl
import tempfile
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType

from gitreg.atomic import TEMP_SUFFIX, abandoned, atomic_writer, write_atomically
from gitreg.catalog.declaration import DECLARATION, VERSION_FILE_MOST, version_deprecation
from gitreg.catalog.specs import ProviderSpec
from gitreg.git.credential import Credential
from gitreg.providers.artifacts import ReleaseProblem
from gitreg.providers.filenames import PackageFile, ReleaseFile
from gitreg.providers.forge_releases import ListedRelease, ReleaseAsset, ReleaseList
from gitreg.providers.release_stats import ReleaseStats
from gitreg.sources.found import SourceRefused, SourceUnavailable
from gitreg.sources.listers import ca_file_for
from gitreg.tags import released_version

log = logging.getLogger(__name__)

MOST_A_FILE = 512 << 20  # a provider zip is tens of MiB; a bound against a runaway answer
FILE_DEADLINE = 600.0  # seconds one file may take to download
RETRY_EVERY = 3600.0  # seconds at least between two fetches of a refused release listed alike


class ReleaseFetcher:
    """Reads one provider's release list (at most one read at a time, whoever asks) and fetches
    what it lacks; `due` says when its `interval` has passed."""

    def __init__(
        self,
        spec: ProviderSpec,
        credentials: Sequence[Credential],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        assert spec.releases is not None
        self.spec = spec
        self.forge = spec.releases
        ca_file = ca_file_for(self.forge.url, credentials)
        self._verify: ssl.SSLContext | bool = (
            ssl.create_default_context(cafile=str(ca_file)) if ca_file else True
        )
        self._clock = clock
        self._last: float | None = None  # when the last read began
        self._not_before = 0.0  # a rate limit's reset, or Retry-After, when the forge said one
        self._reading = threading.Lock()
        self.read = False  # whether a read ended in this process (before it, the cache serves)
        self.problems: tuple[ReleaseProblem, ...] = ()  # the last reading's
        self.stats = ReleaseStats()
        # Each release fetched in this process: what the forge listed of it, and when.
        self._tries: dict[str, tuple[tuple[str, ...], float]] = {}
        self._unchecked: set[str] = set()  # fetched since a scan of the folder last saw them
        self._counting = threading.Lock()  # the read's thread and a scan's both move them
        self._refused: frozenset[str] = frozenset()  # versions the folder check refuses
        spec.artifacts.mkdir(parents=True, exist_ok=True)  # watched from the start
        for left in spec.artifacts.parent.glob(f".{spec.type}_*{TEMP_SUFFIX}"):
            if left.is_dir() and abandoned(left.name):  # a fetch a crash cut short
                shutil.rmtree(left, ignore_errors=True)
        # Version → the `deprecated:` line of its tag's .gitreg.yaml, replaced whole on a change.
        self._declared: Mapping[str, str] = declared_in(spec.artifacts)
        self._kept: set[str] = set()  # versions whose folder's .gitreg.yaml this process read

    def declared(self) -> Mapping[str, str]:
        """Version → the `deprecated:` line of `.gitreg.yaml` at its release's tag, for the
        releases that say one."""
        return self._declared

    def due(self) -> bool:
        """Whether a read is due: never read, or `interval` passed since the last began (and
        any wait the forge asked for is over)."""
        at = self._clock()
        if at < self._not_before:
            return False
        return self._last is None or at - self._last >= self.forge.interval

    def poll(self, now: bool = False) -> tuple[ReleaseProblem, ...]:
        """Fetch what the forge has and the cache lacks, when due (or `now`); the problems of
        the last reading. A read asked while another runs waits for it, then reads."""
        with self._reading:
            if self._clock() < self._not_before or (not now and not self.due()):
                return self.problems  # (the forge asked to be left alone: even a webhook waits)
            self._last = self._clock()
            self.problems = self._read()  # logged with the folder's, when they change
            self.read = True
            return self.problems

    def checked(self, seen: Collection[str], refused: Collection[str]) -> None:
        """What a scan of the folder saw (versions) and what the check refused of them: counted
        for those fetched since a scan last saw them, and remembered, so that the next read may
        fetch the refused ones again. A scan runs beside a read: one that began before a
        release's folder was in place has not seen it, and leaves it to the next."""
        with self._counting:
            judged = self._unchecked & set(seen)
            self.stats.refused += len(judged & set(refused))
            self._unchecked -= judged
        self._refused = frozenset(refused)

    def _read(self) -> tuple[ReleaseProblem, ...]:
        problems: list[ReleaseProblem] = []
        listing = ReleaseList(self.forge, str(self.spec), self._verify)
        self.stats.reads += 1
        try:
            for release in listing.listed():
                problem = self._fetched(listing, release)
                if problem is not None:
                    problems.append(problem)
        except (SourceUnavailable, SourceRefused) as exc:
            if isinstance(exc, SourceUnavailable) and exc.retry_after:
                self._not_before = self._clock() + exc.retry_after
            problems.append(ReleaseProblem("*", f"the forge's releases: {exc}"))
        finally:
            self.stats.add(listing.stats)
            listing.close()
        return tuple(problems)

    def _fetched(self, listing: ReleaseList, release: ListedRelease) -> ReleaseProblem | None:
        """The release fetched into its folder unless it is there (and not refused, or refused
        and not to be tried again yet); a problem, or None."""
        version = released_version(self.spec.tags, release.tag)
        if version is None:
            return None  # not a tag of this provider's releases
        name = str(version)
        folder = self.spec.artifacts / name
        if folder.is_dir() and not self._again(name, release):
            self._declare(listing, release.tag, folder, name)
            return None  # fetched once: a release's files do not change
        files = [a for a in release.assets if self._belongs(a, name)]
        if not files:
            return ReleaseProblem(
                name, f"release {release.tag} has no file named as goreleaser names them"
            )
        # Beside the provider's folder, never in it: a scan sees a version whole or not at all.
        partial, aside = self._beside(name), None
        self._tries[name] = (release.stamp, self._clock())
        try:
            for asset in files:
                with atomic_writer(partial / asset.name) as out:
                    listing.download(asset, out, MOST_A_FILE, FILE_DEADLINE)
            # Its tag's line known before a scan can see the release: never served without it.
            self._kept.discard(name)  # (a refused release fetched again: its file asked again)
            self._declare(listing, release.tag, partial, name)
            partial.chmod(0o755)
            if folder.is_dir():  # a refused release fetched again: the old files set aside
                aside = self._beside(name)
                os.rename(folder, aside / "refused")
            os.rename(partial, folder)
        except (SourceUnavailable, SourceRefused) as exc:
            return ReleaseProblem(name, f"not fetched: {exc}")
        except OSError as exc:
            if folder.is_dir():
                return None  # another process (a worker beside this one) fetched it first
            return ReleaseProblem(name, f"not fetched into {folder}: {exc}")
        finally:
            shutil.rmtree(partial, ignore_errors=True)
            if aside is not None:
                shutil.rmtree(aside, ignore_errors=True)
        with self._counting:
            self.stats.fetched += 1
            self._unchecked.add(name)
        log.info("provider %s: release %s fetched from %s", self.spec, release.tag, listing.site)
        return None

    def _declare(self, listing: ReleaseList, tag: str, folder: Path, version: str) -> None:
        """The `deprecated:` line of `.gitreg.yaml` at `tag`, asked of the forge unless the
        release's folder keeps the file already (then read from there, once: another worker of
        `serve --workers` may have fetched the release). A forge that cannot say now is asked
        at the next read: the release serves meanwhile, not deprecated."""
        kept = folder / DECLARATION
        if version in self._kept:
            return
        try:
            text = _kept_text(kept)
            if text is None:
                text = listing.file_at(tag, DECLARATION, VERSION_FILE_MOST) or b""
                write_atomically(kept, text)
        except (SourceUnavailable, SourceRefused) as exc:
            log.warning("provider %s: %s at tag %s not read: %s", self.spec, DECLARATION, tag, exc)
            return
        except OSError as exc:  # a full disk: asked again at the next read
            log.warning("provider %s: cannot keep %s: %s", self.spec, kept, exc)
            return
        self._kept.add(version)
        reason = version_deprecation(text) if text else ""
        if self._declared.get(version, "") != reason:  # (a refused release fetched again)
            kept_too = {v: r for v, r in self._declared.items() if v != version}
            self._declared = MappingProxyType({**kept_too, **({version: reason} if reason else {})})

    def _again(self, version: str, release: ListedRelease) -> bool:
        """Whether a release in the cache is fetched again: only one the check refuses, when the
        forge lists its files otherwise than at its last fetch, or RETRY_EVERY after it (and
        once after a start, which remembers no fetch)."""
        if version not in self._refused:
            return False
        tried = self._tries.get(version)
        if tried is None:
            return True
        stamp, at = tried
        return stamp != release.stamp or self._clock() - at >= RETRY_EVERY

    def _beside(self, version: str) -> Path:
        return Path(
            tempfile.mkdtemp(
                prefix=f".{self.spec.type}_{version}.{os.getpid()}.",
                suffix=TEMP_SUFFIX,
                dir=self.spec.artifacts.parent,
            )
        )

    def _belongs(self, asset: ReleaseAsset, version: str) -> bool:
        """Whether an asset is one of the release's files: its zips, SHA256SUMS (and .sig) and
        manifest, of this version; never a path."""
        if "/" in asset.name or "\\" in asset.name or asset.name.startswith("."):
            return False
        package = PackageFile.find(asset.name, self.spec.type)
        if package is not None:
            return package.version == version
        release_file = ReleaseFile.find(asset.name, self.spec.type)
        return release_file is not None and release_file.version == version


def declared_in(releases: Path) -> Mapping[str, str]:
    """Version → the `deprecated:` line of the `.gitreg.yaml` each release's folder under
    `releases` keeps (from its tag), for those that say one."""
    found = {}
    for kept in releases.glob(f"*/{DECLARATION}"):
        try:
            text = _kept_text(kept)
        except OSError:
            continue
        if reason := version_deprecation(text) if text else "":
            found[kept.parent.name] = reason
    return MappingProxyType(found)


def _kept_text(kept: Path) -> bytes | None:
    """A release folder's `.gitreg.yaml`, None when it keeps none; one over the bound is read
    as saying nothing (it was not written by gitreg)."""
    try:
        if kept.stat().st_size > VERSION_FILE_MOST:
            return b""
        return kept.read_bytes()
    except FileNotFoundError:
        return None
