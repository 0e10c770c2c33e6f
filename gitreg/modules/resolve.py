"""Tags → the versions of one module: matching, Semantic Version parsing, de-duplication."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import semver

from gitreg.catalog.specs import ModuleSpec
from gitreg.git.clone import TagRef
from gitreg.tags import version_sort_key


# Named tuples, not dataclasses: a catalog of 10,000 modules holds half a million of them, and a
# tuple is less than half the size of a dataclass instance with its attribute dictionary.
class Release(NamedTuple):
    """One published version: the version string served, the tag and commit behind it, the
    `deprecated:` line of `.gitreg.yaml` at that commit ("" when none: `clone_read.py` reads it
    once per commit, so that every list knows it without reading the commit again), and who
    signed its tag, under `require_signed_tags` ("" when not verified: `signed_tags.py`)."""

    version: str
    tag: str
    commit: str
    deprecated: str = ""
    signer: str = ""


class IgnoredTag(NamedTuple):
    tag: str
    reason: str


@dataclass(frozen=True, slots=True)
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
    # Versions repeat from one module to the next (every module of a release train has 1.2.0):
    # one string each, as the persisted index's are (modules/persisted.py), not one a module.
    made = (Release(sys.intern(str(c.version)), c.tag.name, c.tag.commit or "") for c in ordered)
    releases = tuple(made)
    return ModuleVersions(releases, tuple(sorted(ignored, key=lambda i: i.tag)), unmatched)


def _match(spec: ModuleSpec, tag: TagRef) -> tuple[_Candidate | None, str | None]:
    """The tag as a candidate version, or why not (None: it is not meant for this module)."""
    reason = None
    for rank, template in enumerate(spec.tags):
        version = template.version_of(tag.name)
        if version is None:
            reason = reason or template.problem(tag.name)
            continue
        if tag.commit is None:
            return None, "points at a tree or blob, not a commit"
        return _Candidate(version, rank, tag), None
    return None, reason


def unmatched_tags(spec: ModuleSpec, tags: Iterable[TagRef]) -> list[str]:
    """The names of the tags that fit none of the module's templates (what `unmatched` counts),
    those that fit but for letter case (`V1.2.0`) first: the likeliest slips."""
    names = [tag.name for tag in tags if _match(spec, tag) == (None, None)]
    return sorted(names, key=lambda name: (not _slip(spec, name), name))


def _slip(spec: ModuleSpec, name: str) -> bool:
    return any(template.fits_but_for_case(name) for template in spec.tags)


def slips(spec: ModuleSpec, tags: Iterable[TagRef]) -> list[str]:
    """The tags that fit one of the module's templates but for letter case."""
    return [name for name in unmatched_tags(spec, tags) if _slip(spec, name)]


def unmatched_text(spec: ModuleSpec, tags: Iterable[TagRef]) -> str:
    """The tags that fit none of the templates, as `list` and `check` say them: how many, then
    a few by name (`5 other tags fit none of v{version}: V2.0.0, V2.1.0, nightly and 2 more`),
    or "" when every tag fits one."""
    names = unmatched_tags(spec, tags)
    if not names:
        return ""
    templates = ", ".join(str(t) for t in spec.tags)
    tags_fit = "tag fits" if len(names) == 1 else "tags fit"
    return f"{len(names)} other {tags_fit} none of {templates}: {a_few(names)}"


def no_version_text(spec: ModuleSpec, versions: ModuleVersions, tags: Iterable[TagRef]) -> str:
    """Why a module has no version, as `check` says it: the tags left out and why (a folder
    missing at the tag's commit, a version that is no Semantic Version), then the tags that fit
    none of its templates. `list` shows the same tags, a line each."""
    templates = ", ".join(str(t) for t in spec.tags)
    left_out = [f"tag {i.tag}: {i.reason}" for i in versions.ignored]
    unmatched = unmatched_text(spec, tags)
    if left_out:
        said = a_few(left_out, separator="; ")
        return f"{said}{f'; and {unmatched}' if unmatched else ''}"
    if unmatched:
        return f"no tag fits {templates} ({unmatched})"
    return f"no tag fits {templates} (the repository has no tags)"


def a_few(items: Sequence[str], most: int = 3, separator: str = ", ") -> str:
    """The first `most` of `items`, then how many more: `a, b, c and 4 more`."""
    shown = separator.join(items[:most])
    return f"{shown} and {len(items) - most} more" if len(items) > most else shown
