"""A registry under hostile conditions, measured on a real `gitreg serve`, all in the same run:

1. a cold archive of one repository while 400 signed webhooks for another arrive at once,
   against the same download with nothing else going on (ratio), and the fetches they cost;
2. the server's peak memory (VmHWM) building the archive of a commit with a 300 MB file of
   zeros, against one with small files only.

    python -m bench.hostile [--rounds 5] [--copies 400] [--big-mb 300]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench.harness import free_port, git, git_daemon

SECRET = "bench-hostile-secret"


def _repo(path: Path, files: dict[str, bytes], tag: str = "v1.0.0") -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q")
    for name, data in files.items():
        (path / name).write_bytes(data)
    git(path, "add", ".")
    git(path, "commit", "-qm", "x")
    git(path, "tag", tag)
    return path


def _start(config: Path, port: int) -> tuple[subprocess.Popen[bytes], str]:
    command = [sys.executable, "-m", "gitreg", "serve", "--log-level", "warning"]
    command += ["--config", str(config), "--listen", f"127.0.0.1:{port}"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if httpx.get(f"{base}/readyz", timeout=1).status_code == 200:
                return process, base
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    process.kill()
    raise RuntimeError("gitreg did not become ready")


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    process.wait(timeout=30)


def _archive_url(base: str, module: str) -> str:
    location = httpx.get(f"{base}/v1/modules/bench/{module}/x/1.0.0/download").headers[
        "x-terraform-get"
    ]
    return base + location.split("//")[0]


def _timed_get(url: str) -> float:
    start = time.perf_counter()
    httpx.get(url, timeout=300).raise_for_status()
    return time.perf_counter() - start


def flood(root: Path, rounds: int, copies: int) -> None:
    served = root / "served"
    _repo(served / "flooded.git.work", {"main.tf": b'output "x" { value = 1 }\n'})
    subprocess.run(
        [
            "git",
            "clone",
            "-q",
            "--bare",
            str(served / "flooded.git.work"),
            str(served / "flooded.git"),
        ],
        check=True,
    )
    modules = []
    for i in range(2 * rounds):
        files = {f"f{n}.tf": os.urandom(2000).hex().encode() for n in range(200)}
        modules.append(_repo(root / f"cold{i}", files))
    with git_daemon(served, free_port()) as daemon:
        config = root / "flood.yaml"
        lines = [
            f"cache_dir: {root / 'cache-flood'}",
            "refresh_interval: 1h",
            "fresh_reads: 0",
            "webhooks: {secret_env: BENCH_HOSTILE_SECRET}",
            "modules:",
            f"  - {{namespace: bench, name: flooded, system: x, repo: '{daemon}/flooded.git'}}",
        ]
        lines += [
            f"  - {{namespace: bench, name: cold{i}, system: x, repo: '{path}'}}"
            for i, path in enumerate(modules)
        ]
        config.write_text("\n".join(lines) + "\n")
        os.environ["BENCH_HOSTILE_SECRET"] = SECRET
        process, base = _start(config, free_port())
        try:
            body_url = f"{daemon}/flooded.git"
            idle, flooded = [], []
            for n in range(rounds):
                idle.append(_timed_get(_archive_url(base, f"cold{2 * n}")))
                flooded.append(
                    asyncio.run(
                        _flood_and_download(
                            f"{base}/v1/webhooks/generic",
                            body_url,
                            copies,
                            _archive_url(base, f"cold{2 * n + 1}"),
                        )
                    )
                )
            metrics = httpx.get(f"{base}/metrics").text
        finally:
            _stop(process)
    fetches = sum(
        float(line.split()[-1])
        for line in metrics.splitlines()
        if line.startswith('gitreg_syncs_total{mechanism="webhook"')
    )
    print(f"cold archive, idle:                  median {statistics.median(idle) * 1000:7.1f} ms")
    print(
        f"cold archive, {copies} webhooks arriving: median "
        f"{statistics.median(flooded) * 1000:7.1f} ms"
    )
    print(
        f"ratio flood/idle (median of rounds):  {statistics.median(flooded) / statistics.median(idle):.2f}x"
    )
    print(f"webhook syncs for {rounds * copies} deliveries: {fetches:.0f}")


async def _flood_and_download(webhook: str, url: str, copies: int, archive: str) -> float:
    """The flood from one client, the timed download from another (its own connection and
    thread), so that the download never waits for the flooding client's connection pool."""
    body = json.dumps({"repository": url}).encode()
    signature = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    headers = {"Content-Type": "application/json", "X-Gitreg-Signature": signature}
    limits = httpx.Limits(max_connections=100)
    async with httpx.AsyncClient(limits=limits, timeout=120) as client:
        posts = [
            asyncio.ensure_future(client.post(webhook, content=body, headers=headers))
            for _ in range(copies)
        ]
        await asyncio.sleep(0.05)  # the flood under way
        took = await asyncio.to_thread(_timed_get, archive)
        await asyncio.gather(*posts)
    return took


def _peak_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError("no VmHWM")


def memory(root: Path, big_mb: int) -> None:
    small = _repo(root / "small", {"main.tf": b'output "x" { value = 1 }\n'})
    big = root / "big"
    big.mkdir()
    git(big, "init", "-q")
    (big / "main.tf").write_text('output "x" { value = 1 }\n')
    with (big / "zeros.bin").open("wb") as out:
        out.truncate(big_mb * 2**20)
    git(big, "add", ".")
    git(big, "commit", "-qm", "big")
    git(big, "tag", "v1.0.0")
    config = root / "memory.yaml"
    config.write_text(
        f"cache_dir: {root / 'cache-memory'}\nmodules:\n"
        f"  - {{namespace: bench, name: small, system: x, repo: '{small}'}}\n"
        f"  - {{namespace: bench, name: big, system: x, repo: '{big}'}}\n"
    )
    process, base = _start(config, free_port())
    try:
        _timed_get(_archive_url(base, "small"))
        after_small = _peak_kib(process.pid)
        took = _timed_get(_archive_url(base, "big"))
        after_big = _peak_kib(process.pid)
    finally:
        _stop(process)
    print(f"peak RSS after a small archive:        {after_small / 1024:7.1f} MiB")
    print(
        f"peak RSS after a {big_mb} MB file's archive: {after_big / 1024:7.1f} MiB "
        f"(+{(after_big - after_small) / 1024:.1f} MiB, built in {took:.1f} s)"
    )
    print(f"growth / file size:                  {(after_big - after_small) / 1024 / big_mb:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--copies", type=int, default=400)
    parser.add_argument("--big-mb", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        flood(Path(tmp), args.rounds, args.copies)
        memory(Path(tmp), args.big_mb)


if __name__ == "__main__":
    main()
