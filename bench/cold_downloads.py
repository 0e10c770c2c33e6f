"""A first `terraform init` of a version nobody asked for: its `download`, then its archive, the
cold pair, timed per request; then the same two again (cached), for this checkout and for
another (`--tree`, the code before a change) in the same run, each its own server on its own
copy of the same repositories. Since archive locations carry the archive's digest, the cold
`download` waits for the archive's build, and the archive after it is a cached one.

Two repositories: a small module (what most are) and one of --megabytes of files (as
`bench.archives` makes them); --versions versions each, every one asked once cold. The figures
are medians over versions, in milliseconds, and each as a ratio to the other tree's. The two
servers are measured a version at a time, in turn, once both are idle. The big repository's
text files are renamed from `.tf`: a start documents each module's latest version, and
thousands of files to parse would be measured instead.

    python -m bench.cold_downloads --tree /work/main [--versions 5] [--megabytes 20]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import httpx

from bench.archives import _repository
from bench.harness import cpu_seconds, free_port, git, gitreg_serve, started

HERE = Path(__file__).resolve().parent.parent
STEPS = ("download cold", "archive after it", "cold pair", "download cached", "archive cached")


def _tagged(repo: Path, versions: int) -> None:
    for n in range(versions):
        (repo / "round.txt").write_text(str(n))
        git(repo, "add", "--all")
        git(repo, "commit", "-qm", f"round {n}")
        git(repo, "tag", f"v1.0.{n}")


def _small(path: Path) -> None:
    path.mkdir()
    git(path, "init", "-q")
    (path / "main.tf").write_text('variable "x" {}\noutput "x" { value = var.x }\n')


def _timed(client: httpx.Client, path: str) -> tuple[float, httpx.Response]:
    start = time.perf_counter()
    answer = client.get(path)
    elapsed = time.perf_counter() - start
    answer.raise_for_status()
    return elapsed * 1000, answer


def _measure(client: httpx.Client, module: str, n: int, got: dict[str, list[float]]) -> None:
    download = f"/v1/modules/bench/{module}/generic/1.0.{n}/download"
    cold, answer = _timed(client, download)
    archive = answer.headers["x-terraform-get"].partition("?")[0]  # as go-getter asks
    after, _ = _timed(client, archive)
    got["download cold"].append(cold)
    got["archive after it"].append(after)
    got["cold pair"].append(cold + after)
    got["download cached"].append(_timed(client, download)[0])
    got["archive cached"].append(_timed(client, archive)[0])


def _idle(pids: list[int]) -> None:
    """Until the servers spent under 20 ms of CPU in half a second (their start's work done)."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        before = sum(cpu_seconds(pid) for pid in pids)
        time.sleep(0.5)
        if sum(cpu_seconds(pid) for pid in pids) - before < 0.02:
            return


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", type=Path, required=True, help="the checkout to compare with")
    parser.add_argument("--versions", type=int, default=5)
    parser.add_argument("--megabytes", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        root = Path(tmp)
        _small(root / "small")
        _repository(root / "big", args.megabytes * 1_000_000)
        for made in (root / "big").rglob("*.tf"):  # documented at start: not the subject here
            made.rename(made.with_suffix(".hcl"))
        (root / "big" / "main.tf").write_text('output "x" { value = 1 }\n')
        for name in ("small", "big"):
            _tagged(root / name, args.versions)
        trees = {"after": HERE, "before": args.tree.resolve()}
        results: dict[tuple[str, str], dict[str, list[float]]] = {
            (label, module): {step: [] for step in STEPS}
            for label in trees
            for module in ("small", "big")
        }
        with ExitStack() as stack:
            clients, pids = {}, []
            for label, tree in trees.items():
                folder = root / label
                folder.mkdir()
                for name in ("small", "big"):
                    shutil.copytree(root / name, folder / name, symlinks=True)
                (folder / "registry.yaml").write_text(
                    "cache_dir: cache\nrefresh_interval: 1h\nwatch_catalog: false\n"
                    "fresh_reads: 0\narchives: {memory_budget: 0}\nmodules:\n"
                    "  - {namespace: bench, name: small, system: generic, repo: small}\n"
                    "  - {namespace: bench, name: big, system: generic, repo: big}\n"
                )
                port = free_port()
                # In the tree's folder: `python -m` puts the working folder before PYTHONPATH.
                command = ["env", "-C", str(tree), f"PYTHONPATH={tree}"]
                command += gitreg_serve(folder / "registry.yaml", port)
                base, process = stack.enter_context(started(command, port, "/readyz"))
                pids.append(process.pid)
                clients[label] = stack.enter_context(httpx.Client(base_url=base, timeout=300))
            _idle(pids)
            for module in ("small", "big"):
                for n in range(args.versions):
                    order = ("before", "after") if n % 2 else ("after", "before")
                    for label in order:  # a version at a time, in turn
                        _measure(clients[label], module, n, results[(label, module)])
    print(f"medians of {args.versions} versions, ms; after ÷ before")
    for module in ("small", "big"):
        print(f"{module} module" + (f" ({args.megabytes} MB of files)" if module == "big" else ""))
        for step in STEPS:
            before = statistics.median(results[("before", module)][step])
            after = statistics.median(results[("after", module)][step])
            print(f"  {step:18} before {before:9.1f}  after {after:9.1f}  {after / before:6.2f}")


if __name__ == "__main__":
    main()
