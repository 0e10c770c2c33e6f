"""The process's pacing as `gitreg serve` installs it, for the length of a test."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from gitreg import pacing
from gitreg.process.cpu_budget import CpuBudget
from gitreg.process.heap import collector_paused


@contextlib.contextmanager
def installed(pacer: pacing.Pacer) -> Iterator[None]:
    """`pacer`, and the process's collector pauses, behind what domain code calls; the ones
    before put back after the block."""
    restore = pacing.install(pacer, collector_paused)
    try:
        yield
    finally:
        restore()


class Recording(pacing.Unpaced):
    """A pacer that paces nothing and notes each breath and each charge."""

    def __init__(self) -> None:
        self.breaths = 0
        self.charged: list[float] = []

    def breathe(self) -> None:
        self.breaths += 1

    def charge(self, spent: float) -> None:
        self.charged.append(spent)


def busy_budget(sleep: Callable[[float], None]) -> CpuBudget:
    """A budget as while requests keep arriving, whose rests go to `sleep` (a recorder)."""
    budget = CpuBudget(busy_for=float("inf"), sleep=sleep)
    budget.request_arrived()
    return budget
