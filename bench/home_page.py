"""What the lists cost at 10,000 modules: requests/s of `/` (the namespaces), of one namespace's
first page (100 modules), of `/v1/modules` (its first page, and one near the end), and of a
search of the whole directory, each against the modules.v1 `versions` endpoint of the same
server, measured in the same run, alternating (`bench.harness`). The issue's goal (19, item 5):
`/` at 10,000 modules at least 0.5 x `versions`.

One `gitreg serve` process, plain HTTP on 127.0.0.1; the modules are `--namespaces` namespaces
of equal size, every one the root of one repository: one clone and one docs build, so the
catalog is served within seconds and the figures are the lists' alone.

    python -m bench.home_page [--modules 10000] [--namespaces 100] [--rounds 5] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import httpx

from bench.harness import free_port, gitreg_serve, module_repo, paired_requests_per_second, server


def _catalog(root: Path, modules: int, namespaces: int) -> Path:
    repo = module_repo(root / "net", [f"v1.{minor}.0" for minor in range(1, 6)])
    per = -(-modules // namespaces)
    lines = [
        f"  - {{namespace: team-{n // per:03d}, name: net{n:05d}, system: aws, repo: {repo}}}"
        for n in range(modules)
    ]
    config = root / "registry.yaml"
    config.write_text(
        "hostname: registry.example.test\ncache_dir: cache\nmodules:\n" + "\n".join(lines) + "\n"
    )
    return config


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--modules", type=int, default=10_000)
    parser.add_argument("--namespaces", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        config = _catalog(Path(tmp), args.modules, args.namespaces)
        port = free_port()
        began = time.monotonic()
        with server(gitreg_serve(config, port), port, "/readyz") as base:
            ready = time.monotonic() - began
            versions = f"{base}/v1/modules/team-000/net00000/aws/versions"
            last = args.modules - 1
            middle = f"team-{args.namespaces // 2:03d}"
            pages = {
                "/": f"{base}/",
                f"/?namespace={middle}": f"{base}/?namespace={middle}",
                "/v1/modules": f"{base}/v1/modules",
                f"/v1/modules?offset={last - 99}&limit=100": (
                    f"{base}/v1/modules?offset={last - 99}&limit=100"
                ),
                "/?q=net00042 (whole catalog)": f"{base}/?q=net00042",
            }
            with httpx.Client(timeout=120) as client:
                sizes = {name: len(client.get(url).content) for name, url in pages.items()}
                time.sleep(2)  # the docs warming's one build, then the listing's descriptions
                sizes = {name: len(client.get(url).content) for name, url in pages.items()}
            results = {
                name: paired_requests_per_second(versions, url, args.rounds, args.concurrency)
                for name, url in pages.items()
            }
    print(f"{args.modules} modules in {args.namespaces} namespaces; served after {ready:.1f} s")
    header = f"{'list (median of ' + str(args.rounds) + ' rounds)':<42}"
    print(f"{header} {'KiB':>6} {'versions req/s':>15} {'list req/s':>11} {'ratio':>6}")
    for name, (base_n, page_n, ratio) in results.items():
        print(
            f"{name:<42} {sizes[name] / 1024:>6.1f} {base_n:>15.0f} {page_n:>11.0f} {ratio:>6.2f}"
        )


if __name__ == "__main__":
    main()
