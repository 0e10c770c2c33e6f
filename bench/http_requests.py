"""Requests per second for modules.v1 versions and download: gitreg against a bare Starlette app.

Both run under the same Hypercorn, each in its own process, plain HTTP on 127.0.0.1, loaded by
the same bounded client in the same run. The figure that matters is the ratio.

    python -m bench.http_requests [--requests 2000] [--concurrency 16]
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
    requests_per_second,
    server,
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=2000)
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
        results: dict[str, dict[str, float]] = {}
        port = free_port()
        with server(hypercorn_app("bench.bare_app:app", port), port, paths["versions"]) as base:
            results["bare"] = {
                name: requests_per_second(base + p, args.requests, args.concurrency)
                for name, p in paths.items()
            }
        port = free_port()
        command = gitreg_serve(root / "registry.yaml", port)
        with server(command, port, paths["versions"]) as base:
            results["gitreg"] = {
                name: requests_per_second(base + p, args.requests, args.concurrency)
                for name, p in paths.items()
            }
    print(f"{'endpoint':<10} {'bare req/s':>12} {'gitreg req/s':>14} {'ratio':>7}")
    for name in paths:
        bare, ours = results["bare"][name], results["gitreg"][name]
        print(f"{name:<10} {bare:>12.0f} {ours:>14.0f} {ours / bare:>7.2f}")


if __name__ == "__main__":
    main()
