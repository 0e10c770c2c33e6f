"""The cost of one polling round over many repositories (default 1,000), served by `git daemon`
on 127.0.0.1: wall time and CPU of gitreg's round (ls-remote each, compare, no fetch when
nothing changed), against the same `git ls-remote` calls made by xargs in the same run.

    python -m bench.poll_round [--repos 1000] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench.harness import free_port, git, git_daemon, module_repo
from gitreg.catalog.load import load_catalog
from gitreg.modules.sync import Registry


def _cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repos", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        work = module_repo(root / "work", [f"v1.{n}.0" for n in range(10)])
        served = root / "served"
        git(root, "clone", "-q", "--bare", str(work), str(served / "r0.git"))
        for n in range(1, args.repos):
            shutil.copytree(served / "r0.git", served / f"r{n}.git")
        with git_daemon(served, free_port()) as base:
            urls = [f"{base}/r{n}.git" for n in range(args.repos)]
            modules = "".join(
                f"  - {{namespace: b, name: m{n}, system: x, repo: '{u}'}}\n"
                for n, u in enumerate(urls)
            )
            (root / "registry.yaml").write_text(f"cache_dir: cache\nmodules:\n{modules}")
            registry = Registry(load_catalog(root / "registry.yaml"))
            start = time.perf_counter()
            registry.refresh()
            print(
                f"initial fetch of {args.repos} repositories: {time.perf_counter() - start:.1f} s"
            )

            locations = list(registry.snapshot.clones)
            cpu, start = _cpu(), time.perf_counter()
            with ThreadPoolExecutor(args.concurrency) as pool:
                fetched = sum(pool.map(registry.poll_repo, locations))
            ours = (time.perf_counter() - start, _cpu() - cpu)
            assert fetched == 0, "nothing changed, so nothing should be fetched"

            cpu, start = _cpu(), time.perf_counter()
            subprocess.run(
                [
                    "xargs",
                    "-P",
                    str(args.concurrency),
                    "-n",
                    "1",
                    "git",
                    "ls-remote",
                    "--tags",
                    "-q",
                ],
                input="\n".join(urls),
                text=True,
                stdout=subprocess.DEVNULL,
                check=True,
            )
            baseline = (time.perf_counter() - start, _cpu() - cpu)
    print(f"{'':<28} {'wall s':>8} {'cpu s':>8}   (cpu: this process and its git children)")
    print(f"{'gitreg polling round':<28} {ours[0]:>8.2f} {ours[1]:>8.2f}")
    print(f"{'xargs git ls-remote':<28} {baseline[0]:>8.2f} {baseline[1]:>8.2f}")
    print(
        f"ratio gitreg / baseline      {ours[0] / baseline[0]:>8.2f} {ours[1] / baseline[1]:>8.2f}"
    )
    print(f"a {args.repos}-repository round takes {ours[0] / 60:.0%} of a 60 s interval")


if __name__ == "__main__":
    main()
