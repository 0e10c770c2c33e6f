"""What the pages cost: requests/s of `/` listing 1,000 modules, and of a module page, against
the modules.v1 `versions` endpoint of the same server, measured in the same run, alternating.

One `gitreg serve` process, plain HTTP on 127.0.0.1; the 1,000 modules share one repository
(twenty namespaces of fifty), so their docs are one build, done before measuring (a first page
waits for it; the list shows descriptions once built). The figures that matter are the ratios.

    python -m bench.pages [--rounds 5] [--concurrency 16] [--modules 1000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import httpx

from bench.harness import free_port, git, gitreg_serve, paired_requests_per_second, server

README = "# Network\n\nA network for one region, with public and private subnets.\n\n## Usage\n\nSet `cidr`.\n"
VARIABLES = "".join(
    f'variable "v{i}" {{\n  type        = string\n  default     = "x"\n  description = "Input {i}."\n}}\n'
    for i in range(20)
)


def _repository(path: Path) -> None:
    path.mkdir(parents=True)
    git(path, "init", "-q")
    (path / "README.md").write_text(README)
    (path / "variables.tf").write_text(VARIABLES)
    (path / "outputs.tf").write_text('output "id" {\n  value = "x"\n}\n')
    git(path, "add", "-A")
    git(path, "commit", "-qm", "x")
    for minor in range(1, 11):
        git(path, "tag", f"v1.{minor}.0")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--modules", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _repository(root / "net")
        lines = [
            f"  - {{namespace: team-{n // 50:02d}, name: net{n:04d}, system: aws, repo: net}}"
            for n in range(args.modules)
        ]
        config = root / "registry.yaml"
        config.write_text(
            "hostname: registry.example.test\ncache_dir: cache\nmodules:\n"
            + "\n".join(lines)
            + "\n"
        )
        port = free_port()
        with server(gitreg_serve(config, port), port, "/readyz") as base:
            versions = f"{base}/v1/modules/team-00/net0000/aws/versions"
            page = f"{base}/modules/team-00/net0000/aws"
            home = f"{base}/"
            with httpx.Client(timeout=120) as client:
                assert "Input 19." in client.get(page).text  # the docs, built once
                for _ in range(100):  # the list shows descriptions once the build is known
                    listed = client.get(home).text
                    if listed.count("A network for one region") >= args.modules:
                        break
                    time.sleep(0.1)
                size = len(listed)
            results = {
                f"/ ({args.modules} modules, {size // 1024} KiB)": paired_requests_per_second(
                    versions, home, args.rounds, args.concurrency
                ),
                "module page": paired_requests_per_second(
                    versions, page, args.rounds, args.concurrency
                ),
                "/?q=net0042": paired_requests_per_second(
                    versions, home + "?q=net0042", args.rounds, args.concurrency
                ),
            }
    print(
        f"{'page (median of ' + str(args.rounds) + ' rounds)':<34} {'versions req/s':>15} {'page req/s':>11} {'ratio':>6}"
    )
    for name, (base_n, page_n, ratio) in results.items():
        print(f"{name:<34} {base_n:>15.0f} {page_n:>11.0f} {ratio:>6.2f}")


if __name__ == "__main__":
    main()
