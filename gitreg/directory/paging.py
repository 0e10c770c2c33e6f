"""A list cut into pages: numbered pages of a bounded size for people, an offset and a limit
for the registry API. Both are cut from runs (a namespace's modules, each) by their lengths
alone, so that a page costs its own items and a look per run, never the whole directory."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

_T = TypeVar("_T")


def window(runs: Sequence[Sequence[_T]], offset: int, limit: int) -> tuple[list[_T], int]:
    """At most `limit` items of `runs` joined, from `offset` on; and how many they hold in all."""
    page: list[_T] = []
    seen = 0
    for run in runs:
        size = len(run)
        if len(page) < limit and offset < seen + size:
            start = max(0, offset - seen)
            page.extend(run[start : start + limit - len(page)])
        seen += size
    return page, seen


@dataclass(frozen=True)
class Page:
    """Page `number` (from 1) of a list of `total` items, `size` a page. An empty list has one
    page, empty; a number past the last is no page (`exists`)."""

    number: int
    size: int
    total: int

    @property
    def count(self) -> int:
        return max(1, -(-self.total // self.size))

    @property
    def exists(self) -> bool:
        return 1 <= self.number <= self.count

    @property
    def start(self) -> int:
        return (self.number - 1) * self.size

    @property
    def stop(self) -> int:
        return min(self.total, self.start + self.size)

    @property
    def previous(self) -> int | None:
        return self.number - 1 if self.number > 1 else None

    @property
    def next(self) -> int | None:
        return self.number + 1 if self.number < self.count else None
