"""What a private registry costs: requests/s for modules.v1 `versions` and `download`, and the
archive a download points at, with a token (and the signed URL) against the same catalog
served without auth.

Both are `gitreg serve` processes, plain HTTP on 127.0.0.1, loaded by the same bounded client in
alternating rounds. The figure that matters is the ratio (the goal: >= 0.9); a first row
measures `versions` against a second open server, the same way, to show the noise.

    python -m bench.auth [--rounds 5] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
from pathlib import Path

import httpx

from bench.harness import free_port, gitreg_serve, module_repo, paired_requests_per_second, server

TOKEN = "gitreg_bench-token-for-the-private-namespace"
MODULES = "modules:\n  - {namespace: bench, name: mod, system: generic, repo: mod}\n"
AUTH = (
    "auth:\n  download_ttl: 1h\n  tokens:\n"
    f'    - {{name: bench, token_sha256: "{hashlib.sha256(TOKEN.encode()).hexdigest()}",'
    " read: [bench]}\n"
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    token = {"Authorization": f"Bearer {TOKEN}"}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        module_repo(root / "mod", [f"v1.{i}.0" for i in range(1, 21)])
        (root / "open.yaml").write_text(f"cache_dir: open-cache\n{MODULES}")
        (root / "private.yaml").write_text(f"cache_dir: private-cache\n{MODULES}{AUTH}")
        (root / "again.yaml").write_text(f"cache_dir: again-cache\n{MODULES}")
        paths = {
            "versions": "/v1/modules/bench/mod/generic/versions",
            "download": "/v1/modules/bench/mod/generic/1.20.0/download",
        }
        results = {}
        ports = {name: free_port() for name in ("open", "private", "again")}
        serve = {
            name: server(gitreg_serve(root / f"{name}.yaml", port), port, "/readyz")
            for name, port in ports.items()
        }
        with serve["open"] as bare, serve["private"] as ours, serve["again"] as again:
            p = paths["versions"]
            results["versions, open vs open"] = paired_requests_per_second(
                bare + p, again + p, args.rounds, args.concurrency
            )
            for name, p in paths.items():
                results[name] = paired_requests_per_second(
                    bare + p, ours + p, args.rounds, args.concurrency, token
                )
            # The archive: public by its plain location, private by its signed URL, no token.
            public = httpx.get(bare + paths["download"]).json()["location"]
            signed = httpx.get(ours + paths["download"], headers=token).json()["location"]
            assert "signature=" in signed and "signature=" not in public
            results["archive (signed URL)"] = paired_requests_per_second(
                bare + public, ours + signed, args.rounds, args.concurrency
            )
    print(
        f"{'endpoint (median of ' + str(args.rounds) + ' rounds)':<30}"
        f" {'open req/s':>11} {'private req/s':>14} {'ratio':>6}"
    )
    for name, (open_n, private_n, ratio) in results.items():
        print(f"{name:<30} {open_n:>11.0f} {private_n:>14.0f} {ratio:>6.2f}")


if __name__ == "__main__":
    main()
