"""The cost of request ids and of the access log, on modules.v1 versions requests.

Four `gitreg serve` processes on one catalog, plain HTTP on 127.0.0.1: without the request-id
middleware (taken out of the app: the baseline), the same again (how far two identical servers
differ here: the noise), as shipped, and as shipped with `--access-log` (its lines to
/dev/null). Each round loads each server in turn with wrk for 3 s, in another order each round,
and reads requests/s and the CPU time the server process spent per request (/proc/PID/stat).
Medians of the rounds. The middleware's own cost, measured in process, is about 2 us a request.

    python -m bench.request_ids [--rounds 7] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import contextlib
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from bench.harness import cpu_seconds, free_port, gitreg_serve, module_repo

_WITHOUT = "--serve-without-request-ids"
_PATH = "/v1/modules/bench/mod/generic/versions"


def _serve_without_request_ids(argv: list[str]) -> int:
    """`gitreg serve ARGV` with Starlette's own middleware stack: no request ids."""
    from starlette.applications import Starlette

    from gitreg.commands.cli import main
    from gitreg.web.app import RegistryApp

    RegistryApp.build_middleware_stack = Starlette.build_middleware_stack  # type: ignore[method-assign]
    return main(argv)


@contextlib.contextmanager
def _server(command: list[str], port: int) -> Iterator[tuple[str, int]]:
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}{_PATH}"
    try:
        for _ in range(600):
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(url, timeout=1).status_code == 200:
                    break
            time.sleep(0.1)
        else:
            raise RuntimeError(f"{command} did not start")
        yield url, process.pid
    finally:
        process.terminate()
        process.wait(timeout=15)


def _round(url: str, pid: int, concurrency: int) -> tuple[float, float]:
    """requests/s, and CPU microseconds per request, of one 3 s wrk run."""
    before = cpu_seconds(pid)
    out = subprocess.run(
        ["wrk", "-t2", f"-c{concurrency}", "-d3s", url],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    used = cpu_seconds(pid) - before
    if "Non-2xx" in out:
        raise RuntimeError(f"errors under load:\n{out}")
    requests = int(re.search(r"(\d+) requests in", out)[1])  # type: ignore[index]
    per_second = float(re.search(r"Requests/sec:\s+([\d.]+)", out)[1])  # type: ignore[index]
    return per_second, used / requests * 1e6


def main() -> None:
    if sys.argv[1:2] == [_WITHOUT]:
        raise SystemExit(_serve_without_request_ids(sys.argv[2:]))
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("needs wrk (Debian package wrk)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        module_repo(root / "mod", [f"v1.{i}.0" for i in range(1, 21)])
        config = root / "registry.yaml"
        config.write_text(
            "cache_dir: cache\nmodules:\n  - {namespace: bench, name: mod, system: generic, repo: mod}\n"
        )
        ports = [free_port() for _ in range(4)]
        commands = []
        for port in ports[:2]:
            without = gitreg_serve(config, port)
            without[1:3] = ["-m", "bench.request_ids", _WITHOUT]
            commands.append(without)
        commands.append(gitreg_serve(config, ports[2]))
        commands.append([*gitreg_serve(config, ports[3]), "--access-log", "--log-level", "info"])
        names = [
            "without request ids",
            "the same again (noise)",
            "with request ids",
            "with the access log",
        ]
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in names}
        with contextlib.ExitStack() as stack:
            servers = {
                name: stack.enter_context(_server(command, port))
                for name, command, port in zip(names, commands, ports, strict=True)
            }
            for n in range(args.rounds):
                order = names[n % 4 :] + names[: n % 4]
                for name in order if n % 2 == 0 else reversed(order):
                    results[name].append(_round(*servers[name], args.concurrency))
    base_rps = statistics.median(r for r, _ in results[names[0]])
    base_cpu = statistics.median(c for _, c in results[names[0]])
    print(f"versions, median of {args.rounds} rounds   req/s   ratio   CPU us/req   ratio")
    for name in names:
        rps = statistics.median(r for r, _ in results[name])
        cpu = statistics.median(c for _, c in results[name])
        print(
            f"{name:<34} {rps:>6.0f}  {rps / base_rps:>6.3f}  {cpu:>10.1f}  {cpu / base_cpu:>6.3f}"
        )


if __name__ == "__main__":
    main()
