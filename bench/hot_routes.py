"""The hot routes against the bare framework: discovery, modules.v1 `versions` and `download`,
providers.v1 `versions` and `download`, and the network mirror's `index.json` and
`VERSION.json`, from gitreg with auth off and on (a token that opens the namespaces and the
mirror), each as a ratio to a bare Starlette app under the same Hypercorn answering a constant.

Every server is its own process pinned to core 1 (taskset), wrk (one thread, `--concurrency`
connections) pinned to core 0; plain HTTP on 127.0.0.1. Each round loads every server in turn,
in another order each round; the figures are the medians of the per-round ratios. `--tree`
(repeatable) runs gitreg from another checkout (`--tree /work/main` for the code before a
change), so that before and after are measured in the same run, against the same baseline.

    python -m bench.hot_routes [--rounds 3] [--seconds 3] [--concurrency 50]
        [--tree PATH ...] [--routes discovery,versions,...]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import re
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from bench.harness import free_port, gitreg_serve, hypercorn_app, module_repo, started
from bench.mirror import _release

SERVER_CPU, LOAD_CPU = "1", "0"
HOST = "registry.bench.test"
TOKEN = "gitreg_bench-token-for-the-hot-routes"
PROVIDER_VERSIONS = [f"1.{n}.0" for n in range(1, 6)]
MODULE_VERSIONS = 20
ROUTES = {
    "discovery": "/.well-known/terraform.json",
    "versions": "/v1/modules/bench/mod/generic/versions",
    "download": f"/v1/modules/bench/mod/generic/1.{MODULE_VERSIONS}.0/download",
    "provider versions": "/v1/providers/acme/widget/versions",
    "provider download": "/v1/providers/acme/widget/1.5.0/download/linux/amd64",
    "mirror index.json": f"/v1/mirror/{HOST}/acme/widget/index.json",
    "mirror VERSION.json": f"/v1/mirror/{HOST}/acme/widget/1.5.0.json",
}
_CATALOG = f"""hostname: {HOST}
refresh_interval: 1h
watch_catalog: false
signing: {{keys: [bench.asc]}}
providers:
  - {{namespace: acme, type: widget, artifacts: releases}}
mirror: {{read_through: false}}
modules:
  - {{namespace: bench, name: mod, system: generic, repo: mod}}
"""
_AUTH = (
    "auth:\n  download_ttl: 1h\n  tokens:\n"
    f'    - {{name: bench, token_sha256: "{hashlib.sha256(TOKEN.encode()).hexdigest()}",'
    " read: [bench, acme], mirror: true}\n"
)


@dataclass(frozen=True)
class Server:
    name: str  # "bare", or "<tree> auth off|on"
    base: str
    headers: dict[str, str] = field(default_factory=dict)


def _wrk(url: str, concurrency: int, seconds: int, headers: dict[str, str]) -> float:
    header_args = [arg for k, v in headers.items() for arg in ("-H", f"{k}: {v}")]
    wrk = ["wrk", "-t1", f"-c{concurrency}", f"-d{seconds}s", *header_args, url]
    out = subprocess.run(
        ["taskset", "-c", LOAD_CPU, *wrk],
        capture_output=True,
        text=True,
        check=True,
        timeout=60 + seconds,
    ).stdout
    if "Non-2xx" in out:  # timeouts are not errors: a slow server's figure says it
        raise RuntimeError(f"errors under load from {url}:\n{out}")
    found = re.search(r"Requests/sec:\s+([\d.]+)", out)
    assert found is not None, out
    return float(found[1])


def _gitreg(tree: Path, config: Path, port: int) -> list[str]:
    # env -C: `python -m` puts the working folder first on sys.path, so it picks the checkout.
    where = ["taskset", "-c", SERVER_CPU, "env", "-C", str(tree), f"PYTHONPATH={tree}"]
    return [*where, *gitreg_serve(config, port)]


def _world(root: Path) -> None:
    """A module of MODULE_VERSIONS versions, a signed provider of five, and its signing key."""
    import pgpy
    from pgpy.constants import EllipticCurveOID, HashAlgorithm, KeyFlags, PubKeyAlgorithm

    module_repo(root / "mod", [f"v1.{i}.0" for i in range(1, MODULE_VERSIONS + 1)])
    key = pgpy.PGPKey.new(PubKeyAlgorithm.EdDSA, EllipticCurveOID.Ed25519)
    key.add_uid(pgpy.PGPUID.new("bench"), usage={KeyFlags.Sign}, hashes=[HashAlgorithm.SHA256])
    (root / "bench.asc").write_text(str(key))
    for version in PROVIDER_VERSIONS:
        _release(root / "releases" / version, version, b"x" * 1024, key)


@contextlib.contextmanager
def _servers(root: Path, trees: list[Path]) -> Iterator[list[Server]]:
    os.environ["BENCH_VERSIONS"] = str(MODULE_VERSIONS)
    token = {"Authorization": f"Bearer {TOKEN}"}
    with contextlib.ExitStack() as stack:
        port = free_port()
        command = ["taskset", "-c", SERVER_CPU, *hypercorn_app("bench.bare_app:app", port)]
        base, _ = stack.enter_context(started(command, port, ROUTES["versions"]))
        servers = [Server("bare", base)]
        for n, tree in enumerate(trees):
            for auth in (False, True):
                config = root / f"registry-{n}-{'on' if auth else 'off'}.yaml"
                config.write_text(f"cache_dir: {config.stem}\n{_CATALOG}{_AUTH if auth else ''}")
                port = free_port()
                base, _ = stack.enter_context(started(_gitreg(tree, config, port), port, "/readyz"))
                label = f"{tree.name} auth {'on' if auth else 'off'}"
                servers.append(Server(label, base, token if auth else {}))
        for server in servers:
            for name, path in ROUTES.items():
                _ready(server, name, path)
        yield servers


def _ready(server: Server, name: str, path: str) -> None:
    """Each route answers 200 (the first fetch and the provider scan may still run)."""
    for _ in range(300):
        answer = httpx.get(server.base + path, headers=server.headers, timeout=10)
        if answer.status_code == 200:
            return
        time.sleep(0.1)
    raise RuntimeError(f"{server.name}: {name} answers {answer.status_code}: {answer.text}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--tree", action="append", type=Path, help="a gitreg checkout")
    parser.add_argument("--routes", default=",".join(ROUTES), help="comma-separated")
    args = parser.parse_args()
    trees = [t.resolve() for t in args.tree or [Path.cwd()]]
    routes = {name: ROUTES[name] for name in args.routes.split(",")}
    rates: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _world(root)
        with _servers(root, trees) as servers:
            for server in servers:  # warm-up, not counted
                for path in routes.values():
                    _wrk(server.base + path, args.concurrency, 1, server.headers)
            print(
                f"wrk -t1 -c{args.concurrency}, {args.rounds} rotating rounds of {args.seconds} s;"
                " req/s medians; ratio: median of the per-round ratios to bare (range)"
            )
            labels = [s.name for s in servers[1:]]
            print(f"{'route':<20} {'bare':>7}  " + "  ".join(f"{label:>26}" for label in labels))
            for name, path in routes.items():
                for n in range(args.rounds):
                    turn = servers[n % len(servers) :] + servers[: n % len(servers)]
                    for server in turn:
                        rate = _wrk(
                            server.base + path, args.concurrency, args.seconds, server.headers
                        )
                        rates.setdefault((name, server.name), []).append(rate)
                _row(name, labels, rates)


def _row(name: str, labels: list[str], rates: dict[tuple[str, str], list[float]]) -> None:
    bare = rates[(name, "bare")]
    cells = []
    for label in labels:
        ratios = [o / b for o, b in zip(rates[(name, label)], bare, strict=True)]
        cells.append(
            f"{statistics.median(rates[(name, label)]):>6.0f} "
            f"{statistics.median(ratios):>5.2f} ({min(ratios):.2f}-{max(ratios):.2f})"
        )
    row = f"{name:<20} {statistics.median(bare):>7.0f}  " + "  ".join(f"{c:>26}" for c in cells)
    print(row, flush=True)


if __name__ == "__main__":
    main()
