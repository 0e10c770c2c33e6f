"""What a source of the network mirror answers: a version's packages (`MirrorPackage`, with the
hashes known of each), and versions newest first. Shared by the local sources (`sources.py`) and
read-through (`readthrough.py`), which the network mirror asks last."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gitreg.tags import parse_version, version_sort_key


@dataclass(frozen=True)
class MirrorPackage:
    os: str
    arch: str
    filename: str
    path: Path | None  # None while only the origin has it (read-through)
    hashes: tuple[str, ...]  # h1: and zh:, as many as are known


def newest_first(versions: set[str]) -> list[str]:
    return sorted(versions, key=lambda v: version_sort_key(parse_version(v)), reverse=True)
