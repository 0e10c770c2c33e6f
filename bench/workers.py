"""What `--workers 2` buys: requests/s for modules.v1 `versions` and `download` from a
`gitreg serve --workers 2` against the same catalog served by one process.

All are `gitreg serve` processes, plain HTTP on 127.0.0.1, each with its own cache, loaded by
the same bounded client (wrk, with one thread: on a 2-core machine its second would take a core
from the workers) in alternating rounds. The figure that matters is the ratio (the goal on this
2-core machine: >= 1.7); a first row measures `versions` of one process against a second one,
the same way, to show the noise.

    python -m bench.workers [--rounds 7] [--concurrency 32] [--workers 2]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from bench.harness import free_port, gitreg_serve, module_repo, paired_requests_per_second, server

MODULES = "modules:\n  - {namespace: bench, name: mod, system: generic, repo: mod}\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        module_repo(root / "mod", [f"v1.{i}.0" for i in range(1, 21)])
        for name in ("one", "again", "workers"):
            # fresh_reads off: a check of the remote per window per process is not the subject.
            (root / f"{name}.yaml").write_text(
                f"cache_dir: {name}-cache\nfresh_reads: 0\n{MODULES}"
            )
        paths = {
            "versions": "/v1/modules/bench/mod/generic/versions",
            "download": "/v1/modules/bench/mod/generic/1.20.0/download",
        }
        ports = {name: free_port() for name in ("one", "again", "workers")}
        commands = {name: gitreg_serve(root / f"{name}.yaml", p) for name, p in ports.items()}
        commands["workers"] += ["--workers", str(args.workers)]
        serve = {name: server(commands[name], ports[name], "/readyz") for name in ports}
        results = {}
        with serve["one"] as one, serve["again"] as again, serve["workers"] as workers:
            p = paths["versions"]
            results["versions, 1 vs 1 (noise)"] = paired_requests_per_second(
                one + p, again + p, args.rounds, args.concurrency, threads=1
            )
            for name, p in paths.items():
                results[f"{name}, {args.workers} vs 1"] = paired_requests_per_second(
                    one + p, workers + p, args.rounds, args.concurrency, threads=1
                )
    print(
        f"{'endpoint (median of ' + str(args.rounds) + ' rounds)':<30}"
        f" {'1 process req/s':>16} {f'{args.workers} workers req/s':>17} {'ratio':>6}"
    )
    for name, (one_n, workers_n, ratio) in results.items():
        print(f"{name:<30} {one_n:>16.0f} {workers_n:>17.0f} {ratio:>6.2f}")


if __name__ == "__main__":
    main()
