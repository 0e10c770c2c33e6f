"""What archives served cost in memory: a gitreg server's resident set (VmRSS, from /proc)
before and after it served 10,000 distinct archives, twice over, for each memory budget given.

One repository, one module, 10,000 commits each tagged (written by `git fast-import`), each
commit with a file of random bytes, so that every archive is distinct and about --kilobytes
large: 10,000 of them are more than the default budget holds. The archives are built once, by
the first server (every server shares one cache_dir, as workers do); each server then sends each
archive twice, by its download's location. The figure that matters is the growth against the
budget: what is held never exceeds the budget, and nothing else grows with the archives sent.

    python -m bench.archive_memory [--archives 10000] [--kilobytes 3]
        [--budgets 0,32MiB] [--tree PATH]

--tree runs another checkout's gitreg (its budgets: just "default", for a tree without the key).
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench.harness import free_port, gitreg_serve, started
from bench.installs import HERE, pythonpath

MODULE = "/v1/modules/bench/many/generic"


def _repository(path: Path, archives: int, size: int) -> None:
    """`archives` commits tagged v1.0.0 .., each with `size` random bytes, by git fast-import."""
    path.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    rng = random.Random(1)
    stream = bytearray()
    for n in range(archives):
        main = f'output "n" {{ value = {n} }}\n'.encode()
        data = rng.randbytes(size)
        stream += b"commit refs/heads/main\n"
        stream += f"mark :{n + 1}\ncommitter b <b@b> {1_700_000_000 + n} +0000\n".encode()
        stream += b"data 1\nx\n"
        if n:
            stream += f"from :{n}\n".encode()
        stream += f"M 644 inline main.tf\ndata {len(main)}\n".encode() + main + b"\n"
        stream += f"M 644 inline data.bin\ndata {len(data)}\n".encode() + data + b"\n"
        stream += f"reset refs/tags/v1.0.{n}\nfrom :{n + 1}\n\n".encode()
    subprocess.run(["git", "fast-import", "--quiet"], cwd=path, input=bytes(stream), check=True)


def _rss(pid: int) -> int:
    """The process's resident set, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def _send_all(client: httpx.Client, archives: int) -> None:
    for n in range(archives):
        location = client.get(f"{MODULE}/1.0.{n}/download").headers["x-terraform-get"]
        client.get(location).raise_for_status()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--archives", type=int, default=10_000)
    parser.add_argument("--kilobytes", type=int, default=3)
    parser.add_argument("--budgets", default="0,32MiB", help='comma-separated; "default": none')
    parser.add_argument("--tree", type=Path, default=HERE, help="the checkout whose gitreg runs")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        _repository(root / "many", args.archives, args.kilobytes * 1000)
        print(f"{args.archives} tagged commits written in {time.perf_counter() - start:.0f} s")
        sys.stdout.flush()
        for budget in args.budgets.split(","):
            memory = "" if budget == "default" else f"archives: {{memory_budget: {budget}}}\n"
            config = root / f"registry-{budget}.yaml"
            config.write_text(
                "cache_dir: cache\nrefresh_interval: 1h\nwatch_catalog: false\nfresh_reads: 0\n"
                f"{memory}modules:\n"
                "  - {namespace: bench, name: many, system: generic, repo: many}\n"
            )
            port = free_port()
            with pythonpath(args.tree.resolve()):
                context = started(gitreg_serve(config, port), port, "/readyz")
                base, process = context.__enter__()
            try:
                with httpx.Client(base_url=base, timeout=120) as client:
                    client.get(f"{MODULE}/versions").raise_for_status()
                    _send_all(client, 10)  # what the first requests load, not counted
                    before = _rss(process.pid)
                    start = time.perf_counter()
                    _send_all(client, args.archives)
                    first = time.perf_counter() - start
                    once = _rss(process.pid)
                    _send_all(client, args.archives)
                    twice = _rss(process.pid)
                rows.append((budget, before, once, twice, first))
            finally:
                context.__exit__(None, None, None)
            print(f"budget {budget}: done")
            sys.stdout.flush()
        size = sum(f.stat().st_size for f in (root / "cache").rglob("*.tar.gz"))
    mib = 2**20
    print(
        f"gitreg from {args.tree}; {args.archives} distinct archives, {size / mib:.1f} MiB in all"
        f" ({size / args.archives / 1000:.1f} kB each); VmRSS in MiB"
    )
    print(f"{'memory_budget':<14} {'before':>8} {'sent once':>10} {'twice':>8} {'growth':>8}")
    for budget, before, once, twice, first in rows:
        print(
            f"{budget:<14} {before / mib:>8.1f} {once / mib:>10.1f} {twice / mib:>8.1f}"
            f" {(twice - before) / mib:>8.1f}   (first pass {first:.0f} s)"
        )


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
