"""Which published version a call resolves to today.

By its constraint, the newest it admits (as Terraform picks: a prerelease only when named
exactly); by its `ref`, the release of that tag or commit; or the version `modules.json`
recorded at the caller's last `terraform init`."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import semver

from gitreg.modules.index import ModuleEntry
from gitreg.modules.resolve import Release
from gitreg.tags import parse_version
from gitreg.version_constraints import VersionConstraint

_HEX = re.compile(r"[0-9a-f]{7,40}")
VERSIONS_REMEMBERED = 100_000  # distinct version strings parsed and kept by one Constraints


class Constraints:
    """`by_constraint` for builds of the index: each constraint and each version string parsed
    once (the same few version strings recur across thousands of modules), however many calls
    ask."""

    def __init__(self) -> None:
        self._parsed: dict[str, VersionConstraint | str] = {}  # the constraint, or its problem
        self._versions: dict[str, semver.Version | None] = {}  # None: no version

    def by_constraint(self, entry: ModuleEntry, constraint: str) -> tuple[Release | None, str]:
        """The newest release `constraint` admits ("" admits every one), and why none when
        none."""
        parsed = self._constraint(constraint)
        if isinstance(parsed, str):
            return None, parsed
        exact = _exact(parsed)
        if exact is not None:  # `= 1.2.0`: looked up, not searched for
            release = entry.by_version.get(exact)
            if release is not None:
                return release, ""
        releases = entry.versions.releases
        at = self._newest_admitted(parsed, (r.version for r in releases))
        if at is not None:
            return releases[at], ""
        if not releases:
            return None, "the module has no version yet"
        return None, f"no published version meets {constraint!r}"

    def newest(self, versions: Sequence[str], constraint: str) -> tuple[str, str]:
        """The newest of `versions` (newest first) that `constraint` admits, as `by_constraint`
        picks a release (a provider's versions); "" and why when none."""
        parsed = self._constraint(constraint)
        if isinstance(parsed, str):
            return "", parsed
        at = self._newest_admitted(parsed, versions)
        if at is not None:
            return versions[at], ""
        if not versions:
            return "", "no version is published yet"
        return "", f"no published version meets {constraint!r}"

    def _newest_admitted(
        self, parsed: VersionConstraint | None, versions: Iterable[str]
    ) -> int | None:
        """The position of the first of `versions` (newest first) `parsed` admits: a
        prerelease only when a clause names it exactly, as Terraform picks."""
        for at, text in enumerate(versions):
            version = self._version(text)
            if version is None:
                continue
            if version.prerelease is not None and not _named_exactly(parsed, version.prerelease):
                continue
            if parsed is None or parsed.admits(version):
                return at
        return None

    def _constraint(self, text: str) -> VersionConstraint | str | None:
        if not text.strip():
            return None
        parsed = self._parsed.get(text)
        if parsed is None:
            try:
                parsed = VersionConstraint.parse(text)
            except ValueError as exc:
                parsed = str(exc)
            self._parsed[text] = parsed
        return parsed

    def _version(self, text: str) -> semver.Version | None:
        if text in self._versions:
            return self._versions[text]
        try:
            version: semver.Version | None = parse_version(text.removeprefix("v"))
        except ValueError:
            version = None
        if len(self._versions) < VERSIONS_REMEMBERED:
            self._versions[text] = version
        return version


def _exact(parsed: VersionConstraint | None) -> str | None:
    """The one version a constraint of one `=` clause names, as the index keys it."""
    if parsed is None or len(parsed.clauses) != 1 or parsed.clauses[0].operator != "=":
        return None
    return str(parsed.clauses[0].version)


def _named_exactly(parsed: VersionConstraint | None, prerelease: str) -> bool:
    return parsed is not None and any(
        c.operator == "=" and c.version.prerelease == prerelease for c in parsed.clauses
    )


def by_constraint(entry: ModuleEntry, constraint: str) -> tuple[Release | None, str]:
    """The newest release `constraint` admits ("" admits every one), and why none when none."""
    return Constraints().by_constraint(entry, constraint)


def by_ref(entry: ModuleEntry, ref: str) -> tuple[Release | None, str]:
    """The release whose tag or commit `ref` names ("": the default branch, no release)."""
    if not ref:
        return None, "no ref: the default branch, which is no release"
    tag = ref.removeprefix("refs/tags/")
    for release in entry.versions.releases:
        if release.tag == tag:
            return release, ""
    if _HEX.fullmatch(ref):
        for release in entry.versions.releases:
            if release.commit.startswith(ref):
                return release, ""
    return None, f"ref {ref!r} is no published version's tag or commit"


def by_version(entry: ModuleEntry, version: str) -> tuple[Release | None, str]:
    """The release of `version` exactly (as `modules.json` records it)."""
    release = entry.by_version.get(version.removeprefix("v")) or entry.by_version.get(version)
    if release is None:
        return None, f"version {version} is not published here (any more)"
    return release, ""
