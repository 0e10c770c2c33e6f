"""modules.v1 `versions` and `download`: gitreg against a bare Starlette app, req/s and p50/p99.

Both run under the same Hypercorn, each in its own process pinned to one core (taskset), plain
HTTP on 127.0.0.1, loaded by wrk (pinned to the other core) in alternating rounds, each round in
the other order; for a catalog of 10 modules and one of 10,000 modules x 50 versions (one
repository tagged v1.1.0 .. v1.50.0 that every module is read from: the index has the shape of
bench.scale's, without its 1,000 clones). The figures that matter are the ratios.

    python -m bench.http_requests [--rounds 4] [--concurrency 50] [--seconds 3]
        [--modules 10,10000] [--gc]

--gc runs gitreg under bench.gc_probe and prints the garbage collections made under load.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.harness import Load, free_port, git, gitreg_serve, hypercorn_app, started, wrk_latency

VERSIONS = 50
SERVER_CPU, LOAD_CPU = "1", "0"


@dataclass(frozen=True)
class Row:
    catalog: str
    endpoint: str
    bare: list[Load]
    ours: list[Load]

    def median(self, which: list[Load], field: str) -> float:
        return float(statistics.median(getattr(load, field) for load in which))

    def ratio(self, field: str) -> float:
        """The median of the per-round ratios gitreg / bare."""
        return float(
            statistics.median(
                getattr(o, field) / getattr(b, field)
                for b, o in zip(self.bare, self.ours, strict=True)
            )
        )


def _repository(path: Path) -> None:
    """One module's repository, a commit per version, tagged v1.1.0 .. v1.50.0."""
    path.mkdir(parents=True)
    git(path, "init", "-q")
    for i in range(1, VERSIONS + 1):
        (path / "main.tf").write_text(f'output "x" {{ value = {i} }}\n')
        git(path, "add", "main.tf")
        git(path, "commit", "-qm", f"v{i}")
        git(path, "tag", f"v1.{i}.0")


def _catalog(path: Path, modules: int) -> None:
    # A cache of its own, cold: the index is read by the first fetch, after start-up, as on a
    # registry's first start or after any change (not what start-up read and froze).
    lines = [
        f"cache_dir: cache-{modules}",
        "refresh_interval: 1h",
        "watch_catalog: false",
        "modules:",
    ]
    lines += [
        f"  - {{namespace: bench, name: m{m}, system: generic, repo: mod}}" for m in range(modules)
    ]
    path.write_text("\n".join(lines) + "\n")


def _measure(
    root: Path, modules: int, rounds: int, concurrency: int, seconds: int, gc: bool
) -> tuple[list[Row], dict[str, object] | None]:
    config = root / f"registry-{modules}.yaml"
    _catalog(config, modules)
    module = f"/v1/modules/bench/m{modules // 2}/generic"
    paths = {"versions": f"{module}/versions", "download": f"{module}/1.{VERSIONS}.0/download"}
    bare_port, port = free_port(), free_port()
    pin = ["taskset", "-c", SERVER_CPU]
    ours_command = gitreg_serve(config, port)
    probe = root / f"gc-{modules}.json"
    if gc:
        ours_command[1:3] = ["-m", "bench.gc_probe", str(probe)]
    os.environ["BENCH_VERSIONS"] = str(VERSIONS)
    rows = []
    with (
        started(
            pin + hypercorn_app("bench.bare_app:app", bare_port), bare_port, paths["versions"]
        ) as (bare, _),
        started(pin + ours_command, port, paths["versions"]) as (ours, process),
    ):
        _idle(process.pid)  # the first fetch of the repository, in the background
        for p in paths.values():  # warm-up, not counted
            wrk_latency(bare + p, concurrency, 1, cpus=LOAD_CPU)
            wrk_latency(ours + p, concurrency, 1, cpus=LOAD_CPU)
        if gc:
            process.send_signal(signal.SIGUSR2)
        for name, p in paths.items():
            bare_loads: list[Load] = []
            our_loads: list[Load] = []
            for n in range(rounds):
                order = [(bare, bare_loads), (ours, our_loads)]
                for base, loads in order if n % 2 == 0 else order[::-1]:
                    loads.append(wrk_latency(base + p, concurrency, seconds, cpus=LOAD_CPU))
            rows.append(Row(f"{modules} modules", name, bare_loads, our_loads))
        stats = None
        if gc:
            process.send_signal(signal.SIGUSR2)  # the figures, before the shutdown's own
            for _ in range(200):
                if probe.exists():
                    break
                time.sleep(0.05)
            stats = json.loads(probe.read_text())
    return rows, stats


def _idle(pid: int, most: float = 600.0) -> None:
    """Until the process used under 2% of a core for half a second (from /proc), at most `most` s."""
    deadline = time.monotonic() + most

    def cpu() -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    before = cpu()
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = cpu()
        if now - before < 0.01:
            return
        before = now


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("--modules", default="10,10000", help="catalog sizes, comma-separated")
    parser.add_argument("--gc", action="store_true", help="count gitreg's garbage collections")
    args = parser.parse_args()
    rows: list[Row] = []
    collections = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _repository(root / "mod")
        for modules in (int(m) for m in args.modules.split(",")):
            measured, stats = _measure(
                root, modules, args.rounds, args.concurrency, args.seconds, args.gc
            )
            rows += measured
            if stats is not None:
                collections[modules] = stats
    print(
        f"wrk -c{args.concurrency}, {args.rounds} alternating rounds of {args.seconds} s, "
        f"{VERSIONS} versions; medians (ms)"
    )
    head = f"{'catalog':<14} {'endpoint':<9} {'':>6} {'req/s':>7} {'p50':>6} {'p99':>6}"
    print(head)
    for row in rows:
        for who, loads in (("bare", row.bare), ("gitreg", row.ours)):
            print(
                f"{row.catalog:<14} {row.endpoint:<9} {who:>6} {row.median(loads, 'rps'):>7.0f}"
                f" {row.median(loads, 'p50') * 1000:>6.1f} {row.median(loads, 'p99') * 1000:>6.1f}"
            )
        print(
            f"{row.catalog:<14} {row.endpoint:<9} {'ratio':>6} {row.ratio('rps'):>7.2f}"
            f" {row.ratio('p50'):>6.2f} {row.ratio('p99'):>6.2f}"
        )
    for modules, stats in collections.items():
        print(f"gitreg's garbage collections under load, {modules} modules: {json.dumps(stats)}")


if __name__ == "__main__":
    main()
