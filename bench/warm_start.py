"""A start from the persisted index at 10,000 modules x 50 versions in 1,000 repositories
(`bench.scale`'s repositories, served by `git daemon`, warm clones): the seconds from `gitreg
serve` starting to its first correct `versions` answer, cold (no `cache_dir/index.jsonl`: every
clone read, as before) and warm (served from the index), with RSS at that answer.

    python -m bench.warm_start [--workdir DIR] [--copy DIR] [--cold]

`--workdir`: where `python -m bench.scale` made its repositories and clones (run it once
first). They are copied once to `--copy`, and served from there, so that this bench never
changes `bench.scale`'s cache. Without an index in the copy (or with `--cold`), a cold start
runs first, and writes it.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from bench.harness import free_port, git_daemon

# The first, a middle and the last repository's: a cold start reads them in this order.
MODULES = [f"/v1/modules/bench/{name}/generic/versions" for name in ("r0m0", "r500m5", "r999m9")]
NEWEST, COUNT = "5.9.0", 50  # bench.scale's shape: 50 versions, the newest 5.9.0


def _port_taken(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


@contextlib.contextmanager
def _daemon(workdir: Path) -> Iterator[None]:
    """bench.scale's git daemon, on the port its clones were made from (already running when
    bench.scale is)."""
    port = int((workdir / "daemon-port").read_text())
    if _port_taken(port):
        yield
        return
    with git_daemon(workdir / "served", port):
        yield


def _copy(workdir: Path, copy: Path) -> Path:
    """The big catalog and its cache, copied once; the copied catalog's path."""
    cache = copy / "cache"
    if not cache.exists():
        started = time.perf_counter()
        shutil.copytree(workdir / "cache-big", cache, symlinks=True)
        print(f"copied {workdir / 'cache-big'} to {cache}: {time.perf_counter() - started:.1f} s")
    text = (workdir / "big.yaml").read_text()
    config = copy / "big.yaml"
    config.write_text(re.sub(r"(?m)^cache_dir: .*$", f"cache_dir: {cache}", text, count=1))
    return config


def _correct(client: httpx.Client) -> bool:
    """Whether each of MODULES answers its 50 versions, newest first."""
    for module in MODULES:
        try:
            response = client.get(module)
        except httpx.HTTPError:
            return False
        if response.status_code != 200:
            return False
        versions = response.json()["modules"][0]["versions"]
        if len(versions) != COUNT or versions[0]["version"] != NEWEST:
            return False
    return True


def _rss_mb(pid: int) -> tuple[float, float]:
    status = Path(f"/proc/{pid}/status").read_text()
    found = dict(re.findall(r"(VmRSS|VmHWM):\s+(\d+) kB", status))
    return int(found["VmRSS"]) / 1024, int(found["VmHWM"]) / 1024


def _start(config: Path, log: Path, wait_for_index: bool) -> tuple[float, float, float, float]:
    """One `gitreg serve`: seconds to the first correct answers, RSS and peak RSS then (MB), and
    seconds until every repository is served (its log says so: a cold start may answer these
    three early, when a poll happens to read their repositories first). With `wait_for_index`,
    it runs on until it wrote the index."""
    port = free_port()
    command = [sys.executable, "-m", "gitreg", "serve", "--log-level", "info"]
    command += ["--config", str(config), "--listen", f"127.0.0.1:{port}"]
    with open(log, "w") as out:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=out)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            while not _correct(client):
                if process.poll() is not None or time.perf_counter() - started > 1200:
                    raise RuntimeError(f"{command} gave no correct answer; see {log}")
                time.sleep(0.02)
        seconds = time.perf_counter() - started
        rss, peak = _rss_mb(process.pid)
        while "start-up: read the clones" not in log.read_text(errors="replace"):
            time.sleep(0.05)
        served = time.perf_counter() - started
        while wait_for_index and "persisted index written" not in log.read_text(errors="replace"):
            time.sleep(0.5)
        return seconds, rss, peak, served
    finally:
        process.terminate()
        process.wait(timeout=600)  # a stop during the read of 1,000 clones waits for it


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--workdir",
        type=Path,
        default=Path(tempfile.gettempdir()) / "gitreg-bench-scale" / "1000x10x50",
    )
    parser.add_argument(
        "--copy", type=Path, default=Path(tempfile.gettempdir()) / "gitreg-bench-warm-start"
    )
    parser.add_argument("--cold", action="store_true", help="a cold start first, in any case")
    args = parser.parse_args()
    args.copy.mkdir(parents=True, exist_ok=True)
    config = _copy(args.workdir.resolve(), args.copy)
    index = args.copy / "cache" / "index.jsonl"
    rows = []
    with _daemon(args.workdir.resolve()):
        if args.cold or not index.exists():
            index.unlink(missing_ok=True)
            rows.append(("cold (every clone read)", *_start(config, args.copy / "cold.log", True)))
        rows.append(("warm (persisted index)", *_start(config, args.copy / "warm.log", False)))
    # answers: the first correct `versions` of r0m0, r500m5 and r999m9 (RSS then); all: the
    # log's "start-up: read the clones" (every repository served).
    print(f"index: {index.stat().st_size / 1e6:.1f} MB")
    for line in (args.copy / "warm.log").read_text().splitlines():
        if "persisted index" in line:
            print(line)
    print(
        f"{'seconds from the start to':<28} {'answers':>8} {'RSS MB':>8} {'peak MB':>8} {'all':>8}"
    )
    for name, seconds, rss, peak, served in rows:
        print(f"{name:<28} {seconds:>8.2f} {rss:>8.0f} {peak:>8.0f} {served:>8.2f}")


if __name__ == "__main__":
    main()
