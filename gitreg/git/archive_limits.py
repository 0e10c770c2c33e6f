"""What one module archive may hold: a value of its own, so that registry.yaml's `archives:`
section can name it without loading the archive builder (and dulwich) with the catalog."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class ArchiveLimits:
    """What one archive may hold; over any of them the archive is refused, naming the limit."""

    max_file_size: int = 512 * 2**20
    max_size: int = 2 * 2**30  # the sum of the files' sizes, before compression
    max_entries: int = 100_000
