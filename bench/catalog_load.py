"""Reading registry.yaml: `load_catalog` of a monorepo catalog of 2,000 and 10,000 modules
(namespace, name, system, repo, path, tags; 10 modules a repository, half of the repositories
written as https URLs, half as scp-like ssh), against `yaml.safe_load` of the same file (the
bare parse, pure Python) measured in the same run, in alternating rounds.

    python -m bench.catalog_load [--modules 2000 10000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from gitreg.catalog.load import load_catalog


def write_catalog(path: Path, modules: int, per_repository: int = 10) -> Path:
    lines = ["cache_dir: cache", "modules:"]
    for n in range(modules):
        r, m = divmod(n, per_repository)
        repo = (
            f"https://git.example.com/infra/r{r}.git"
            if r % 2
            else f"git@git.example.com:infra/r{r}.git"
        )
        lines += [
            "  - namespace: platform",
            f"    name: r{r}m{m}",
            "    system: aws",
            f"    repo: {repo}",
            f"    path: modules/mod{m}",
            f"    tags: mod{m}/v{{version}}",
        ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def _rounds(path: Path, rounds: int) -> tuple[float, float | None, float]:
    """Medians of `yaml.safe_load`, of PyYAML's C parse (None without libyaml), and of
    `load_catalog`, measured in alternation."""
    text = path.read_text()
    bare: list[float] = []
    c_parse: list[float] = []
    loads: list[float] = []
    for _ in range(rounds):
        bare.append(_timed(lambda: yaml.safe_load(text)))
        if yaml.__with_libyaml__:
            c_parse.append(_timed(lambda: yaml.load(text, Loader=yaml.CSafeLoader)))
        loads.append(_timed(lambda: load_catalog(path)))
    c = statistics.median(c_parse) if c_parse else None
    return statistics.median(bare), c, statistics.median(loads)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--modules", type=int, nargs="+", default=[2000, 10000])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"libyaml: {yaml.__with_libyaml__}; median of {args.rounds} rounds")
    print(
        f"{'modules':>8} {'safe_load ms':>13} {'C parse ms':>11} {'load_catalog ms':>16} {'x safe_load':>12}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for count in args.modules:
            path = write_catalog(Path(tmp) / f"registry-{count}.yaml", count)
            assert len(load_catalog(path).modules) == count
            base, c_parse, load = _rounds(path, args.rounds)
            c = f"{c_parse * 1000:>11.0f}" if c_parse is not None else f"{'-':>11}"
            print(f"{count:>8} {base * 1000:>13.0f} {c} {load * 1000:>16.0f} {load / base:>12.2f}")


if __name__ == "__main__":
    main()
