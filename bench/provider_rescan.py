"""One rescan of a provider's artifact folder, as the provider watch runs every 2 s: cold (a new
ArtifactFolder: every zip hashed, every signature checked) and warm (the same ArtifactFolder
again, nothing changed), against listing and stat'ing the folder's files, all in the same run.

    python -m bench.provider_rescan [--releases 50] [--platforms 3] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from gitreg.providers.artifacts import ArtifactFolder
from gitreg.signing import Keyring
from tests.support.provider_releases import new_key, write_release

_PLATFORMS = ("linux_amd64", "linux_arm64", "darwin_arm64", "windows_amd64", "darwin_amd64")


def _timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def _list_and_stat(folder: Path) -> None:
    for path in [*folder.glob("*"), *folder.glob("*/*")]:
        path.stat()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--releases", type=int, default=50)
    parser.add_argument("--platforms", type=int, default=3, choices=range(1, len(_PLATFORMS) + 1))
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    ci, ours = new_key("ci"), new_key("gitreg")
    keyring = Keyring([ours], [ci.pubkey])
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        artifacts = root / "releases"
        for n in range(args.releases):
            version = f"1.{n}.0"
            write_release(
                artifacts / version, "widget", version, _PLATFORMS[: args.platforms], signer=ci
            )

        def new_folder() -> ArtifactFolder:
            return ArtifactFolder(artifacts, "widget", keyring, root / "signatures")

        releases, problems = new_folder().scan()
        assert len(releases) == args.releases and not problems, problems
        baseline, cold, warm = [], [], []
        for _ in range(args.rounds):
            baseline.append(_timed(lambda: _list_and_stat(artifacts)))
            folder = new_folder()
            cold.append(_timed(folder.scan))
            warm.append(statistics.median(_timed(folder.scan) for _ in range(5)))
    base, c, w = (statistics.median(t) for t in (baseline, cold, warm))
    files = args.releases * (args.platforms + 3)  # the zips, SHA256SUMS, .sig, manifest
    print(
        f"{args.releases} releases x {args.platforms} platforms ({files} files), median of {args.rounds}"
    )
    print(f"{'':<24} {'ms':>9} {'x baseline':>11}")
    for name, value in (("list + stat (baseline)", base), ("scan, cold", c), ("scan, warm", w)):
        print(f"{name:<24} {value * 1000:>9.2f} {value / base:>11.1f}")


if __name__ == "__main__":
    main()
