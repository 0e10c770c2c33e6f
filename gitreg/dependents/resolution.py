"""Which published version a call resolves to today.

By its constraint, the newest it admits (as Terraform picks: a prerelease only when named
exactly); by its `ref`, the release of that tag or commit; or the version `modules.json`
recorded at the caller's last `terraform init`."""

from __future__ import annotations

import re

from gitreg.modules.index import ModuleEntry
from gitreg.modules.resolve import Release
from gitreg.tags import parse_version
from gitreg.version_constraints import VersionConstraint

_HEX = re.compile(r"[0-9a-f]{7,40}")


def by_constraint(entry: ModuleEntry, constraint: str) -> tuple[Release | None, str]:
    """The newest release `constraint` admits ("" admits every one), and why none when none."""
    try:
        parsed = VersionConstraint.parse(constraint) if constraint.strip() else None
    except ValueError as exc:
        return None, str(exc)
    for release in entry.versions.releases:  # newest first
        try:
            version = parse_version(release.version.removeprefix("v"))
        except ValueError:
            continue
        if version.prerelease is not None and not _named_exactly(parsed, version.prerelease):
            continue
        if parsed is None or parsed.admits(version):
            return release, ""
    if not entry.versions.releases:
        return None, "the module has no version yet"
    return None, f"no published version meets {constraint!r}"


def _named_exactly(parsed: VersionConstraint | None, prerelease: str) -> bool:
    return parsed is not None and any(
        c.operator == "=" and c.version.prerelease == prerelease for c in parsed.clauses
    )


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
