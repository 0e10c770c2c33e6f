"""`versions` req/s of two servers in alternation, round by round, with each round's CPU a
request (the server's own and its git's, from /proc): on this shared machine one run's median
ratio moved from 0.78 to 1.23 with nothing changed, so each row also says its rounds' range, and
the CPU a request, which the time other tenants take from the cores does not count."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from bench.harness import requests_per_second
from bench.scale.server import cpu_with_reaped

SECONDS = 3.0  # of each wrk round (harness: wrk -d3s)


@dataclass(frozen=True)
class Paired:
    rates: list[tuple[float, float]]  # each round's req/s: (baseline, measured)
    costs: list[tuple[float, float]]  # and CPU seconds a request

    def ratio(self) -> float:
        """The median of the rounds' measured / baseline req/s."""
        return statistics.median(m / b for b, m in self.rates)

    def rate_range(self) -> tuple[float, float]:
        ratios = [m / b for b, m in self.rates]
        return min(ratios), max(ratios)

    def cost_ratio(self) -> float:
        """The median of the rounds' measured / baseline CPU a request (above 1: dearer)."""
        return statistics.median(m / b for b, m in self.costs)

    def medians(self) -> tuple[float, float]:
        return (
            statistics.median(b for b, _ in self.rates),
            statistics.median(m for _, m in self.rates),
        )


def paired(
    baseline: tuple[str, int], measured: tuple[str, int], rounds: int, concurrency: int
) -> Paired:
    """(url, server pid) of each: `rounds` wrk rounds of each, in alternation, each pair in the
    other order."""
    rates, costs = [], []
    for n in range(rounds):
        order = (baseline, measured) if n % 2 == 0 else (measured, baseline)
        got: dict[str, tuple[float, float]] = {}
        for url, pid in order:
            before = cpu_with_reaped(pid)
            rate = requests_per_second(url, concurrency=concurrency, rounds=1)
            got[url] = rate, (cpu_with_reaped(pid) - before) / (rate * SECONDS)
        (b_rate, b_cost), (m_rate, m_cost) = got[baseline[0]], got[measured[0]]
        rates.append((b_rate, m_rate))
        costs.append((b_cost, m_cost))
    return Paired(rates, costs)
