"""A provider's releases fetched from its forge into `cache_dir/provider-releases/<namespace>/
<type>/<version>/`: each release whose tag fits the provider's templates, its goreleaser-named
files fetched once into a folder beside, renamed into place only when every file is in. That
folder is then a release folder like any other (artifacts.py checks it). Each replica fetches
into its own cache_dir; a forge that is down leaves what was fetched served."""

from __future__ import annotations

import logging
import os
import shutil
import ssl
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from gitreg.atomic import TEMP_SUFFIX, abandoned, atomic_writer
from gitreg.catalog.model import ProviderSpec
from gitreg.git.credential import Credential
from gitreg.providers.artifacts import ReleaseProblem
from gitreg.providers.filenames import PackageFile, ReleaseFile
from gitreg.providers.forge_releases import ListedRelease, ReleaseAsset, ReleaseList
from gitreg.sources.found import SourceRefused, SourceUnavailable
from gitreg.sources.listers import ca_file_for
from gitreg.tags import released_version

log = logging.getLogger(__name__)

MOST_A_FILE = 512 << 20  # a provider zip is tens of MiB; a bound against a runaway answer
FILE_DEADLINE = 600.0  # seconds one file may take to download


class ReleaseFetcher:
    """Reads one provider's release list at most every `interval`, and fetches what it lacks."""

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
        self._last: float | None = None
        self.problems: tuple[ReleaseProblem, ...] = ()  # the last reading's
        spec.artifacts.mkdir(parents=True, exist_ok=True)  # watched from the start
        for left in spec.artifacts.parent.glob(f".{spec.type}_*{TEMP_SUFFIX}"):
            if left.is_dir() and abandoned(left.name):  # a fetch a crash cut short
                shutil.rmtree(left, ignore_errors=True)

    def poll(self, now: bool = False) -> tuple[ReleaseProblem, ...]:
        """Fetch what the forge has and the cache lacks, when `interval` has passed since the
        last reading (or `now`); the problems of the last reading."""
        at = self._clock()
        if not now and self._last is not None and at - self._last < self.forge.interval:
            return self.problems
        self._last = at
        problems: list[ReleaseProblem] = []
        listing = ReleaseList(self.forge, str(self.spec), self._verify)
        try:
            for release in listing.listed():
                problem = self._fetched(listing, release)
                if problem is not None:
                    problems.append(problem)
        except (SourceUnavailable, SourceRefused) as exc:
            problems.append(ReleaseProblem("*", f"the forge's releases: {exc}"))
        finally:
            listing.close()
        self.problems = tuple(problems)  # logged with the folder's, when they change
        return self.problems

    def _fetched(self, listing: ReleaseList, release: ListedRelease) -> ReleaseProblem | None:
        """The release fetched into its folder unless it is there; a problem, or None."""
        version = released_version(self.spec.tags, release.tag)
        if version is None:
            return None  # not a tag of this provider's releases
        name = str(version)
        folder = self.spec.artifacts / name
        if folder.is_dir():
            return None  # fetched once: a release's files do not change
        files = [a for a in release.assets if self._belongs(a, name)]
        if not files:
            return ReleaseProblem(
                name, f"release {release.tag} has no file named as goreleaser names them"
            )
        # Beside the provider's folder, never in it: a scan sees a version whole or not at all.
        partial = Path(
            tempfile.mkdtemp(
                prefix=f".{self.spec.type}_{name}.{os.getpid()}.",
                suffix=TEMP_SUFFIX,
                dir=self.spec.artifacts.parent,
            )
        )
        try:
            for asset in files:
                with atomic_writer(partial / asset.name) as out:
                    listing.download(asset, out, MOST_A_FILE, FILE_DEADLINE)
            partial.chmod(0o755)
            os.rename(partial, folder)
        except (SourceUnavailable, SourceRefused) as exc:
            return ReleaseProblem(name, f"not fetched: {exc}")
        except OSError as exc:
            if folder.is_dir():
                return None  # another process (a worker beside this one) fetched it first
            return ReleaseProblem(name, f"not fetched into {folder}: {exc}")
        finally:
            shutil.rmtree(partial, ignore_errors=True)
        log.info("provider %s: release %s fetched from %s", self.spec, release.tag, listing.site)
        return None

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
