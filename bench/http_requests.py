"""Requests per second for modules.v1 versions and download: gitreg against a bare Starlette app.

Both run under the same Hypercorn, each in its own process, plain HTTP on 127.0.0.1, loaded by
the same bounded client in the same run. The figure that matters is the ratio.

    python -m bench.http_requests [--rounds 5] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from bench.harness import (
    free_port,
    gitreg_serve,
    hypercorn_app,
    module_repo,
    paired_requests_per_second,
    server,
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        module_repo(root / "mod", [f"v1.{i}.0" for i in range(1, 21)])
        (root / "registry.yaml").write_text(
            "cache_dir: cache\nmodules:\n  - {namespace: bench, name: mod, system: generic, repo: mod}\n"
        )
        paths = {
            "versions": "/v1/modules/bench/mod/generic/versions",
            "download": "/v1/modules/bench/mod/generic/1.20.0/download",
        }
        results = {}
        bare_port, port = free_port(), free_port()
        bare_app = hypercorn_app("bench.bare_app:app", bare_port)
        with (
            server(bare_app, bare_port, paths["versions"]) as bare,
            server(gitreg_serve(root / "registry.yaml", port), port, paths["versions"]) as ours,
        ):
            for name, p in paths.items():
                results[name] = paired_requests_per_second(
                    bare + p, ours + p, args.rounds, args.concurrency
                )
    print(
        f"{'endpoint (median of ' + str(args.rounds) + ' rounds)':<30} {'bare req/s':>11} {'gitreg req/s':>13} {'ratio':>6}"
    )
    for name, (bare_n, ours_n, ratio) in results.items():
        print(f"{name:<30} {bare_n:>11.0f} {ours_n:>13.0f} {ratio:>6.2f}")


if __name__ == "__main__":
    main()
