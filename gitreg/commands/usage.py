"""`gitreg usage NS/NAME/SYSTEM` or `NS/TYPE`: who calls a module or uses a hosted provider.

With which constraint, at which version, and whether that version is deprecated; on the
cache_dir a server uses, every caller named. Exit status: 0 when no caller would pick a
deprecated version, 1 when one would, 2 when the module or provider is not in the catalog.
See docs/dependents.md."""

from __future__ import annotations

import argparse
import asyncio
import sys

from gitreg.catalog.model import Catalog
from gitreg.dependents.answers import dependent_line
from gitreg.dependents.consumers import ConsumerReads
from gitreg.dependents.keeping import Dependents
from gitreg.dependents.provider_answers import provider_dependent_line
from gitreg.docs.service import DocsService
from gitreg.docs.warming import warm
from gitreg.git.location import RepoLocation
from gitreg.modules.sync import ModuleSync
from gitreg.providers.hosted import Providers
from gitreg.sources.surveys import SourceSurveys


def usage(catalog: Catalog, args: argparse.Namespace) -> int:
    parts = args.module.split("/")
    if len(parts) not in (2, 3):
        print(
            f"gitreg: {args.module}: give a module as NAMESPACE/NAME/SYSTEM"
            " or a provider as NAMESPACE/TYPE",
            file=sys.stderr,
        )
        return 2
    key = tuple(p.lower() for p in parts)
    served = SourceSurveys(catalog).served(catalog)
    known = [m.address.key for m in served.modules] + [p.key for p in served.providers]
    if key not in known:
        kind = "module" if len(parts) == 3 else "provider"
        print(f"gitreg: {args.module}: no such {kind} in {catalog.source}", file=sys.stderr)
        return 2
    sync = ModuleSync(served)
    clones = sync.snapshot.clones

    def fetch(location: RepoLocation) -> bool:
        return not args.offline and (args.fetch or not clones[location].exists())

    docs = DocsService(catalog.cache_dir)
    try:
        sync.refresh(fetch=fetch, mechanism="cli")
        snapshot = sync.snapshot
        asyncio.run(warm(docs, snapshot.index.entries()))
        consumers = ConsumerReads()
        if not args.offline:
            consumers.read(served)
        providers = Providers(snapshot.catalog, sync)
        providers.refresh()  # what cache_dir holds of forges' releases, as `gitreg list`
        dependents = Dependents(docs, consumers, lambda: providers)
        dependents.rebuild(snapshot)
    finally:
        docs.close()
        sync.shared.close()
    index = dependents.current if len(parts) == 3 else dependents.providers
    line = dependent_line if len(parts) == 3 else provider_dependent_line
    found = index.of(key)
    deprecated = sum(1 for d in found if d.deprecated)
    print(f"{args.module}: {len(found)} callers, {deprecated} on a deprecated version")
    for dependent in found:
        print(line(dependent))
    for problem in index.problems:
        where = f"{problem.repository} {problem.path}".strip()
        print(f"not read: {where}: {problem.message}", file=sys.stderr)
    if args.offline and catalog.consumers:
        print("consumers not read: --offline fetches nothing", file=sys.stderr)
    return 1 if deprecated else 0
