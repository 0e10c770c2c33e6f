"""One polling round of unchanged repositories against `git ls-remote` by xargs, in the same run,
over the same `git daemon` on 127.0.0.1: wall and CPU (this process and its git children).

The repositories are `bench.scale`'s release trains (default 1,000 of 10 modules x 50 versions:
500 tags each), made once under --workdir with their warm clones (one full sync), so a rerun
only polls. The round is gitreg's own: `Poller.poll` on every repository, `poll_concurrency`
(16) at a time, as `Poller.run` does when they are due together; xargs gets the same -P.

    python -m bench.polling [--repos 1000] [--modules 10] [--versions 50] [--rounds 3]
"""

from __future__ import annotations

import argparse
import gc
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import gitreg
from bench.harness import git_daemon, wall_and_cpu
from bench.scale.repos import Shape, daemon_port, generate, warm, write_catalog
from gitreg.catalog.load import load_catalog
from gitreg.freshness.poller import Poller
from gitreg.modules.sync import ModuleSync


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "gitreg-bench-polling"
    )
    parser.add_argument("--repos", type=int, default=1000)
    parser.add_argument("--modules", type=int, default=10, help="per repository")
    parser.add_argument("--versions", type=int, default=50, help="per module")
    parser.add_argument("--rounds", type=int, default=3, help="each: xargs, then gitreg")
    args = parser.parse_args()
    shape = Shape(args.repos, args.modules, args.versions)
    workdir = args.workdir.resolve() / shape.name
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"{shape.repos} repositories of {shape.modules * shape.versions} tags; {workdir}")
    print(f"gitreg from {Path(gitreg.__file__).parent}")
    made = generate(workdir / "served", shape)
    if made is not None:
        print(f"generated the repositories: {made:.1f} s")
    with git_daemon(workdir / "served", daemon_port(workdir)) as base:
        config = write_catalog(workdir / "polling.yaml", base, shape, shape.repos)
        warmed = warm(config)
        if warmed is not None:
            print(f"first clone of every repository (cold, not a figure below): {warmed:.1f} s")
        sync = ModuleSync(load_catalog(config))
        sync.read_clones()
        gc.freeze()  # as `gitreg serve` does once its clones are read: no collection walks them
        poller = Poller(sync)
        locations = list(sync.snapshot.clones)
        concurrency = sync.snapshot.catalog.freshness.poll_concurrency

        def ours() -> None:
            with ThreadPoolExecutor(concurrency) as pool:
                list(pool.map(poller.poll, locations))

        def xargs() -> None:
            command = ["xargs", "-P", str(concurrency), "-n", "1", "git", "ls-remote", "--tags"]
            urls = "\n".join(loc.url for loc in locations)
            subprocess.run(command, input=urls, text=True, stdout=subprocess.DEVNULL, check=True)

        rows = []
        for _ in range(args.rounds):
            rows.append((wall_and_cpu(xargs), wall_and_cpu(ours)))
            fetched = sync.sync_counts[("poll", "ok")]
            assert fetched == 0, f"nothing changed, yet {fetched} repositories were fetched"
            failed = sum(poller.failures.values())
            assert failed == 0, f"{failed} polls failed"
    print(f"{'round':<6} {'xargs wall/cpu s':>18} {'gitreg wall/cpu s':>18} {'ratio wall/cpu':>16}")
    for n, ((xw, xc), (ow, oc)) in enumerate(rows, 1):
        print(f"{n:<6} {xw:>9.2f} {xc:>8.2f} {ow:>9.2f} {oc:>8.2f} {ow / xw:>8.2f} {oc / xc:>7.2f}")
    ratios = sorted(ow / xw for (xw, _), (ow, _) in rows)
    print(f"median wall ratio gitreg / xargs git ls-remote: {ratios[len(ratios) // 2]:.2f}")


if __name__ == "__main__":
    main()
