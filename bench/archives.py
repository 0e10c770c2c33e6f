"""Archive downloads: cold (built on the first request) and warm (from the cache), against
`git archive --format=tar.gz` on the same commit as the baseline, all in the same run.

    python -m bench.archives [--files 2000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import httpx

from bench.harness import free_port, git, gitreg_serve, server


def _timed(action: object) -> float:
    start = time.perf_counter()
    action()  # type: ignore[operator]
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    random.seed(1)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repo = root / "big"
        repo.mkdir()
        git(repo, "init", "-q")
        for i in range(args.files):
            path = repo / f"dir{i % 40}" / f"file{i}.tf"
            path.parent.mkdir(exist_ok=True)
            lines = (
                f'locals {{ v{i}_{j} = "{random.getrandbits(128):032x}" }}\n' for j in range(60)
            )
            path.write_text(f"# file {i}\n" + "".join(lines))
        commits = []
        for n in range(args.rounds):
            (repo / "round.txt").write_text(str(n))
            git(repo, "add", "--all")
            git(repo, "commit", "-qm", f"round {n}")
            git(repo, "tag", f"v1.0.{n}")
            commits.append(git(repo, "rev-parse", "HEAD"))
        (root / "registry.yaml").write_text(
            "cache_dir: cache\nmodules:\n  - {namespace: bench, name: big, system: generic, repo: big}\n"
        )
        port = free_port()
        command = gitreg_serve(root / "registry.yaml", port)
        cold, warm, baseline = [], [], []
        size = 0
        with (
            server(command, port, "/healthz") as base,
            httpx.Client(base_url=base, timeout=120) as client,
        ):
            for n, commit in enumerate(commits):
                location = client.get(f"/v1/modules/bench/big/generic/1.0.{n}/download").json()[
                    "location"
                ]
                cold.append(_timed(lambda loc=location: client.get(loc).raise_for_status()))
                warm.append(_timed(lambda loc=location: client.get(loc).raise_for_status()))
                size = len(client.get(location).content)
                baseline.append(
                    _timed(
                        lambda c=commit: subprocess.run(
                            ["git", "archive", "--format=tar.gz", c],
                            cwd=repo,
                            check=True,
                            capture_output=True,
                        )
                    )
                )
    ms = {
        name: statistics.median(values) * 1000
        for name, values in (
            ("git archive", baseline),
            ("gitreg cold", cold),
            ("gitreg warm", warm),
        )
    }
    print(f"{args.files} files, archive {size / 1e6:.1f} MB, median of {args.rounds} rounds")
    for name, value in ms.items():
        print(f"{name:<12} {value:9.1f} ms   ratio to git archive {value / ms['git archive']:.2f}")
    print(f"warm / cold  {ms['gitreg warm'] / ms['gitreg cold']:.3f}")


if __name__ == "__main__":
    main()
