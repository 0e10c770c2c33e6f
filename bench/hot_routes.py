"""The hot routes against the bare framework: discovery, modules.v1 `versions` and `download`,
providers.v1 `versions` and `download`, and the network mirror's `index.json` and
`VERSION.json`, from gitreg with auth off and on (a token that opens the namespaces and the
mirror), each as a ratio to a bare Starlette app under the same Hypercorn answering a constant.
The bare app is asked the same requests as the gitreg it is compared with: a second bare
server gets the token too (Hypercorn reads an Authorization header whether or not the app
looks at it), so that the ratio with auth on is gitreg's own cost, not the header's.

Every server is its own process pinned to core 1 (taskset), wrk (one thread, `--concurrency`
connections) pinned to core 0; plain HTTP on 127.0.0.1. Each round loads every server in turn,
in another order each round; the figures are the medians of the per-round ratios. `--tree`
(repeatable) runs gitreg from another checkout (`--tree /work/main` for the code before a
change), so that before and after are measured in the same run, against the same baseline.

Two figures each: req/s, and the server's CPU microseconds a request (`/proc`, all its
processes). On a shared virtual machine the rate moves with what other tenants take from the
core (per-round ratios from 0.6 to 1.4 on a quiet day); the CPU a request does not count that
time, but it does count a core made slower by its neighbours: measured one server after the
other, it moves as much as the rate. `--together` loads every server at once, each with its own
wrk, all of them sharing core 1: whatever slows the core then slows them all alike, and the CPU
a request compares them. Both ratios read the same way: above 1, gitreg does better than the
bare app (its rate ÷ bare's; bare's CPU ÷ its CPU).

`--counting` adds, for each gitreg, a twin with download counting off (`downloads: {enabled:
false}`; it is on by default), loaded in the same rounds, and prints per route the median of the
per-round ratios of the one counting to its twin (req/s: on ÷ off; CPU: off ÷ on). `--revoked`
does the same with a twin whose module and provider have a revoked version (1.1.0, not the one
downloaded), and prints the ratio of that twin to the one with none revoked.

    python -m bench.hot_routes [--rounds 3] [--seconds 3] [--concurrency 50]
        [--tree PATH ...] [--routes discovery,versions,...] [--together] [--counting | --revoked]
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

from bench.harness import (
    cpu_seconds,
    free_port,
    gitreg_serve,
    hypercorn_app,
    module_repo,
    started,
)
from bench.mirror import _release

SERVER_CPU, LOAD_CPU = "1", "0"
BARE, BARE_TOKEN = "bare", "bare, token sent"
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
_UNCOUNTED = "downloads: {enabled: false}\n"
_REVOKED = ', revoked: [{versions: "1.1.0", reason: "bench"}]}'
TWINS = {"counting": ("uncounted", "counting on/off"), "revoked": ("revoked", "revoked/none")}
_AUTH = (
    "auth:\n  download_ttl: 1h\n  tokens:\n"
    f'    - {{name: bench, token_sha256: "{hashlib.sha256(TOKEN.encode()).hexdigest()}",'
    " read: [bench, acme], mirror: true}\n"
)


@dataclass(frozen=True)
class Server:
    name: str  # "bare", "bare, token sent", or "<tree> auth off|on"
    base: str
    pid: int
    headers: dict[str, str] = field(default_factory=dict)
    baseline: str = ""  # the bare server asked the same requests (for gitreg's)
    twin: str = ""  # the same gitreg with counting off (`--counting`), or revoked (`--revoked`)


def _wrk(url: str, concurrency: int, seconds: int, headers: dict[str, str]) -> tuple[float, int]:
    """Requests/s and requests made."""
    return _wrk_result(_wrk_started(url, concurrency, seconds, headers), url)


def _wrk_started(
    url: str, concurrency: int, seconds: int, headers: dict[str, str]
) -> subprocess.Popen[str]:
    header_args = [arg for k, v in headers.items() for arg in ("-H", f"{k}: {v}")]
    wrk = ["wrk", "-t1", f"-c{concurrency}", f"-d{seconds}s", *header_args, url]
    return subprocess.Popen(
        ["taskset", "-c", LOAD_CPU, *wrk], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _wrk_result(wrk: subprocess.Popen[str], url: str) -> tuple[float, int]:
    out, err = wrk.communicate(timeout=120)
    if wrk.returncode != 0:
        raise RuntimeError(f"wrk failed on {url}: {err}")
    if "Non-2xx" in out:  # timeouts are not errors: a slow server's figure says it
        raise RuntimeError(f"errors under load from {url}:\n{out}")
    rate, made = re.search(r"Requests/sec:\s+([\d.]+)", out), re.search(r"(\d+) requests in", out)
    assert rate is not None and made is not None, out
    return float(rate[1]), int(made[1])


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
def _servers(root: Path, trees: list[Path], twin: str = "") -> Iterator[list[Server]]:
    os.environ["BENCH_VERSIONS"] = str(MODULE_VERSIONS)
    token = {"Authorization": f"Bearer {TOKEN}"}
    with contextlib.ExitStack() as stack:
        servers = []
        for name, headers in ((BARE, {}), (BARE_TOKEN, token)):
            port = free_port()
            command = ["taskset", "-c", SERVER_CPU, *hypercorn_app("bench.bare_app:app", port)]
            base, process = stack.enter_context(started(command, port, ROUTES["versions"]))
            servers.append(Server(name, base, process.pid, headers))
        suffix = f", {TWINS[twin][0]}" if twin else ""
        for n, tree in enumerate(trees):
            for auth, off in [
                (a, o) for a in (False, True) for o in (False, True)[: 1 + bool(twin)]
            ]:
                config = root / f"registry-{n}-{'on' if auth else 'off'}{'-twin' * off}.yaml"
                catalog, counted = _CATALOG, _UNCOUNTED if off and twin == "counting" else ""
                if off and twin == "revoked":
                    for entry in ("artifacts: releases}", "repo: mod}"):
                        catalog = catalog.replace(entry, entry[:-1] + _REVOKED)
                config.write_text(
                    f"cache_dir: {config.stem}\n{catalog}{_AUTH if auth else ''}{counted}"
                )
                port = free_port()
                command = _gitreg(tree, config, port)
                base, process = stack.enter_context(started(command, port, "/readyz"))
                label = f"{tree.name} auth {'on' if auth else 'off'}"
                twin_name = f"{label}{suffix}" if twin and not off else ""
                headers, baseline = (token, BARE_TOKEN) if auth else ({}, BARE)
                name = f"{label}{suffix}" if off else label
                servers.append(Server(name, base, process.pid, headers, baseline, twin_name))
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
    parser.add_argument(
        "--together",
        action="store_true",
        help="load every server at once (they share core 1, each its own wrk): a moment's "
        "slowness of the machine then falls on all of them; the CPU a request is the figure",
    )
    parser.add_argument(
        "--counting",
        action="store_true",
        help="each gitreg beside a twin with download counting off, and their ratio per route",
    )
    parser.add_argument(
        "--revoked",
        action="store_true",
        help="each gitreg beside a twin with a revoked version, and their ratio per route",
    )
    args = parser.parse_args()
    trees = [t.resolve() for t in args.tree or [Path.cwd()]]
    routes = {name: ROUTES[name] for name in args.routes.split(",")}
    rates: dict[tuple[str, str], list[float]] = {}
    costs: dict[tuple[str, str], list[float]] = {}  # CPU microseconds a request
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _world(root)
        twin = "counting" if args.counting else "revoked" if args.revoked else ""
        with _servers(root, trees, twin) as servers:
            for server in servers:  # warm-up, not counted
                for path in routes.values():
                    _wrk(server.base + path, args.concurrency, 1, server.headers)
            print(
                f"wrk -t1 -c{args.concurrency}, {args.rounds} rotating rounds of {args.seconds} s;"
                " medians; ratio: median of the per-round ratios to bare (range)"
            )
            measured = [server for server in servers if server.baseline]
            labels = [server.name for server in measured]
            print(
                f"{'route':<24} {BARE:>7} {'token':>7}  "
                + "  ".join(f"{label:>26}" for label in labels)
            )
            for name, path in routes.items():
                for n in range(args.rounds):
                    turn = servers[n % len(servers) :] + servers[: n % len(servers)]
                    groups = [turn] if args.together else [[server] for server in turn]
                    for group in groups:
                        for server, rate, spent in _loaded(group, path, args):
                            rates.setdefault((name, server.name), []).append(rate)
                            costs.setdefault((name, server.name), []).append(spent)
                _row(f"{name}, req/s", measured, rates, name, higher=True)
                _row(f"{name}, CPU us", measured, costs, name, higher=False)
                if twin:
                    _twin_row(name, measured, rates, costs, twin)


def _loaded(
    group: list[Server], path: str, args: argparse.Namespace
) -> list[tuple[Server, float, float]]:
    """Each server of `group` under its own wrk at the same time: its req/s and CPU
    microseconds a request."""
    before = [cpu_seconds(server.pid) for server in group]
    running = [
        _wrk_started(server.base + path, args.concurrency, args.seconds, server.headers)
        for server in group
    ]
    results = [
        _wrk_result(wrk, server.base + path) for wrk, server in zip(running, group, strict=True)
    ]
    return [
        (server, rate, (cpu_seconds(server.pid) - spent) / made * 1e6)
        for server, spent, (rate, made) in zip(group, before, results, strict=True)
    ]


def _row(
    title: str,
    measured: list[Server],
    got: dict[tuple[str, str], list[float]],
    name: str,
    higher: bool,
) -> None:
    """Medians, and the median of the per-round ratios to each one's bare server, read so that
    above 1 is gitreg's better (`higher`: more is better, as req/s; else less is, as CPU)."""
    cells = []
    for server in measured:
        mine, bare = got[(name, server.name)], got[(name, server.baseline)]
        ratios = [o / b if higher else b / o for o, b in zip(mine, bare, strict=True)]
        cells.append(
            f"{statistics.median(mine):>6.0f} "
            f"{statistics.median(ratios):>5.2f} ({min(ratios):.2f}-{max(ratios):.2f})"
        )
    bares = [statistics.median(got[(name, label)]) for label in (BARE, BARE_TOKEN)]
    row = f"{title:<24} {bares[0]:>7.0f} {bares[1]:>7.0f}  " + "  ".join(f"{c:>26}" for c in cells)
    print(row, flush=True)


def _twin_row(
    name: str,
    measured: list[Server],
    rates: dict[tuple[str, str], list[float]],
    costs: dict[tuple[str, str], list[float]],
    twin: str,
) -> None:
    """Each gitreg against its twin, round by round. Counting: req/s on ÷ off, and CPU a
    request off ÷ on; revoked: req/s revoked ÷ none, CPU none ÷ revoked (above 1: no cost)."""
    cells = []
    for server in (s for s in measured if s.twin):
        first, second = (server.name, server.twin)[:: 1 if twin == "counting" else -1]
        by_rate = [a / b for a, b in zip(rates[(name, first)], rates[(name, second)], strict=True)]
        by_cpu = [b / a for a, b in zip(costs[(name, first)], costs[(name, second)], strict=True)]
        cells.append(
            f"{server.name}: req/s {statistics.median(by_rate):.3f}"
            f" ({min(by_rate):.2f}-{max(by_rate):.2f}),"
            f" CPU {statistics.median(by_cpu):.3f} ({min(by_cpu):.2f}-{max(by_cpu):.2f})"
        )
    print(f"{name}, {TWINS[twin][1]}: " + "; ".join(cells), flush=True)


if __name__ == "__main__":
    main()
