"""`gitreg usage`: who calls a module or uses a hosted provider, or which retired versions are
still used, and by whom.

`gitreg usage NS/NAME/SYSTEM` (or a provider's `NS/TYPE`): each caller's constraint, the version
it picks and whether that is deprecated; `gitreg usage --retiring [NS]`: each retired version,
its downloads of the last days and its callers. Run on the cache_dir a server uses, every caller
named. Exit status: 0 when no caller picks a deprecated version (nothing retired is still used),
1 when one does (something is), 2 on a usage error. See docs/dependents.md and docs/usage.md."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
from collections.abc import Sequence

from gitreg.catalog.model import Catalog
from gitreg.dependents.answers import dependent_line
from gitreg.dependents.consumers import ConsumerReads
from gitreg.dependents.keeping import Dependents
from gitreg.dependents.provider_answers import provider_dependent_line
from gitreg.dependents.retiring import report_days, retiring_report
from gitreg.dependents.retiring_answers import report_json, report_lines
from gitreg.docs.service import DocsService
from gitreg.docs.warming import warm
from gitreg.errors import ClientError, StateUnavailable
from gitreg.git.location import RepoLocation
from gitreg.modules.index import ModuleEntry
from gitreg.modules.snapshot import RegistrySnapshot
from gitreg.modules.sync import ModuleSync
from gitreg.providers.hosted import Providers
from gitreg.sources.surveys import SourceSurveys
from gitreg.state.configured import open_state
from gitreg.state.download_counts import PrincipalCount, today


def usage(catalog: Catalog, args: argparse.Namespace) -> int:
    if args.retiring is not None:
        if args.module is not None:
            return _wrong(args.module, "give either a module or --retiring [NAMESPACE]")
        return retiring(catalog, args)
    if args.module is None or args.days is not None or args.json:
        return _wrong(
            "usage", "give a module NAMESPACE/NAME/SYSTEM (--days and --json go with --retiring)"
        )
    parts = args.module.split("/")
    if len(parts) not in (2, 3):
        return _wrong(
            args.module, "give a module as NAMESPACE/NAME/SYSTEM or a provider as NAMESPACE/TYPE"
        )
    key = tuple(p.lower() for p in parts)
    served = SourceSurveys(catalog).served(catalog)
    known = [m.address.key for m in served.modules] + [p.key for p in served.providers]
    if key not in known:
        kind = "module" if len(parts) == 3 else "provider"
        return _wrong(args.module, f"no such {kind} in {catalog.source}")
    dependents, _ = _indexed(served, args)
    index = dependents.current if len(parts) == 3 else dependents.providers
    line = dependent_line if len(parts) == 3 else provider_dependent_line
    found = index.of(key)
    deprecated = sum(1 for d in found if d.deprecated)
    print(f"{args.module}: {len(found)} callers, {deprecated} on a deprecated version")
    for dependent in found:
        print(line(dependent))
    return 1 if deprecated else 0


def retiring(catalog: Catalog, args: argparse.Namespace) -> int:
    """`--retiring [NAMESPACE]`: the retiring report of one namespace, or of every one."""
    from gitreg.web.usage import module_key  # the key counts are kept by

    namespace = args.retiring.lower() or None
    try:
        days = report_days(args.days, catalog.downloads.retention)
    except ClientError as exc:
        return _wrong("--days", str(exc))
    served = SourceSurveys(catalog).served(catalog)
    if namespace and not any(m.address.key[0] == namespace for m in served.modules):
        return _wrong(args.retiring, f"no module of this namespace in {catalog.source}")
    dependents, snapshot = _indexed(served, args)
    index = dependents.current
    entries = [
        e for e in snapshot.index.entries() if e.spec.address.key[0] == namespace or not namespace
    ]
    since = today() - days + 1
    shared = open_state(catalog)
    store = shared.download_store()

    def recent(entry: ModuleEntry) -> Sequence[PrincipalCount]:
        return store.principals("module", module_key(entry.spec.address), since)

    try:
        report = retiring_report(
            entries,
            index,
            recent if catalog.downloads.enabled else None,
            lambda _: True,
            show_principals=True,
            days=days,
            since=since,
        )
    except StateUnavailable as exc:
        return _wrong("usage --retiring", f"the download counts cannot be read: {exc}")
    finally:
        store.close()
        shared.close()
    if args.offline and served.consumers:  # their callers are unknown: nothing is safe
        report = dataclasses.replace(report, complete=False)
    if args.json:
        print(json.dumps(report_json(report, args.retiring or None), indent=2))
    else:
        print("\n".join(report_lines(report, args.retiring or "every namespace")))
    return 1 if report.still_used else 0


def _indexed(served: Catalog, args: argparse.Namespace) -> tuple[Dependents, RegistrySnapshot]:
    """The dependents indexes of what a server on this cache_dir serves: clones fetched when
    missing (or with --fetch), docs warmed, consumers read (not with --offline)."""
    sync = ModuleSync(served)
    clones = sync.snapshot.clones

    def fetch(location: RepoLocation) -> bool:
        return not args.offline and (args.fetch or not clones[location].exists())

    docs = DocsService(served.cache_dir)
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
    for problem in dependents.current.problems:
        where = f"{problem.repository} {problem.path}".strip()
        print(f"not read: {where}: {problem.message}", file=sys.stderr)
    if args.offline and served.consumers:
        print("consumers not read: --offline fetches nothing", file=sys.stderr)
    return dependents, snapshot


def _wrong(what: str, why: str) -> int:
    print(f"gitreg: {what}: {why}", file=sys.stderr)
    return 2
