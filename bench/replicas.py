"""Replicas that agree: from a tag's push to its version listed on every one of three `gitreg
serve` replicas on one PostgreSQL, the webhook sent to one of them only (the others are told
by NOTIFY and fetch themselves): p50 and p99 over repeated tags, against the `git push` itself,
measured in the same run.

    python -m bench.replicas [--tags 30]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import hmac
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from bench.harness import free_port, git, git_daemon, gitreg_serve, module_repo, server
from tests.support.postgres import postgres_server

SECRET = "bench-secret"
REPLICAS = 3


def _listed(client: httpx.Client, base: str, version: str) -> bool:
    answer = client.get(f"{base}/v1/modules/bench/hooked/x/versions")
    return {"version": version} in answer.json()["modules"][0]["versions"]


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tags", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, postgres_server() as db:
        root = Path(tmp)
        work = module_repo(root / "hooked", ["v1.0.0"])
        served = root / "served"
        git(root, "clone", "-q", "--bare", str(work), str(served / "hooked.git"))
        daemon_port = free_port()
        os.environ["GITREG_BENCH_DSN"] = db.database()
        (root / "secret").write_text(SECRET)
        ports = [free_port() for _ in range(REPLICAS)]
        for i in range(REPLICAS):
            (root / f"r{i}.yaml").write_text(
                f"cache_dir: cache-{i}\nrefresh_interval: 1h\nfresh_reads: 0\n"
                "webhooks: {secret_file: secret}\nstate:\n  postgres: {dsn_env: GITREG_BENCH_DSN}\n"
                "modules:\n"
                f"  - {{namespace: bench, name: hooked, system: x, repo: 'git://127.0.0.1:{daemon_port}/hooked.git'}}\n"
            )
        pushes: list[float] = []
        to_hooked: list[float] = []
        to_all: list[float] = []
        with git_daemon(served, daemon_port), contextlib.ExitStack() as stack:
            bases = [
                stack.enter_context(
                    server(gitreg_serve(root / f"r{i}.yaml", port), port, "/healthz")
                )
                for i, port in enumerate(ports)
            ]
            time.sleep(2)  # every replica's start-up fetch and LISTEN
            with httpx.Client(timeout=5) as client:
                for n in range(args.tags):
                    version = f"2.{n}.0"
                    git(work, "tag", f"v{version}")
                    start = time.perf_counter()
                    git(work, "push", "-q", str(served / "hooked.git"), f"refs/tags/v{version}")
                    pushes.append(time.perf_counter() - start)
                    body = json.dumps(
                        {"repository": f"git://127.0.0.1:{daemon_port}/hooked.git"}
                    ).encode()
                    signature = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
                    client.post(
                        f"{bases[0]}/v1/webhooks/generic",
                        content=body,
                        headers={"X-Gitreg-Signature": f"sha256={signature}"},
                    ).raise_for_status()
                    pending = set(range(REPLICAS))
                    deadline = start + 30
                    while pending and time.perf_counter() < deadline:
                        for i in sorted(pending):
                            if _listed(client, bases[i], version):
                                pending.discard(i)
                                if i == 0:
                                    to_hooked.append(time.perf_counter() - start)
                        time.sleep(0.005)
                    if pending:
                        raise TimeoutError(f"{version} not listed on replicas {sorted(pending)}")
                    to_all.append(time.perf_counter() - start)
    baseline = statistics.median(pushes)
    print(f"{args.tags} tags; {REPLICAS} replicas on one PostgreSQL; the webhook to replica 0 only")
    print(f"baseline: git push of one tag, median {baseline * 1000:.0f} ms")
    print(f"{'listed on':<22} {'p50 ms':>8} {'p99 ms':>8} {'p50/push':>9} {'p99/push':>9}")
    for name, values in (("the webhook's replica", to_hooked), ("every replica", to_all)):
        p50, p99 = _p(values, 0.5), _p(values, 0.99)
        print(
            f"{name:<22} {p50 * 1000:>8.0f} {p99 * 1000:>8.0f} {p50 / baseline:>9.1f} {p99 / baseline:>9.1f}"
        )


if __name__ == "__main__":
    main()
