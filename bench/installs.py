"""Installs per second: the four requests a `terraform init` makes for one module (discovery,
`versions`, `download`, the cached archive), sent as one transaction over and over by wrk (a Lua
script cycling through them, on keep-alive connections), to gitreg and to a bare Starlette app
under the same Hypercorn answering the same bytes (`bench.bare_installs`), each with 1 and 2
workers; and the cached archive alone, against gitreg's own `versions` and against the bare
app's FileResponse of the same file.

All four servers run side by side, plain HTTP on 127.0.0.1, and are measured in rotation, each
round in the other order; the figures that matter are the medians of the per-round ratios.
Installs: wrk with one thread, unpinned (two workers need both cores). The archive alone:
servers on core 1, wrk on core 0 (taskset), as `bench.http_requests`.

    python -m bench.installs [--rounds 5] [--seconds 3] [--concurrency 50]
        [--tree PATH] [--memory-budget 32MiB] [--before PATH] [--cap 0.5]

--tree runs another checkout's gitreg (say, /work/main before a change); --memory-budget
writes `archives: {memory_budget: ...}` into the catalog (leave it out for a tree that does
not know the key). --before adds, to the archive alone, a one-worker gitreg of another checkout
(its own catalog, without the key), measured in the same rotation. --cap holds each worker of
every server to that share of a CPU (`bench.cpu_caps`; root): on two cores, two workers then
have one core between them (every server's workers on core 1) and wrk the other (core 0), so
that "2 workers / 1" is the server's scaling, not the machine's.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import NamedTuple

import httpx

from bench.cpu_caps import capped, pin, serving_processes
from bench.harness import (
    cpu_seconds,
    free_port,
    gitreg_serve,
    hypercorn_app,
    module_repo,
    started,
)

MODULE = "/v1/modules/bench/mod/generic"
SERVER_CPU, LOAD_CPU = "1", "0"
HERE = Path(__file__).resolve().parents[1]


def _script(folder: Path, paths: list[str]) -> Path:
    """A wrk script sending `paths` in turn, again and again."""
    listed = ", ".join(f'"{p}"' for p in paths)
    script = folder / "install.lua"
    script.write_text(
        f"local paths = {{{listed}}}\n"
        "local n = 0\n"
        "request = function()\n"
        "  n = n % #paths + 1\n"
        '  return wrk.format("GET", paths[n])\n'
        "end\n"
    )
    return script


def _wrk(
    base: str, script: Path | None, path: str, concurrency: int, seconds: int, pin: bool
) -> tuple[float, int]:
    """Requests/s of one wrk run, and the requests it made; an answer that is not 2xx, or a
    connection that failed, stops the bench."""
    command = ["wrk", "-t1", f"-c{concurrency}", f"-d{seconds}s"]
    if script is not None:
        command += ["-s", str(script)]
    if pin:
        command = ["taskset", "-c", LOAD_CPU, *command]
    out = subprocess.run(
        [*command, base + path], capture_output=True, text=True, check=True, timeout=60 + seconds
    ).stdout
    # A timeout (no answer within wrk's 2 s) is a stalled machine's, not an error of the server.
    errors = re.search(r"connect (\d+), read (\d+), write (\d+)", out)
    if "Non-2xx" in out or (errors and any(int(n) for n in errors.groups())):
        raise RuntimeError(f"errors under load:\n{out}")
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out)[1])  # type: ignore[index]
    return rps, int(re.search(r"(\d+) requests in", out)[1])  # type: ignore[index]


@contextlib.contextmanager
def pythonpath(path: Path) -> Iterator[None]:
    """Processes started within import from `path` first."""
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(path)
    try:
        yield
    finally:
        if before is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = before


def _catalog(path: Path, name: str, budget: str | None) -> None:
    memory = f"archives: {{memory_budget: {budget}}}\n" if budget else ""
    path.write_text(
        # fresh_reads off and polling rare: a check of the remote is not the subject.
        f"cache_dir: cache-{name}\nrefresh_interval: 1h\nwatch_catalog: false\nfresh_reads: 0\n"
        f"{memory}modules:\n  - {{namespace: bench, name: mod, system: generic, repo: mod}}\n"
    )


def _answers(base: str, folder: Path) -> list[str]:
    """The four paths of one install, gitreg's answers to them written into `folder` for the
    bare app; the archive built and cached first."""
    with httpx.Client(base_url=base, timeout=60) as client:
        discovery = client.get("/.well-known/terraform.json")
        versions = client.get(f"{MODULE}/versions")
        newest = versions.json()["modules"][0]["versions"][0]["version"]
        download = client.get(f"{MODULE}/{newest}/download")
        location = download.headers["x-terraform-get"]
        archive = client.get(location)
        for answer in (discovery, versions, download, archive):
            answer.raise_for_status()
    (folder / "discovery.json").write_bytes(discovery.content)
    (folder / "versions.json").write_bytes(versions.content)
    (folder / "download.json").write_bytes(download.content)
    (folder / "archive.tar.gz").write_bytes(archive.content)
    return [
        "/.well-known/terraform.json",
        f"{MODULE}/versions",
        f"{MODULE}/{newest}/download",
        location,
    ]


class Server(NamedTuple):
    base: str
    pid: int


def _rotation(
    urls: Mapping[str, tuple[Server, Path | None, str]],
    rounds: int,
    concurrency: int,
    seconds: int,
    pin: bool,
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Requests/s of each named (server, script, path), and its server's CPU microseconds a
    request, in rotation, each round in the other order."""
    rates: dict[str, list[float]] = {name: [] for name in urls}
    costs: dict[str, list[float]] = {name: [] for name in urls}
    names = list(urls)
    for n in range(rounds):
        for name in names if n % 2 == 0 else names[::-1]:
            server, script, path = urls[name]
            before = cpu_seconds(server.pid)
            rate, requests = _wrk(server.base, script, path, concurrency, seconds, pin)
            rates[name].append(rate)
            costs[name].append((cpu_seconds(server.pid) - before) / requests * 1e6)
    return rates, costs


def _ratio(got: dict[str, list[float]], top: str, bottom: str) -> float:
    return float(statistics.median(a / b for a, b in zip(got[top], got[bottom], strict=True)))


def _spread(got: dict[str, list[float]], top: str, bottom: str) -> str:
    """The lowest and highest of the per-round ratios."""
    ratios = [a / b for a, b in zip(got[top], got[bottom], strict=True)]
    return f"{min(ratios):.2f}-{max(ratios):.2f}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--tree", type=Path, default=HERE, help="the checkout whose gitreg runs")
    parser.add_argument("--memory-budget", default=None, help="archives.memory_budget, if any")
    parser.add_argument("--before", type=Path, default=None, help="a checkout to compare with")
    parser.add_argument("--cap", type=float, default=None, help="CPUs each worker may use")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        module_repo(root / "mod", [f"v1.{i}.0" for i in range(1, 5)])
        for name in ("one", "two"):
            _catalog(root / f"{name}.yaml", name, args.memory_budget)
        ports = {name: free_port() for name in ("g1", "g2", "b1", "b2")}
        g1 = gitreg_serve(root / "one.yaml", ports["g1"])
        g2 = [*gitreg_serve(root / "two.yaml", ports["g2"]), "--workers", "2"]
        answers = root / "answers"
        answers.mkdir()
        os.environ["BENCH_INSTALLS"] = str(answers)
        with contextlib.ExitStack() as stack:

            def serve(command: list[str], port: int, ready: str, tree: Path) -> Server:
                with pythonpath(tree):
                    base, process = stack.enter_context(started(command, port, ready))
                return Server(base, process.pid)

            tree = args.tree.resolve()
            servers = {
                "gitreg 1w": serve(g1, ports["g1"], "/readyz", tree),
                "gitreg 2w": serve(g2, ports["g2"], "/readyz", tree),
            }
            paths = _answers(servers["gitreg 1w"].base, answers)
            _answers(servers["gitreg 2w"].base, root)  # its own cache: the archive built there
            bare = "bench.bare_installs:app"
            servers["bare 1w"] = serve(
                hypercorn_app(bare, ports["b1"]), ports["b1"], paths[1], HERE
            )
            two = [*hypercorn_app(bare, ports["b2"]), "--workers", "2"]
            servers["bare 2w"] = serve(two, ports["b2"], paths[1], HERE)
            script = _script(root, paths)
            if args.cap is not None:  # each worker held to --cap, on core 1; wrk on core 0
                for name, server in servers.items():
                    workers = serving_processes(server.pid)
                    for worker in workers:
                        pin(worker, int(SERVER_CPU))
                    stack.enter_context(capped(workers, args.cap, name.replace(" ", "-")))
            order = ("gitreg 1w", "bare 1w", "gitreg 2w", "bare 2w")
            for server in servers.values():  # warm-up, not counted
                _wrk(server.base, script, "/", args.concurrency, 1, pin=False)
            installs, install_costs = _rotation(
                {name: (servers[name], script, "/") for name in order},
                args.rounds,
                args.concurrency,
                args.seconds,
                pin=args.cap is not None,
            )
            archive = paths[3]
            one, bare_one = servers["gitreg 1w"], servers["bare 1w"]
            alone = {
                "gitreg archive": (one, None, archive),
                "gitreg versions": (one, None, paths[1]),
                "bare FileResponse": (
                    bare_one,
                    None,
                    "/file" + archive.removeprefix("/v1/archives"),
                ),
                "bare bytes": (bare_one, None, archive),
            }
            if args.before is not None:
                _catalog(root / "before.yaml", "before", None)
                port = free_port()
                command = gitreg_serve(root / "before.yaml", port)
                then = serve(command, port, "/readyz", args.before.resolve())
                _answers(then.base, root)
                alone["before: archive"] = (then, None, archive)
                alone["before: versions"] = (then, None, paths[1])
            for server, _, path in alone.values():
                _wrk(server.base, None, path, args.concurrency, 1, pin=True)
            single, single_costs = _rotation(
                alone, args.rounds, args.concurrency, args.seconds, pin=True
            )
        size = (answers / "archive.tar.gz").stat().st_size
    print(
        f"gitreg from {args.tree}, memory_budget {args.memory_budget or 'its default'}; wrk -c"
        f"{args.concurrency}, {args.rounds} rounds of {args.seconds} s in rotation; medians;"
        " CPU: the server's (all its processes) per install or request"
        + (f"; each worker held to {args.cap} CPU" if args.cap is not None else "")
    )
    print(f"{'installs (4 requests each)':<30} {'installs/s':>10} {'CPU us':>8}")
    for name, values in installs.items():
        cost = statistics.median(install_costs[name]) * 4
        print(f"{name:<30} {statistics.median(values) / 4:>10.0f} {cost:>8.0f}")
    for top, bottom in (
        ("gitreg 1w", "bare 1w"),
        ("gitreg 2w", "bare 2w"),
        ("gitreg 2w", "gitreg 1w"),
        ("bare 2w", "bare 1w"),
    ):
        print(
            f"{top + ' / ' + bottom:<30} {_ratio(installs, top, bottom):>10.2f}"
            f" {_ratio(install_costs, top, bottom):>8.2f}   rounds {_spread(installs, top, bottom)}"
        )
    print(f"{f'one request, 1 worker ({size} B)':<30} {'req/s':>10} {'CPU us':>8}")
    for name, values in single.items():
        cost = statistics.median(single_costs[name])
        print(f"{name:<30} {statistics.median(values):>10.0f} {cost:>8.0f}")
    pairs = [("gitreg archive", bottom) for bottom in list(single)[1:]]
    if args.before is not None:
        pairs += [("before: archive", "before: versions"), ("before: archive", "bare FileResponse")]
    for top, bottom in pairs:
        print(
            f"{top + ' / ' + bottom:<36} {_ratio(single, top, bottom):>10.2f}"
            f" {_ratio(single_costs, top, bottom):>8.2f}"
        )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
