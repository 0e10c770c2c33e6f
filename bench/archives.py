"""Archive downloads: cold (built on the first request) and warm (from the cache), against
`git archive --format=tar.gz` on the same commit as the baseline, all in the same run: wall
time, and CPU time (the server's, its git processes' included; git archive's), each as a ratio
to git archive's, per round (a shared machine's load moves wall times; CPU time less so).

The repository is made anew, the same bytes each time (seeded): --megabytes of files, three
fifths text (Terraform-like files of a few KB, which compress well) and two fifths binary-ish
(random bytes, 64 KB to 1 MB a file, which do not), in 40 folders.

    python -m bench.archives [--megabytes 60] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import httpx

from bench.harness import free_port, git, gitreg_serve, started


def _timed(action: object) -> float:
    start = time.perf_counter()
    action()  # type: ignore[operator]
    return time.perf_counter() - start


def _process_cpu(pid: int) -> float:
    """CPU seconds of the process and of the children it waited for (git cat-file's)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _children_cpu() -> float:
    times = os.times()
    return times.children_user + times.children_system


def _repository(path: Path, size: int) -> int:
    """A repository of about `size` bytes of files (see the module's docstring); their number."""
    rng = random.Random(1)
    path.mkdir()
    git(path, "init", "-q")
    text, binary, n = 0, 0, 0
    while text + binary < size:
        folder = path / f"dir{n % 40}"
        folder.mkdir(exist_ok=True)
        if text <= 1.5 * binary:  # three fifths of the bytes text, in many small files
            lines = (
                f'locals {{ v{n}_{j} = "{rng.getrandbits(64):016x}" }}\n'
                for j in range(rng.randrange(20, 200))
            )
            data = (f"# file {n}\n" + "".join(lines)).encode()
            name = f"file{n}.tf"
            text += len(data)
        else:
            data = rng.randbytes(rng.randrange(64_000, 1_000_000))
            name = f"blob{n}.bin"
            binary += len(data)
        (folder / name).write_bytes(data)
        n += 1
    return n


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--megabytes", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    # A git process the server left may still write into the repository while it is removed.
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        root = Path(tmp)
        repo = root / "big"
        files = _repository(repo, args.megabytes * 1_000_000)
        commits = []
        for n in range(args.rounds):
            (repo / "round.txt").write_text(str(n))
            git(repo, "add", "--all")
            git(repo, "commit", "-qm", f"round {n}")
            git(repo, "tag", f"v1.0.{n}")
            commits.append(git(repo, "rev-parse", "HEAD"))
        (root / "registry.yaml").write_text(
            "cache_dir: cache\nmodules:\n  - {namespace: bench, name: big, system: generic, repo: big}\n"
        )
        port = free_port()
        command = gitreg_serve(root / "registry.yaml", port)
        cold, warm, baseline, cold_cpu, baseline_cpu = [], [], [], [], []
        size = 0
        with (
            started(command, port, "/v1/modules/bench/big/generic/versions") as (base, process),
            httpx.Client(base_url=base, timeout=120) as client,
        ):
            for n, commit in enumerate(commits):
                location = client.get(f"/v1/modules/bench/big/generic/1.0.{n}/download").json()[
                    "location"
                ]
                spent = _process_cpu(process.pid)
                cold.append(_timed(lambda loc=location: client.get(loc).raise_for_status()))
                cold_cpu.append(_process_cpu(process.pid) - spent)
                warm.append(_timed(lambda loc=location: client.get(loc).raise_for_status()))
                size = len(client.get(location).content)
                spent = _children_cpu()
                baseline.append(
                    _timed(
                        lambda c=commit: subprocess.run(
                            ["git", "archive", "--format=tar.gz", c],
                            cwd=repo,
                            check=True,
                            capture_output=True,
                        )
                    )
                )
                baseline_cpu.append(_children_cpu() - spent)
    print(
        f"{files} files, {args.megabytes} MB; archive {size / 1e6:.1f} MB; "
        f"median of {args.rounds} rounds, and the range of the rounds' ratios"
    )
    for name, values, base_values in (
        ("git archive", baseline, baseline),
        ("gitreg cold", cold, baseline),
        ("gitreg warm", warm, baseline),
        ("cold CPU", cold_cpu, baseline_cpu),
        ("git CPU", baseline_cpu, baseline_cpu),
    ):
        ratios = [value / base for value, base in zip(values, base_values, strict=True)]
        print(
            f"{name:<12} {statistics.median(values) * 1000:9.1f} ms   ratio to git archive "
            f"{statistics.median(ratios):.2f} ({min(ratios):.2f} to {max(ratios):.2f})"
        )
    print(f"warm / cold  {statistics.median(warm) / statistics.median(cold):.3f}")


if __name__ == "__main__":
    main()
