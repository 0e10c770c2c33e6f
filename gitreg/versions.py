"""Tags → the versions of one module: matching, Semantic Version parsing, de-duplication."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import semver

from gitreg.catalog import ModuleSpec
from gitreg.gitsource import TagRef
from gitreg.tags import parse_version, version_sort_key


@dataclass(frozen=True)
class Release:
    """One published version: the version string served, and the tag and commit behind it."""

    version: str
    tag: str
    commit: str


@dataclass(frozen=True)
class IgnoredTag:
    tag: str
    reason: str


@dataclass(frozen=True)
class ModuleVersions:
    releases: tuple[Release, ...]  # newest first
    ignored: tuple[IgnoredTag, ...]
    unmatched: int  # tags that fit none of the module's templates


@dataclass(frozen=True)
class _Candidate:
    version: semver.Version
    template_rank: int
    tag: TagRef


def resolve_versions(
    spec: ModuleSpec, tags: Iterable[TagRef], has_folder: Callable[[str], bool]
) -> ModuleVersions:
    """The module's versions among `tags`; `has_folder(commit)` says if a commit holds spec.path."""
    ignored: list[IgnoredTag] = []
    unmatched = 0
    chosen: dict[str, _Candidate] = {}
    for tag in tags:
        candidate, reason = _match(spec, tag)
        if candidate is None:
            if reason is None:
                unmatched += 1
            else:
                ignored.append(IgnoredTag(tag.name, reason))
            continue
        assert tag.commit is not None
        if spec.path and not has_folder(tag.commit):
            ignored.append(
                IgnoredTag(tag.name, f"commit {tag.commit[:12]} has no folder {spec.path}")
            )
            continue
        key = str(candidate.version)
        rival = chosen.get(key)
        if rival is None:
            chosen[key] = candidate
            continue
        # v1.2.0 and 1.2.0 are one version: the earlier template wins, then the smaller tag name.
        winner, loser = sorted((rival, candidate), key=lambda c: (c.template_rank, c.tag.name))
        chosen[key] = winner
        ignored.append(
            IgnoredTag(loser.tag.name, f"same version {key} as tag {winner.tag.name}, which wins")
        )
    ordered = sorted(chosen.values(), key=lambda c: version_sort_key(c.version), reverse=True)
    releases = tuple(Release(str(c.version), c.tag.name, c.tag.commit or "") for c in ordered)
    return ModuleVersions(releases, tuple(sorted(ignored, key=lambda i: i.tag)), unmatched)


def _match(spec: ModuleSpec, tag: TagRef) -> tuple[_Candidate | None, str | None]:
    """The tag as a candidate version, or why not (None: it is not meant for this module)."""
    reason = None
    for rank, template in enumerate(spec.tags):
        text = template.version_text(tag.name)
        if text is None or not text[:1].isdigit():
            continue
        try:
            version = parse_version(text)
        except ValueError as exc:
            reason = reason or str(exc)
            continue
        if tag.commit is None:
            return None, "points at a tree or blob, not a commit"
        return _Candidate(version, rank, tag), None
    return None, reason
