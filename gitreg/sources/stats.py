"""What a source's listings cost and met, counted for `/v1/status` and `/metrics`.

API calls, rate-limit waits and errors; and, per source, those of every survey of this
process added up, with the surveys by outcome."""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Literal, Protocol, get_args, runtime_checkable

Outcome = Literal["ok", "unavailable", "refused", "held"]
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)


@dataclass
class SourceStats:
    """Counters a lister moves as it works (its pages asked on several threads at once: each
    count moved under a lock); readers in other threads see each count whole. A rate-limited
    answer counts as a wait, not an error: every other fault that ends a listing (down, refused,
    a malformed answer) is one error."""

    api_calls: int = 0
    rate_limit_waits: int = 0
    errors: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)

    def count(self, api_calls: int = 0, rate_limit_waits: int = 0, errors: int = 0) -> None:
        with self._lock:
            self.api_calls += api_calls
            self.rate_limit_waits += rate_limit_waits
            self.errors += errors


@runtime_checkable
class Counted(Protocol):
    """A lister that counts what it asks (a forge's; a folder asks no API)."""

    @property
    def stats(self) -> SourceStats: ...


@dataclass(frozen=True)
class SourceTotals:
    """A source's surveys in this process, by outcome, and what their listings counted."""

    surveys: Counter[Outcome] = field(default_factory=Counter)
    api_calls: int = 0
    rate_limit_waits: int = 0
    errors: int = 0

    def after(self, outcome: Outcome, stats: SourceStats | None) -> SourceTotals:
        """These totals with one more survey, of `outcome`, whose lister counted `stats`."""
        counted = stats or SourceStats()
        return SourceTotals(
            self.surveys + Counter({outcome: 1}),
            self.api_calls + counted.api_calls,
            self.rate_limit_waits + counted.rate_limit_waits,
            self.errors + counted.errors,
        )
