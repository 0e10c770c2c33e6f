"""Shared by the benchmarks: servers in their own processes, a bounded load loop, repos."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import NamedTuple

import httpx


def wall_and_cpu(work: Callable[[], None]) -> tuple[float, float]:
    """`work`'s wall seconds, and the CPU seconds of this process and the children it waited
    for (git's, for a polling round)."""

    def cpu() -> float:
        t = os.times()
        return t.user + t.system + t.children_user + t.children_system

    spent, start = cpu(), time.perf_counter()
    work()
    return time.perf_counter() - start, cpu() - spent


def cpu_seconds(pid: int) -> float:
    """CPU seconds of a process and of its children, theirs and so on (workers), from /proc:
    what the machine's other tenants take (steal) is not in it, unlike a wall-clock rate."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    pending = [pid]
    while pending:
        now = pending.pop()
        try:
            fields = Path(f"/proc/{now}/stat").read_text().rsplit(")", 1)[1].split()
            children = Path(f"/proc/{now}/task/{now}/children").read_text().split()
        except OSError:  # it ended meanwhile
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
        pending += [int(child) for child in children]
    return total


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def server(
    command: list[str], port: int, ready_path: str, scheme: str = "http", verify: str | bool = True
) -> Iterator[str]:
    """Run `command` (which listens on 127.0.0.1:port) until the block ends."""
    with started(command, port, ready_path, scheme, verify) as (base, _):
        yield base


@contextlib.contextmanager
def started(
    command: list[str], port: int, ready_path: str, scheme: str = "http", verify: str | bool = True
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`server`, yielding the process too (to signal it)."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"{scheme}://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 600
        while True:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{command} did not start")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(base + ready_path, timeout=1, verify=verify).status_code < 500:
                    break
            time.sleep(0.1)
        yield base, process
    finally:
        process.terminate()
        process.wait(timeout=30)


def gitreg_serve(config: Path, port: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "gitreg",
        "serve",
        "--log-level",
        "warning",
        "--config",
        str(config),
        "--listen",
        f"127.0.0.1:{port}",
    ]


def hypercorn_app(app: str, port: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "hypercorn",
        "--bind",
        f"127.0.0.1:{port}",
        "--log-level",
        "warning",
        app,
    ]


async def _load(
    url: str, requests: int, concurrency: int, headers: Mapping[str, str] | None = None
) -> float:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=30, headers=headers) as client:
        remaining = requests

        async def worker() -> None:
            nonlocal remaining
            while remaining > 0:
                remaining -= 1
                response = await client.get(url)
                response.raise_for_status()

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return requests / (time.perf_counter() - start)


def requests_per_second(
    url: str,
    requests: int = 2000,
    concurrency: int = 16,
    rounds: int = 3,
    headers: Mapping[str, str] | None = None,
    threads: int = 2,
) -> float:
    """The median of `rounds` bounded runs: wrk (with `threads`) for 3 s each when it is
    installed (Debian: wrk), else `requests` GETs from an httpx client (which then is likely the
    bottleneck); each request with `headers`."""
    if shutil.which("wrk"):
        return statistics.median(_wrk(url, concurrency, headers, threads) for _ in range(rounds))
    asyncio.run(_load(url, 200, concurrency, headers))  # warm-up
    return statistics.median(
        asyncio.run(_load(url, requests, concurrency, headers)) for _ in range(rounds)
    )


def paired_requests_per_second(
    baseline: str,
    measured: str,
    rounds: int = 5,
    concurrency: int = 16,
    measured_headers: Mapping[str, str] | None = None,
    threads: int = 2,
) -> tuple[float, float, float]:
    """Requests/s of both URLs, measured in alternation, each round in the other order (the
    machine drifts: one measured after the other compares two moments): their medians, and the
    median of each round's ratio measured/baseline. `measured_headers` go with each request
    to `measured` (a token)."""
    pairs = []
    for n in range(rounds):
        order = (baseline, measured) if n % 2 == 0 else (measured, baseline)
        got = {
            url: requests_per_second(
                url,
                concurrency=concurrency,
                rounds=1,
                headers=measured_headers if url == measured else None,
                threads=threads,
            )
            for url in order
        }
        pairs.append((got[baseline], got[measured]))
    return (
        statistics.median(b for b, _ in pairs),
        statistics.median(m for _, m in pairs),
        statistics.median(m / b for b, m in pairs),
    )


def _wrk(
    url: str, concurrency: int, headers: Mapping[str, str] | None = None, threads: int = 2
) -> float:
    header_args = [arg for k, v in (headers or {}).items() for arg in ("-H", f"{k}: {v}")]
    out = subprocess.run(
        ["wrk", f"-t{threads}", f"-c{concurrency}", "-d3s", *header_args, url],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    if "Non-2xx" in out:
        raise RuntimeError(f"errors under load:\n{out}")
    return float(re.search(r"Requests/sec:\s+([\d.]+)", out)[1])  # type: ignore[index]


class Load(NamedTuple):
    """One wrk run: requests/s and latency percentiles, in seconds."""

    rps: float
    p50: float
    p99: float


_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0}


def wrk_latency(
    url: str, concurrency: int, seconds: int = 3, threads: int = 1, cpus: str | None = None
) -> Load:
    """wrk with --latency (pinned to `cpus` when given, by taskset): req/s, p50 and p99."""
    pin = ["taskset", "-c", cpus] if cpus else []
    out = subprocess.run(
        [*pin, "wrk", f"-t{threads}", f"-c{concurrency}", f"-d{seconds}s", "--latency", url],
        capture_output=True,
        text=True,
        check=True,
        timeout=60 + seconds,
    ).stdout
    if "Non-2xx" in out:
        raise RuntimeError(f"errors under load:\n{out}")

    def percentile(p: str) -> float:
        found = re.search(rf"^\s+{p}%\s+([\d.]+)(us|ms|s)\s*$", out, re.MULTILINE)
        assert found is not None, out
        return float(found[1]) * _UNITS[found[2]]

    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out)[1])  # type: ignore[index]
    return Load(rps, percentile("50"), percentile("99"))


def git(cwd: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@b",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@b",
    }
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env={**os.environ, **env},
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def module_repo(path: Path, tags: list[str]) -> Path:
    """A repository with one provider-less module and the given tags on its one commit."""
    path.mkdir(parents=True)
    git(path, "init", "-q")
    (path / "main.tf").write_text('output "x" { value = 1 }\n')
    git(path, "add", "main.tf")
    git(path, "commit", "-qm", "x")
    for tag in tags:
        git(path, "tag", tag)
    return path


@contextlib.contextmanager
def git_daemon(served: Path, port: int, niceness: int = 0) -> Iterator[str]:
    """`git daemon` exporting every repository under `served`; yields its git:// base URL.
    `niceness`: run it (and its `upload-pack`s) at a lower priority, as a Git server on
    another machine would be to the registry: on a 2-core machine its processes otherwise
    take the CPU from the server and the load generator at the same priority."""
    process = subprocess.Popen(
        [
            *(["nice", "-n", str(niceness)] if niceness else []),
            "git",
            "daemon",
            "--reuseaddr",
            "--export-all",
            f"--base-path={served}",
            "--listen=127.0.0.1",
            f"--port={port}",
            # No limit: past it, git daemon kills a running connection to make room ("read
            # error: Connection reset by peer" for a client), and a benchmark's 16 polls plus
            # a server's fetches plus children not reaped yet went past 64.
            "--max-connections=0",
            str(served),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(0.5)
        yield f"git://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)
