"""What a rebuild of the dependents index costs at scale: N modules, each whose latest version
calls three others by registry address (one with a constraint, one pinned exactly, one by
`git::…?ref=`), as the docs warming leaves their calls in memory; `Dependents.rebuild` timed
as the server runs it (in-process, unpaced), and the peak memory of a build.

    python -m bench.dependents [--modules 10000] [--versions 50]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from pathlib import Path

from gitreg.address import ModuleAddress
from gitreg.catalog.model import Catalog
from gitreg.catalog.settings import FreshnessSettings, Listen, ServerSettings
from gitreg.catalog.specs import ModuleSpec
from gitreg.dependents.index import build, module_sites
from gitreg.dependents.sources import RegistrySources
from gitreg.docs.model import ModuleCall
from gitreg.git.location import RepoLocation
from gitreg.modules.index import ModuleEntry, VersionIndex
from gitreg.modules.resolve import ModuleVersions, Release

HOST = "registry.example.com"


def _world(modules: int, versions: int) -> tuple[Catalog, VersionIndex]:
    specs, entries = [], {}
    for n in range(modules):
        repo = RepoLocation(f"https://git.example.com/infra/m{n // 10}.git", "https")
        spec = ModuleSpec(ModuleAddress("infra", f"m{n:05d}", "aws"), repo, path=f"m{n % 10}")
        releases = tuple(
            Release(f"1.{v}.0", f"m{n % 10}/v1.{v}.0", f"{n:08x}{v:032x}")
            for v in reversed(range(versions))
        )
        specs.append(spec)
        entries[spec.address.key] = ModuleEntry(
            spec, Path("/none"), ModuleVersions(releases, (), 0)
        )
    server = ServerSettings(hostname=HOST, listen=Listen("127.0.0.1", 8443), tls=None)
    catalog = Catalog(
        Path("registry.yaml"),
        server,
        Path("cache"),
        FreshnessSettings(refresh_interval=60.0, fetch_timeout=120.0),
        (),
        tuple(specs),
    )
    return catalog, VersionIndex(entries)


def _calls(modules: int) -> dict[str, tuple[tuple[str, ModuleCall], ...]]:
    calls: dict[str, tuple[tuple[str, ModuleCall], ...]] = {}
    for n in range(modules):
        a, b, c = (n + 1) % modules, (n + 7) % modules, (n + 13) % modules
        calls[f"m{n:05d}"] = (
            ("", ModuleCall("a", f"{HOST}/infra/m{a:05d}/aws", "~> 1.2")),
            ("", ModuleCall("b", f"{HOST}/infra/m{b:05d}/aws", "= 1.0.0")),
            (
                "modules/x",
                ModuleCall(
                    "c",
                    f"git::https://git.example.com/infra/m{c // 10}.git//m{c % 10}"
                    f"?ref=m{c % 10}/v1.1.0",
                ),
            ),
        )
    return calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", type=int, default=10_000)
    parser.add_argument("--versions", type=int, default=50)
    args = parser.parse_args()
    catalog, index = _world(args.modules, args.versions)
    calls = _calls(args.modules)

    def rebuild() -> int:
        sources = RegistrySources.of(catalog)
        sites, pending = module_sites(index, lambda e, r: calls[e.spec.address.name])
        return len(build(index, sources, sites, pending=pending))

    for run in range(3):
        began, cpu = time.perf_counter(), time.process_time()
        indexed = rebuild()
        wall, spent = time.perf_counter() - began, time.process_time() - cpu
        print(
            f"run {run + 1}: {args.modules} modules, {indexed} calls indexed in {wall:.2f} s"
            f" ({spent:.2f} s CPU, {wall / args.modules * 1e6:.0f} µs a module)"
        )
    tracemalloc.start()
    rebuild()
    print(f"peak while building, traced: {tracemalloc.get_traced_memory()[1] / 1e6:.1f} MB")
    tracemalloc.stop()


if __name__ == "__main__":
    main()
