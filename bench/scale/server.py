"""A real `gitreg serve` of one tree's code, in a process of its own, and what `bench.scale`
watches it do: start, answer, reload, grow."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import httpx

from bench.harness import free_port
from gitreg.process.heap import collector_paused

STARTUP_FETCH = "start-up fetch:"  # logged once the start-up fetch is over (both trees)
CLONES_READ = "start-up: read the clones"  # logged once every clone is read (both trees)
RELOADED = "catalog reloaded"


@dataclass(frozen=True)
class Server:
    base: str
    process: subprocess.Popen[bytes]
    log: Path
    spawned: float  # perf_counter() when the process was started
    spawned_at: float  # and time.time(), to read the log's timestamps against

    def rss_mb(self) -> tuple[float, float]:
        """Resident set now and at its peak, MB, from /proc."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        found = dict(re.findall(r"(VmRSS|VmHWM):\s+(\d+) kB", status))
        return int(found["VmRSS"]) / 1024, int(found["VmHWM"]) / 1024

    def logged(self, text: str) -> int:
        return self.log.read_text().count(text)

    def logged_after(self, text: str) -> float | None:
        """Seconds from the process's start to the first line logging `text`, by the line's own
        timestamp (milliseconds; the process logs local time, as `datetime` reads it)."""
        for line in self.log.read_text().splitlines():
            if text in line:
                stamp = datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f")
                return stamp.timestamp() - self.spawned_at
        return None

    def wait_logged(self, text: str, times: int = 1, until: float = 1800.0) -> float:
        """Seconds since the process started when `text` has been logged `times` times."""
        deadline = time.perf_counter() + until
        while self.logged(text) < times:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited; see {self.log}")
            if time.perf_counter() > deadline:
                raise TimeoutError(f"{text!r} not logged; see {self.log}")
            time.sleep(0.05)
        return time.perf_counter() - self.spawned

    def wait_quiet(self, window: float = 2.0, most: float = 0.05, until: float = 600.0) -> float:
        """Seconds since the process started when it has caught up: with no request sent, its
        CPU (with the `git` processes it reaped) over `window` seconds was under `most` of a
        CPU. After the start-up fetch the docs of every module are still warmed (a few seconds
        at 10,000 modules with no request; longer while requests arrive): a steady state
        measured then is not one."""
        deadline = time.perf_counter() + until
        while True:
            before = cpu_with_reaped(self.process.pid)
            time.sleep(window)
            if cpu_with_reaped(self.process.pid) - before < most * window:
                return time.perf_counter() - self.spawned
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited; see {self.log}")
            if time.perf_counter() > deadline:
                raise TimeoutError(f"not quiet after {until:.0f} s; see {self.log}")


def cpu_with_reaped(pid: int) -> float:
    """CPU seconds of a process and of the children it reaped (each git it ran and waited
    for), from /proc: utime, stime, cutime, cstime."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(field) for field in fields[11:15]) / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def serving(config: Path, log: Path, tree: Path) -> Iterator[Server]:
    """`python -m gitreg serve` with the gitreg of `tree` (run from it, as its PYTHONPATH:
    `python -m` puts the current folder first)."""
    port = free_port()
    command = [sys.executable, "-m", "gitreg", "serve", "--log-level", "info"]
    command += ["--config", str(config), "--listen", f"127.0.0.1:{port}"]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    with open(log, "w") as out:
        spawned, spawned_at = time.perf_counter(), time.time()
        process = subprocess.Popen(
            command, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=out
        )
    try:
        yield Server(f"http://127.0.0.1:{port}", process, log, spawned, spawned_at)
    finally:
        process.terminate()
        process.wait(timeout=60)


def versions_path(name: str) -> str:
    return f"/v1/modules/bench/{name}/generic/versions"


def _listed(response: httpx.Response) -> frozenset[str]:
    """The versions a `versions` answer lists (none unless it is a 200 of the protocol's form)."""
    if response.status_code != 200:
        return frozenset()
    return frozenset(v["version"] for m in response.json()["modules"] for v in m["versions"])


@dataclass
class StartUp:
    """Seconds from the process's start: to `/healthz` answering 200, to the first correct
    `versions` answer, and to every watched module's; the other answers seen meanwhile."""

    healthz: float = 0.0
    first_correct: float = 0.0
    all_correct: float = 0.0
    statuses: Counter[int] = field(default_factory=Counter)


def watch_start(server: Server, names: list[str], expected: frozenset[str]) -> StartUp:
    """Ask `/healthz` and each module's `versions` every 50 ms from the process's start until
    every one of them lists `expected` (a 503 or a partial list is not an answer)."""
    seen = StartUp()
    waiting = set(names)
    with httpx.Client(base_url=server.base, timeout=30) as client:
        while waiting:
            if server.process.poll() is not None:
                raise RuntimeError(f"the server exited; see {server.log}")
            if time.perf_counter() - server.spawned > 1800:
                raise TimeoutError(f"no correct versions after 30 minutes; see {server.log}")
            with contextlib.suppress(httpx.TransportError):
                if not seen.healthz and client.get("/healthz").status_code == 200:
                    seen.healthz = time.perf_counter() - server.spawned
                for name in sorted(waiting):
                    response = client.get(versions_path(name))
                    if _listed(response) == expected:
                        waiting.discard(name)
                        seen.first_correct = seen.first_correct or (
                            time.perf_counter() - server.spawned
                        )
                    else:
                        seen.statuses[response.status_code] += 1
            time.sleep(0.05)
    seen.all_correct = time.perf_counter() - server.spawned
    return seen


@dataclass
class Reload:
    """Seconds from the SIGHUP to the new module's correct `versions` answer and to the
    reload's log line; every other answer it gave meanwhile, by status."""

    served: float
    logged: float
    statuses: Counter[int]
    last_404: float  # the moment of the last 404 (0 if none): before the new catalog is read,
    # the served one rightly does not know the module; after, a 404 is the bug
    first_503: float  # the moment of the first 503 (0 if none): in the new catalog, not read yet


def reload_adding(server: Server, name: str, expected: frozenset[str]) -> Reload:
    """SIGHUP (the catalog already rewritten to add `name`), then ask for `name`'s versions
    every 20 ms until they are right, counting what else it answered (a 404 says the module
    is not in the catalog, which it is)."""
    logged_before = server.logged(RELOADED)
    statuses: Counter[int] = Counter()
    start = time.perf_counter()
    os.kill(server.process.pid, signal.SIGHUP)
    served = last_404 = first_503 = 0.0
    with httpx.Client(base_url=server.base, timeout=60) as client:
        while not served:
            response = client.get(versions_path(name))
            if _listed(response) == expected:
                served = time.perf_counter() - start
            else:
                statuses[response.status_code] += 1
                now = time.perf_counter() - start
                if response.status_code == 404:
                    last_404 = now
                elif response.status_code == 503:
                    first_503 = first_503 or now
                if now > 1800:
                    raise TimeoutError(f"{name} not served 30 minutes after the reload")
                time.sleep(0.02)
    logged = server.wait_logged(RELOADED, logged_before + 1) - (start - server.spawned)
    return Reload(served, logged, statuses, last_404, first_503)


@dataclass
class Latencies:
    idle: list[float]
    busy: list[float]  # while the reload ran
    reload: float  # seconds from the SIGHUP to the reload's log line
    errors: Counter[int]  # answers other than 200, by status


async def _probe(
    url: str, stop: asyncio.Event, errors: Counter[int], workers: int = 4, pause: float = 0.01
) -> list[tuple[float, float]]:
    """(start, latency) of each `versions` request by a few paced clients, until `stop`.

    What is measured is the server's: the client's first requests (its connections opened, what
    httpx sets up on first use: up to 50 ms) go before the measuring, and the client's own
    garbage collector stays off meanwhile (its full walks of this process's heap took 26-31 ms,
    which a request under way counted as the server's)."""
    samples: list[tuple[float, float]] = []
    with collector_paused():  # no automatic collection of this process while it measures
        async with httpx.AsyncClient(timeout=60) as client:
            await asyncio.gather(*(client.get(url) for _ in range(workers)))  # connections opened

            async def worker() -> None:
                while not stop.is_set():
                    start = time.perf_counter()
                    response = await client.get(url)
                    samples.append((start, time.perf_counter() - start))
                    if response.status_code != 200:
                        errors[response.status_code] += 1
                    await asyncio.sleep(pause)

            await asyncio.gather(*(worker() for _ in range(workers)))
    return samples


def _reload(server: Server) -> float:
    """SIGHUP, then the seconds until the reload's log line."""
    before = server.logged(RELOADED)
    start = time.perf_counter()
    os.kill(server.process.pid, signal.SIGHUP)
    return server.wait_logged(RELOADED, before + 1) - (start - server.spawned)


async def latency_during_reload(server: Server, url: str, idle: float) -> Latencies:
    """Latencies while idle (for `idle` seconds), then while a SIGHUP reload runs."""
    stop = asyncio.Event()
    errors: Counter[int] = Counter()
    probe = asyncio.create_task(_probe(url, stop, errors))
    await asyncio.sleep(idle)
    began = time.perf_counter()
    took = await asyncio.to_thread(_reload, server)
    stop.set()
    samples = await probe
    quiet = [lat for start, lat in samples if start < began]
    busy = [lat for start, lat in samples if began <= start < began + took]
    return Latencies(quiet, busy, took, errors)


async def latency_for(url: str, seconds: float) -> tuple[list[float], Counter[int]]:
    """Latencies of the paced probe's `versions` requests begun in the next `seconds`."""
    stop = asyncio.Event()
    errors: Counter[int] = Counter()
    probe = asyncio.create_task(_probe(url, stop, errors))
    began = time.perf_counter()
    await asyncio.sleep(seconds)
    stop.set()
    samples = await probe
    return [lat for start, lat in samples if start < began + seconds], errors


@contextlib.contextmanager
def reloads_running(server: Server, rewrite: Callable[[int], None]) -> Iterator[list[float]]:
    """Reloads back to back while the block runs: `rewrite(n)` writes the catalog of the n-th
    (so that each has something to read), then SIGHUP, then the next once it is logged. Yields
    the list of each reload's seconds, filled as they end; the one under way at the block's
    end is waited for."""
    took: list[float] = []
    stop = threading.Event()

    def run() -> None:
        n = 0
        while not stop.is_set():
            rewrite(n)
            took.append(_reload(server))
            n += 1

    thread = threading.Thread(target=run, name="reloads", daemon=True)
    thread.start()
    try:
        yield took
    finally:
        stop.set()
        thread.join(timeout=1800)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]
