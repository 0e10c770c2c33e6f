"""gitreg at scale: 10,000 modules x 50 versions in 1,000 monorepos (10 modules each, tags such as
`mod3/v1.2.0`), served by `git daemon` on 127.0.0.1, against the same server code serving 10 of
those modules, in the same run: start-up from warm clones, RSS, `versions` requests/s (in
alternation), one catalog reload, serving latency while it runs, and one polling round.

    python -m bench.scale [--workdir DIR] [--small] [--rounds 5] [--concurrency 16]

The repositories, the clones and the ledgers are kept under --workdir, so a rerun starts warm.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx
from dulwich.objects import Blob, Commit, ObjectID, ShaFile, Tree
from dulwich.refs import Ref
from dulwich.repo import Repo

from bench.harness import free_port, git_daemon, paired_requests_per_second
from gitreg.catalog.load import load_catalog
from gitreg.modules.sync import Registry

ADDED = "added"  # the module a reload brings in


@dataclass(frozen=True)
class Shape:
    repos: int
    modules: int  # per repository
    versions: int  # per module

    @property
    def name(self) -> str:
        return f"{self.repos}x{self.modules}x{self.versions}"

    def version(self, n: int) -> str:
        return f"{1 + n // 10}.{n % 10}.0"


# -- the repositories -------------------------------------------------------------------------


def _monorepo(path: Path, number: int, shape: Shape) -> None:
    """A release train: one commit per version, each tagged for every module of the repository
    (`mod3/v1.2.0`), written by dulwich as one pack and one packed-refs file, so that the
    clones hold packs as real ones do, and no `git tag` runs per tag."""
    repo = Repo.init_bare(str(path), mkdir=True)
    objects: list[ShaFile] = []
    refs: dict[Ref, ObjectID | None] = {}
    parents: list[ObjectID] = []
    for v in range(shape.versions):
        version = shape.version(v)
        root = Tree()
        for m in range(shape.modules):
            text = f'output "x" {{ value = "r{number} mod{m} {version}" }}\n'
            blob = Blob.from_string(text.encode())
            folder = Tree()
            folder.add(b"main.tf", 0o100644, blob.id)
            root.add(f"mod{m}".encode(), 0o040000, folder.id)
            objects += [blob, folder]
        commit = Commit()
        commit.tree = root.id
        commit.parents = parents
        commit.author = commit.committer = b"bench <bench@example.com>"
        commit.author_time = commit.commit_time = 1_700_000_000 + v
        commit.author_timezone = commit.commit_timezone = 0
        commit.message = f"release {version}\n".encode()
        objects += [root, commit]
        parents = [commit.id]
        refs.update(
            (Ref(f"refs/tags/mod{m}/v{version}".encode()), commit.id) for m in range(shape.modules)
        )
    repo.object_store.add_objects([(o, None) for o in objects])
    refs[Ref(b"refs/heads/main")] = parents[0]
    repo.refs.add_packed_refs(refs)
    repo.refs.set_symbolic_ref(Ref(b"HEAD"), Ref(b"refs/heads/main"))
    repo.close()


def _generate(served: Path, shape: Shape) -> float | None:
    """The served repositories, made once per shape; the seconds it took, None when cached."""
    done = served / ".complete"
    if done.exists():
        return None
    shutil.rmtree(served, ignore_errors=True)
    served.mkdir(parents=True)
    start = time.perf_counter()
    with ProcessPoolExecutor() as pool:
        list(
            pool.map(
                _monorepo,
                [served / f"r{n}.git" for n in range(shape.repos)],
                range(shape.repos),
                [shape] * shape.repos,
                chunksize=20,
            )
        )
    done.write_text(shape.name)
    return time.perf_counter() - start


def _daemon_port(workdir: Path) -> int:
    """The port of an earlier run when it is free: clone names derive from the repository URL,
    so another port would make every clone cold (and the old ones are then removed)."""
    saved = workdir / "daemon-port"
    if saved.exists():
        port = int(saved.read_text())
        with socket.socket() as s, contextlib.suppress(OSError):
            s.bind(("127.0.0.1", port))
            return port
    for cache in workdir.glob("cache-*"):
        shutil.rmtree(cache)
    port = free_port()
    saved.write_text(str(port))
    return port


def _catalog(path: Path, base: str, shape: Shape, repos: int, added: bool = False) -> Path:
    lines = [
        f"cache_dir: cache-{path.stem}",
        "refresh_interval: 1h",  # polling is measured on its own: keep it out of the serving figures
        "watch_catalog: false",  # reloads come from SIGHUP only, one at a time
        "modules:",
    ]
    for r in range(repos):
        for m in range(shape.modules):
            lines.append(
                f"  - {{namespace: bench, name: r{r}m{m}, system: generic, "
                f"repo: '{base}/r{r}.git', path: mod{m}, tags: 'mod{m}/v{{version}}'}}"
            )
    if added:
        lines.append(
            f"  - {{namespace: bench, name: {ADDED}, system: generic, "
            f"repo: '{base}/r0.git', path: mod0, tags: 'mod0/v{{version}}'}}"
        )
    path.write_text("\n".join(lines) + "\n")
    return path


def _warm(config: Path) -> float | None:
    """Clone every repository once (as a first start-up would); None when already done."""
    done = config.parent / f"cache-{config.stem}" / ".warm"
    if done.exists():
        return None
    start = time.perf_counter()
    Registry(load_catalog(config)).refresh()
    done.write_text("")
    return time.perf_counter() - start


# -- a real `gitreg serve` --------------------------------------------------------------------


@dataclass(frozen=True)
class Server:
    base: str
    pid: int
    log: Path
    startup: float  # seconds from the process's start to its first answer

    def rss_mb(self) -> tuple[float, float]:
        """Resident set now and at its peak, MB, from /proc."""
        status = Path(f"/proc/{self.pid}/status").read_text()
        found = dict(re.findall(r"(VmRSS|VmHWM):\s+(\d+) kB", status))
        return int(found["VmRSS"]) / 1024, int(found["VmHWM"]) / 1024

    def log_lines(self, pattern: str) -> int:
        return len(re.findall(pattern, self.log.read_text()))


@contextlib.contextmanager
def _serve(config: Path, log: Path) -> Iterator[Server]:
    port = free_port()
    command = [sys.executable, "-m", "gitreg", "serve", "--log-level", "info"]
    command += ["--config", str(config), "--listen", f"127.0.0.1:{port}"]
    base = f"http://127.0.0.1:{port}"
    with open(log, "w") as out:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=out)
    try:
        deadline = start + 600
        while True:
            if process.poll() is not None or time.perf_counter() > deadline:
                raise RuntimeError(f"{command} did not start; see {log}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                    break
            time.sleep(0.02)
        yield Server(base, process.pid, log, time.perf_counter() - start)
    finally:
        process.terminate()
        process.wait(timeout=30)


# -- reloads and latency ------------------------------------------------------------------------


def _reload(server: Server, until: float = 600.0) -> float:
    """SIGHUP, then the seconds until the reload's log line."""
    before = server.log_lines("catalog reloaded")
    start = time.perf_counter()
    os.kill(server.pid, signal.SIGHUP)
    while server.log_lines("catalog reloaded") == before:
        if time.perf_counter() - start > until:
            raise TimeoutError("no reload logged")
        time.sleep(0.01)
    return time.perf_counter() - start


def _appears(server: Server, path: str, start: float, until: float = 600.0) -> float:
    with httpx.Client(base_url=server.base, timeout=10) as client:
        while client.get(path).status_code != 200:
            if time.perf_counter() - start > until:
                raise TimeoutError(f"{path} did not appear")
            time.sleep(0.02)
    return time.perf_counter() - start


async def _probe(
    url: str, stop: asyncio.Event, workers: int = 4, pause: float = 0.01
) -> list[tuple[float, float]]:
    """(start, latency) of each `versions` request by a few paced clients, until `stop`."""
    samples: list[tuple[float, float]] = []
    async with httpx.AsyncClient(timeout=60) as client:

        async def worker() -> None:
            while not stop.is_set():
                start = time.perf_counter()
                (await client.get(url)).raise_for_status()
                samples.append((start, time.perf_counter() - start))
                await asyncio.sleep(pause)

        await asyncio.gather(*(worker() for _ in range(workers)))
    return samples


async def _latency_during_reload(
    server: Server, url: str, idle: float
) -> tuple[list[float], list[float], float]:
    """Latencies while idle (for `idle` seconds), then while a SIGHUP reload runs; its time."""
    stop = asyncio.Event()
    probe = asyncio.create_task(_probe(url, stop))
    await asyncio.sleep(idle)
    began = time.perf_counter()
    took = await asyncio.to_thread(_reload, server)
    stop.set()
    samples = await probe
    quiet = [lat for start, lat in samples if start < began]
    busy = [lat for start, lat in samples if began <= start < began + took]
    return quiet, busy, took


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# -- polling --------------------------------------------------------------------------------


def _cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _poll_round(
    config: Path, concurrency: int
) -> tuple[float, tuple[float, float], tuple[float, float]]:
    """Reading every clone in-process (as a reload does), then one polling round of unchanged
    repositories, and the same `git ls-remote` calls by xargs: (read s, (wall, cpu) twice)."""
    registry = Registry(load_catalog(config))
    start = time.perf_counter()
    registry.refresh(fetch=False)
    read = time.perf_counter() - start
    locations = list(registry.snapshot.clones)
    cpu, start = _cpu(), time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        fetched = sum(pool.map(registry.poll_repo, locations))
    ours = (time.perf_counter() - start, _cpu() - cpu)
    assert fetched == 0, "nothing changed, so nothing should be fetched"
    cpu, start = _cpu(), time.perf_counter()
    subprocess.run(
        ["xargs", "-P", str(concurrency), "-n", "1", "git", "ls-remote", "--tags", "-q"],
        input="\n".join(loc.url for loc in locations),
        text=True,
        stdout=subprocess.DEVNULL,
        check=True,
    )
    baseline = (time.perf_counter() - start, _cpu() - cpu)
    return read, ours, baseline


# -- the run --------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "gitreg-bench-scale"
    )
    parser.add_argument("--small", action="store_true", help="100 repositories: a quick check")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument(
        "--idle", type=float, default=5.0, help="seconds of latency probe before the reload"
    )
    args = parser.parse_args()
    shape = Shape(100 if args.small else 1000, 10, 50)
    workdir = args.workdir.resolve() / shape.name
    workdir.mkdir(parents=True, exist_ok=True)
    modules = shape.repos * shape.modules
    print(f"{modules} modules x {shape.versions} versions in {shape.repos} repositories; {workdir}")

    made = _generate(workdir / "served", shape)
    if made is not None:
        print(f"generated {shape.repos} repositories: {made:.1f} s")
    with git_daemon(workdir / "served", _daemon_port(workdir)) as base:
        big = _catalog(workdir / "big.yaml", base, shape, shape.repos)
        small = _catalog(workdir / "small.yaml", base, shape, 1)
        for config in (small, big):
            warmed = _warm(config)
            if warmed is not None:
                print(f"first clone of {config.stem} (cold, not a figure below): {warmed:.1f} s")

        with _serve(small, workdir / "small.log") as s, _serve(big, workdir / "big.log") as b:
            rss_small, rss_big = s.rss_mb(), b.rss_mb()
            path = f"/v1/modules/bench/r{shape.repos // 2}m5/generic/versions"
            small_rps, big_rps, ratio = paired_requests_per_second(
                s.base + "/v1/modules/bench/r0m5/generic/versions",
                b.base + path,
                args.rounds,
                args.concurrency,
            )
            _catalog(big, base, shape, shape.repos, added=True)
            start = time.perf_counter()
            reload_logged = _reload(b)
            added_seen = _appears(b, f"/v1/modules/bench/{ADDED}/generic/versions", start)
            _catalog(big, base, shape, shape.repos)
            quiet, busy, reload_loaded = asyncio.run(
                _latency_during_reload(b, b.base + path, args.idle)
            )
        read, ours, xargs = _poll_round(big, 16)

    client = "wrk" if shutil.which("wrk") else "httpx (likely the bottleneck)"
    print()
    print(f"{'':<44} {'10 modules':>12} {f'{modules} modules':>14} {'ratio':>7}")
    print(
        f"{'start-up from warm clones, s':<44} {s.startup:>12.2f} {b.startup:>14.2f} {b.startup / s.startup:>7.1f}"
    )
    print(
        f"{'RSS after start-up, MB':<44} {rss_small[0]:>12.0f} {rss_big[0]:>14.0f} {rss_big[0] / rss_small[0]:>7.1f}"
    )
    print(
        f"{'peak RSS during start-up, MB':<44} {rss_small[1]:>12.0f} {rss_big[1]:>14.0f} {rss_big[1] / rss_small[1]:>7.1f}"
    )
    print(
        f"{'versions req/s (' + client + ')':<44} {small_rps:>12.0f} {big_rps:>14.0f} {ratio:>7.2f}"
    )
    print()
    print(
        f"reload (SIGHUP, one module added): logged after {reload_logged:.2f} s, new module served after {added_seen:.2f} s"
    )
    print(f"reload under a latency probe: {reload_loaded:.2f} s")
    print(f"{'versions latency, ms':<44} {'n':>6} {'p50':>7} {'p99':>7} {'max':>7}")
    for name, values in (("idle", quiet), ("while a reload runs", busy)):
        print(
            f"{name:<44} {len(values):>6} {_percentile(values, 0.5) * 1000:>7.1f} "
            f"{_percentile(values, 0.99) * 1000:>7.1f} {max(values) * 1000:>7.1f}"
        )
    print()
    print(f"reading every clone in-process (a reload's work): {read:.2f} s")
    print(
        f"{'polling round, unchanged':<44} {'wall s':>8} {'cpu s':>8}   (cpu: this process and its git children)"
    )
    print(f"{'gitreg, 16 at a time':<44} {ours[0]:>8.2f} {ours[1]:>8.2f}")
    print(f"{'xargs -P 16 git ls-remote':<44} {xargs[0]:>8.2f} {xargs[1]:>8.2f}")
    print(f"{'ratio gitreg / baseline':<44} {ours[0] / xargs[0]:>8.2f} {ours[1] / xargs[1]:>8.2f}")


if __name__ == "__main__":
    main()
