"""What warming the docs costs at scale: the latest version of N modules of their own (each a
folder of one repository, so that each is one docs build), warmed as a server does after a
swap (`gitreg.docs.warming.warm`), without a rest, then resting as the background's budget says
while requests keep arriving (a fifth of a CPU, `gitreg.process.cpu_budget`); its wall time,
the process's CPU time over it, and the RSS it leaves. In-process, on a fresh docs cache each
time (builds, not disk reads).

    python -m bench.docs_warming [--modules 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import tempfile
import time
from pathlib import Path

from bench.harness import git
from gitreg.catalog.load import load_catalog
from gitreg.docs.service import DocsService
from gitreg.docs.warming import warm
from gitreg.modules.sync import ModuleSync
from gitreg.process.cpu_budget import CpuBudget


def _catalog(root: Path, modules: int) -> Path:
    repo = root / "mono"
    repo.mkdir()
    git(repo, "init", "-q")
    for n in range(modules):
        folder = repo / f"m{n:05d}"
        folder.mkdir()
        (folder / "README.md").write_text(f"# Module {n}\n\nModule number {n}.\n")
        (folder / "main.tf").write_text(
            f'variable "name" {{\n  type    = string\n  default = "m{n}"\n}}\n\n'
            'output "name" {\n  value = var.name\n}\n'
        )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "x")
    git(repo, "tag", "v1.0.0")
    lines = [
        f"  - {{namespace: team, name: m{n:05d}, system: aws, repo: {repo}, path: m{n:05d}}}"
        for n in range(modules)
    ]
    config = root / "registry.yaml"
    config.write_text(
        "hostname: registry.example.test\ncache_dir: cache\nmodules:\n" + "\n".join(lines) + "\n"
    )
    return config


def _rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--modules", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        sync = ModuleSync(load_catalog(_catalog(root, args.modules)))
        sync.refresh()
        entries = sync.snapshot.index.entries()
        print(f"{args.modules} modules, one docs build each")
        print(
            f"{'rests':>6} {'wall s':>8} {'CPU s':>7} {'CPU/wall':>9} {'ms/module':>10} {'RSS MiB':>8}"
        )
        busy = CpuBudget(busy_for=float("inf"))  # as if requests never stopped arriving
        busy.request_arrived()
        for name, owe in (("none", lambda spent: 0.0), ("busy", busy.owe)):
            docs = DocsService(root / f"docs-{name}")
            before = resource.getrusage(resource.RUSAGE_SELF)
            began = time.monotonic()
            loaded = asyncio.run(warm(docs, entries, owe=owe))
            wall = time.monotonic() - began
            after = resource.getrusage(resource.RUSAGE_SELF)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            docs.close()
            assert loaded == args.modules, loaded
            print(
                f"{name:>6} {wall:>8.1f} {cpu:>7.1f} {cpu / wall:>9.2f}"
                f" {wall / args.modules * 1000:>10.1f} {_rss_mib():>8.0f}"
            )


if __name__ == "__main__":
    main()
