"""What one module archive may hold, and how many archives' bytes a process keeps in memory.

These are values of their own, so that registry.yaml's `archives:` section can name them without
loading the archive builder (and dulwich) with the catalog."""

from __future__ import annotations

from dataclasses import dataclass

# archives.memory_budget's default: hundreds of typical archives, or a few of 2 MiB
ARCHIVE_MEMORY_BUDGET = 32 * 2**20


@dataclass(frozen=True, kw_only=True)
class ArchiveLimits:
    """What one archive may hold; over any of them the archive is refused, naming the limit."""

    max_file_size: int = 512 * 2**20
    max_size: int = 2 * 2**30  # the sum of the files' sizes, before compression
    max_entries: int = 100_000
