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


def _rounds(path: Path, rounds: int) -> list[float | None]:
    """Medians of `yaml.safe_load`, of PyYAML's C parse (None without libyaml), of `load_catalog`
    and of `load_catalog` with the pure-Python parser, measured in alternation."""
    text = path.read_text()
    actions: list[Callable[[], object] | None] = [
        lambda: yaml.safe_load(text),
        (lambda: yaml.load(text, Loader=yaml.CSafeLoader)) if yaml.__with_libyaml__ else None,
        lambda: load_catalog(path),
        lambda: load_catalog(path, libyaml=False),
    ]
    times: list[list[float]] = [[] for _ in actions]
    for _ in range(rounds):
        for action, measured in zip(actions, times, strict=True):
            if action is not None:
                measured.append(_timed(action))
    return [statistics.median(t) if t else None for t in times]


def _cell(seconds: float | None, base: float, width: int) -> str:
    if seconds is None:
        return f"{'-':>{width}}"
    return f"{f'{seconds * 1000:.0f} ({seconds / base:.2f}x)':>{width}}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--modules", type=int, nargs="+", default=[2000, 10000])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"libyaml: {yaml.__with_libyaml__}; ms (x safe_load), median of {args.rounds} rounds")
    names = ("safe_load", "C parse", "load_catalog", "load_catalog, pure")
    print(f"{'modules':>8}" + "".join(f"{name:>20}" for name in names))
    with tempfile.TemporaryDirectory() as tmp:
        for count in args.modules:
            path = write_catalog(Path(tmp) / f"registry-{count}.yaml", count)
            assert len(load_catalog(path).modules) == count
            medians = _rounds(path, args.rounds)
            base = medians[0]
            assert base is not None
            print(f"{count:>8}" + "".join(_cell(m, base, 20) for m in medians))


if __name__ == "__main__":
    main()
