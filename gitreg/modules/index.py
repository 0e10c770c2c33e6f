"""The immutable version index that request handlers read; a refresh replaces it whole."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

import semver

from gitreg.catalog.specs import ModuleSpec, deprecation_of
from gitreg.modules.cooldown import PendingRelease
from gitreg.modules.downloads import download_location
from gitreg.modules.resolve import ModuleVersions, Release
from gitreg.modules.tag_policy import TagChange
from gitreg.tags import version_sort_key


@dataclass(frozen=True, slots=True)
class ModuleEntry:
    spec: ModuleSpec
    clone_path: Path
    versions: ModuleVersions
    changes: tuple[TagChange, ...] = ()  # published tags that moved or were deleted
    # Versions `publish_when` holds back, due soonest first: in no list, no download.
    pending: tuple[PendingRelease, ...] = ()
    by_version: Mapping[str, Release] = field(init=False)
    # The versions listed that are revoked: empty for almost every module, whose answers are
    # then the same for every reader.
    revoked: frozenset[str] = field(init=False)
    # The answers of modules.v1 as bytes, made on the first request that wants each and kept
    # with the entry (a swap brings new entries, so they never outlive what they say): the
    # versions body under "", a version's download body and location under its version.
    # Strings and bytes only, so the collector does not track these dictionaries.
    _bodies: dict[str, bytes] = field(init=False, repr=False, compare=False)
    _locations: dict[str, bytes] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Worked out once per refresh, in the background, so a request only looks it up. The
        # download location and the set of commits are not kept: with 10,000 modules they cost
        # more memory than the releases themselves, and a request works them out in microseconds.
        releases = self.versions.releases
        object.__setattr__(self, "by_version", MappingProxyType({r.version: r for r in releases}))
        revoked = self.spec.revoked
        found = (
            [r.version for r in releases if deprecation_of(revoked, r.version)] if revoked else ()
        )
        object.__setattr__(self, "revoked", frozenset(found))
        object.__setattr__(self, "_bodies", {})
        object.__setattr__(self, "_locations", {})

    def deprecation(self, release: Release) -> str | None:
        """Why `release` is deprecated, or None. The entry's `deprecated:` list (registry.yaml's,
        or for a found module its repository's `.gitreg.yaml` at the default branch) wins:
        it is the later word; else the `deprecated:` line of `.gitreg.yaml` at the version's own
        commit. A version revoked too is said revoked, not deprecated. Every page, answer and
        tool asks this, so that they agree."""
        if release.version in self.revoked:
            return None
        return deprecation_of(self.spec.deprecated, release.version) or release.deprecated or None

    def revocation(self, release: Release) -> str | None:
        """Why `release` is revoked (the entry's `revoked:` list), or None: a revoked version
        installs only for who installed it before (`web/revocations.py`)."""
        if release.version not in self.revoked:
            return None
        return deprecation_of(self.spec.revoked, release.version)

    def location(self, release: Release, digest: str = "") -> str:
        """Where clients download `release` from; an archive's with its `digest` (SHA-256 hex)."""
        return download_location(self.spec, release, digest)

    def versions_json(self, withheld: frozenset[str] = frozenset()) -> bytes:
        """The modules.v1 `versions` answer; without the `withheld` versions (revoked ones the
        reader never installed)."""
        key = "\0" + ",".join(sorted(withheld)) if withheld else ""  # a version holds no NUL
        body = self._bodies.get(key)
        if body is None:
            releases = self.versions.releases
            listed = [{"version": r.version} for r in releases if r.version not in withheld]
            body = self._bodies[key] = _json({"modules": [{"versions": listed}]})
        return body

    def download_json(self, release: Release, digest: str = "") -> tuple[bytes, bytes]:
        """The modules.v1 `download` answer of an open namespace: its body, and its location
        (the X-Terraform-Get header); an archive's carries `digest`, which never changes."""
        body = self._bodies.get(release.version)
        location = self._locations.get(release.version)
        if body is None or location is None:
            text = self.location(release, digest)
            location = self._locations[release.version] = text.encode("latin-1")
            body = self._bodies[release.version] = _json({"location": text})
        return body, location

    def serves_commit(self, commit: str, preview: bool = False) -> bool:
        """Whether a version served holds `commit`; with `preview`, a version held back too."""
        if any(r.commit == commit for r in self.versions.releases):
            return True
        return preview and any(p.release.commit == commit for p in self.pending)

    def preview_json(self) -> bytes:
        """The `versions` answer a `preview` token is given: the versions held back too."""
        held = [p.release for p in self.pending]
        releases = sorted((*self.versions.releases, *held), key=_sort_key, reverse=True)
        return _json({"modules": [{"versions": [{"version": r.version} for r in releases]}]})

    def pending_release(self, version: str) -> Release | None:
        """The version held back as `version`, or None."""
        return next((p.release for p in self.pending if p.release.version == version), None)


def _sort_key(release: Release) -> tuple[semver.Version, str]:
    return version_sort_key(semver.Version.parse(release.version))


def _json(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


class VersionIndex:
    """Module address key → entry. Never mutated after construction."""

    def __init__(self, entries: Mapping[tuple[str, str, str], ModuleEntry]) -> None:
        self._entries = MappingProxyType(dict(entries))

    def get(self, namespace: str, name: str, system: str) -> ModuleEntry | None:
        return self._entries.get((namespace.lower(), name.lower(), system.lower()))

    def entries(self) -> list[ModuleEntry]:
        return list(self._entries.values())

    def items(self) -> list[tuple[tuple[str, str, str], ModuleEntry]]:
        return list(self._entries.items())

    def __len__(self) -> int:
        return len(self._entries)
