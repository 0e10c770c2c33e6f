"""Published versions do not change under users: what to do when a published tag moves or goes.

A tag's published commit is the one the ledger recorded when gitreg first saw it. Per module:
- moved tag: `pin` keeps serving the published commit (and warns), `follow` serves the new one,
  `quarantine` stops serving the version until an operator runs `gitreg accept`;
- deleted tag: `keep` goes on serving the published commit, `remove` drops the version.
A pinned or kept tag whose published commit is not in the clone is `withheld`: never served at
another commit (a replica that started after the tag moved, when the old commit is gone).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from gitreg.catalog.specs import ModuleSpec
from gitreg.git.clone import TagRef
from gitreg.tags import released_version

Action = Literal["pinned", "followed", "quarantined", "kept", "removed", "withheld"]


@dataclass(frozen=True)
class TagChange:
    """A published tag that moved (current is its new commit) or was deleted (current is None)."""

    tag: str
    published: str
    current: str | None
    action: Action

    @property
    def kind(self) -> str:
        return "deleted" if self.current is None else "moved"

    def __str__(self) -> str:
        if self.action == "withheld":
            return (
                f"tag {self.tag} moved from {self.published[:12]} to"
                f" {str(self.current)[:12]}: withheld (the published commit is not in the clone)"
            )
        if self.current is None:
            return f"tag {self.tag} was deleted (published {self.published[:12]}): {self.action}"
        return (
            f"tag {self.tag} moved from {self.published[:12]} to {self.current[:12]}: {self.action}"
        )


def effective_tags(
    spec: ModuleSpec,
    tags: Iterable[TagRef],
    published: Mapping[str, str],
    has_commit: Callable[[str], bool],
) -> tuple[list[TagRef], list[TagChange]]:
    """The tags to read versions from, after the module's policies, and what they changed."""
    result: list[TagRef] = []
    changes: list[TagChange] = []
    current = {}
    for tag in tags:
        current[tag.name] = tag
        first = published.get(tag.name)
        if (
            first is None
            or tag.commit is None
            or first == tag.commit
            or not _concerns(spec, tag.name)
        ):
            result.append(tag)
        elif spec.moved_tags == "pin" and not has_commit(first):
            changes.append(TagChange(tag.name, first, tag.commit, "withheld"))
        elif spec.moved_tags == "pin":
            result.append(TagRef(tag.name, first))
            changes.append(TagChange(tag.name, first, tag.commit, "pinned"))
        elif spec.moved_tags == "follow":
            result.append(tag)
            changes.append(TagChange(tag.name, first, tag.commit, "followed"))
        else:
            changes.append(TagChange(tag.name, first, tag.commit, "quarantined"))
    for name, first in sorted(published.items()):
        if name in current or not _concerns(spec, name):
            continue
        if spec.deleted_tags == "keep" and has_commit(first):
            result.append(TagRef(name, first))
            changes.append(TagChange(name, first, None, "kept"))
        else:
            changes.append(TagChange(name, first, None, "removed"))
    return result, changes


def _concerns(spec: ModuleSpec, tag: str) -> bool:
    return released_version(spec.tags, tag) is not None
