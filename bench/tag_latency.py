"""Time from a tag reaching Git to its version appearing in gitreg's versions response, for a
webhook, a watched local repository, polling, and a fresh read (no webhook, no watch, no poll:
the versions request itself checks the remote's tags): p50 and p99 over repeated tags. The
baseline, in the same run, is the `git push` of the tag itself.

    python -m bench.tag_latency [--tags 20] [--poll-interval 2]
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from bench.harness import free_port, git, git_daemon, module_repo, server

SECRET = "bench-secret"
FRESH_WINDOW = 1.0  # fresh_reads for the fresh-read server, in seconds


def _visible(base: str, module: str, version: str, deadline: float = 60.0) -> float:
    """Poll the versions response every 5 ms (bounded); the moment the version shows."""
    end = time.perf_counter() + deadline
    with httpx.Client(base_url=base, timeout=5) as client:
        while time.perf_counter() < end:
            listed = client.get(f"/v1/modules/bench/{module}/x/versions").json()["modules"][0][
                "versions"
            ]
            if {"version": version} in listed:
                return time.perf_counter()
            time.sleep(0.005)
    raise TimeoutError(f"{module} {version} did not appear")


def _measure(
    tags: int, release: Callable[[str], object], base: str, module: str, spread: float = 0.0
) -> list[float]:
    latencies = []
    rng = random.Random(1)
    for n in range(tags):
        time.sleep(rng.uniform(0, spread))  # for polling: not in step with the poller
        version = f"2.{n}.0"
        release(version)
        start = time.perf_counter()
        latencies.append(_visible(base, module, version) - start)
    return latencies


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tags", type=int, default=20)
    parser.add_argument("--poll-interval", type=float, default=2.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        works = {
            name: module_repo(root / name, ["v1.0.0"])
            for name in ("hooked", "watched", "polled", "fresh")
        }
        served = root / "served"
        for name in ("hooked", "polled", "fresh"):
            git(root, "clone", "-q", "--bare", str(works[name]), str(served / f"{name}.git"))
        daemon_port = free_port()
        pushes: list[float] = []

        def push(name: str) -> Callable[[str], None]:
            def release(version: str) -> None:
                git(works[name], "tag", f"v{version}")
                start = time.perf_counter()
                git(works[name], "push", "-q", str(served / f"{name}.git"), f"refs/tags/v{version}")
                pushes.append(time.perf_counter() - start)

            return release

        # a and b: fresh reads off, so that each mechanism is measured alone
        (root / "a.yaml").write_text(
            "cache_dir: cache-a\nrefresh_interval: 1h\nfresh_reads: 0\nwebhooks: {secret_file: secret}\nmodules:\n"
            f"  - {{namespace: bench, name: hooked, system: x, repo: 'git://127.0.0.1:{daemon_port}/hooked.git'}}\n"
            f"  - {{namespace: bench, name: watched, system: x, repo: {works['watched']}}}\n"
        )
        (root / "secret").write_text(SECRET)
        (root / "b.yaml").write_text(
            f"cache_dir: cache-b\nrefresh_interval: {args.poll_interval}s\nfresh_reads: 0\nmodules:\n"
            f"  - {{namespace: bench, name: polled, system: x, repo: 'git://127.0.0.1:{daemon_port}/polled.git'}}\n"
        )
        # Fresh reads alone: polling once a day, no webhook secret, a git:// repository (not
        # watched). Reads are at least FRESH_WINDOW apart, so each one checks the remote.
        (root / "c.yaml").write_text(
            f"cache_dir: cache-c\nrefresh_interval: 24h\nfresh_reads: {FRESH_WINDOW}s\nmodules:\n"
            f"  - {{namespace: bench, name: fresh, system: x, repo: 'git://127.0.0.1:{daemon_port}/fresh.git'}}\n"
        )
        results = {}
        with git_daemon(served, daemon_port):
            port_a, port_b, port_c = free_port(), free_port(), free_port()
            serve = [sys.executable, "-m", "gitreg", "serve", "--log-level", "warning", "--config"]
            with (
                server(
                    [*serve, str(root / "a.yaml"), "--listen", f"127.0.0.1:{port_a}"],
                    port_a,
                    "/healthz",
                ) as a,
                server(
                    [*serve, str(root / "b.yaml"), "--listen", f"127.0.0.1:{port_b}"],
                    port_b,
                    "/healthz",
                ) as b,
                server(
                    [*serve, str(root / "c.yaml"), "--listen", f"127.0.0.1:{port_c}"],
                    port_c,
                    "/healthz",
                ) as c,
            ):
                time.sleep(1)  # the watch starts

                def hook(version: str) -> None:
                    push("hooked")(version)
                    body = json.dumps(
                        {
                            "ref": f"refs/tags/v{version}",
                            "repository": {
                                "clone_url": f"git://127.0.0.1:{daemon_port}/hooked.git"
                            },
                        }
                    ).encode()
                    signature = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
                    httpx.post(
                        f"{a}/v1/webhooks/github",
                        content=body,
                        headers={
                            "X-GitHub-Event": "push",
                            "X-Hub-Signature-256": f"sha256={signature}",
                        },
                    ).raise_for_status()

                results["webhook"] = _measure(args.tags, hook, a, "hooked")
                results["watch"] = _measure(
                    args.tags, lambda v: git(works["watched"], "tag", f"v{v}"), a, "watched"
                )
                results["poll"] = _measure(
                    args.tags, push("polled"), b, "polled", args.poll_interval
                )

                def quietly(version: str) -> None:
                    time.sleep(FRESH_WINDOW + 0.2)  # no read in the window before the push
                    push("fresh")(version)

                results["fresh read"] = _measure(args.tags, quietly, c, "fresh")
    baseline = statistics.median(pushes)
    print(f"{args.tags} tags each; baseline: git push of one tag, median {baseline * 1000:.0f} ms")
    print(
        f"poll interval {args.poll_interval:g} s: tags pushed at random moments, so a poll finds one"
    )
    print("after half an interval on average")
    print(
        f"fresh read: the first versions request after the push lists the tag ({FRESH_WINDOW:g} s"
    )
    print("window; a read within the window of the last check is answered from the index)")
    print(f"{'mechanism':<10} {'p50 ms':>8} {'p99 ms':>8} {'p50/push':>9} {'p99/push':>9}")
    for name, values in results.items():
        p50, p99 = _p(values, 0.5), _p(values, 0.99)
        print(
            f"{name:<10} {p50 * 1000:>8.0f} {p99 * 1000:>8.0f} {p50 / baseline:>9.1f} {p99 / baseline:>9.1f}"
        )


if __name__ == "__main__":
    main()
