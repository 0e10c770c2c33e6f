"""What the operator reads and decides from a shell, on the cache_dir a server uses: `gitreg list`,
`gitreg docs` and `gitreg accept`."""

from __future__ import annotations

import argparse
import asyncio
import sys

from gitreg.catalog.model import Catalog
from gitreg.errors import ClientError, SourceError
from gitreg.git.location import RepoLocation
from gitreg.modules.acceptance import accept as accept_moved_tag
from gitreg.modules.sync import ModuleSync
from gitreg.ops.docs_text import print_docs
from gitreg.ops.list_text import print_list, read_failures
from gitreg.ops.source_reports import source_reports
from gitreg.providers.hosted import Providers
from gitreg.sources.surveys import SourceSurveys
from gitreg.tags import parse_version


def list_modules(catalog: Catalog, args: argparse.Namespace) -> int:
    """What a server on this cache_dir serves: mirrors are read as they are, and fetched only
    when they do not exist yet (or with --fetch), so the repositories' state is the server's."""
    # The sources as a server on this cache_dir last surveyed them (cache_dir/sources.json);
    # with --fetch, surveyed again first (nothing written: the server's surveys stay its
    # own), and the list says what this run's surveys counted.
    sources = SourceSurveys(catalog)
    if args.fetch and not args.offline:
        for spec in catalog.sources:
            sources.survey(spec, write=False)
    sync = ModuleSync(sources.served(catalog))
    clones = sync.snapshot.clones

    def fetch(location: RepoLocation) -> bool:
        return not args.offline and (args.fetch or not clones[location].exists())

    sync.refresh(fetch=fetch, mechanism="cli")
    providers = Providers(sync.snapshot.catalog, sync)  # with the found ones
    providers.refresh()  # what cache_dir holds of forges' releases: the list never waits on one
    print_list(
        sync,
        providers,
        sources=source_reports(sources.surveys(), sources.settlement, sources.totals),
    )
    failures = read_failures(sync)
    if failures.nothing_read:  # a server on this cache_dir would serve no module at all
        print(
            f"gitreg: could not read any of the {failures.total} repositories:"
            " no module has a version to list",
            file=sys.stderr,
        )
        return 1
    return 0


def docs(catalog: Catalog, args: argparse.Namespace) -> int:
    """`gitreg docs NS/NAME/SYSTEM [VERSION]`: a version's documentation (default: the latest),
    from the clone a server on this cache_dir uses (fetched when missing, or with --fetch)."""
    parts = args.module.split("/")
    spec = next(
        (
            m
            for m in catalog.modules
            if len(parts) == 3 and m.address.key == tuple(p.lower() for p in parts)
        ),
        None,
    )
    if spec is None:
        why = f"no such module in {catalog.source}"
        if len(parts) != 3:
            why = "give the module as NAMESPACE/NAME/SYSTEM"
        print(f"gitreg: {args.module}: {why}", file=sys.stderr)
        return 2
    sync = ModuleSync(catalog)
    try:
        clone = sync.snapshot.clones[spec.repo]
        fetch = not args.offline and (args.fetch or not clone.exists())
        sync.sync_repo(spec.repo, "cli", fetch=fetch)
        entry = sync.snapshot.index.get(*spec.address.key)
        releases = entry.versions.releases if entry else ()
        if entry is None or not releases:
            why = sync.status[spec.repo].last_error or "no tag fits its templates"
            print(f"gitreg: {spec.address}: has no versions: {why}", file=sys.stderr)
            return 2
        wanted = _version(args.version) if args.version else releases[0].version
        release = entry.by_version.get(wanted)
        if release is None:
            known = ", ".join(r.version for r in releases[:10])
            more = ", ..." if len(releases) > 10 else ""
            print(
                f"gitreg: {spec.address} {args.version}: no such version (it has {known}{more})",
                file=sys.stderr,
            )
            return 2
        from gitreg.docs.service import DocsService  # HCL's parser, only for `gitreg docs`

        service = DocsService(catalog.cache_dir)
        try:
            module_docs = asyncio.run(service.module_docs(entry, release))
        except SourceError as exc:
            print(f"gitreg: {spec.address} {release.version}: cannot read: {exc}", file=sys.stderr)
            return 1
        finally:
            service.close()
    finally:
        sync.shared.close()
    print_docs(catalog.server.hostname, entry, release, module_docs)
    return 0


def _version(text: str) -> str:
    """A version as the index keys it (`v1.2` → `1.2.0`), or as given when it is none."""
    try:
        return str(parse_version(text.removeprefix("v")))
    except ValueError:
        return text


def accept(catalog: Catalog, args: argparse.Namespace) -> int:
    """An operator's decision on a moved tag: publish the commit it points at now."""
    if args.module.count("/") != 2:
        print(f"gitreg: {args.module}: give the module as NAMESPACE/NAME/SYSTEM", file=sys.stderr)
        return 2
    namespace, name, system = args.module.split("/")
    sync = ModuleSync(catalog)
    sync.refresh(fetch=False, mechanism="cli")
    try:
        print(accept_moved_tag(sync, namespace, name, system, args.version))
    except ClientError as exc:  # it names the module and the version
        print(f"gitreg: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:  # a version that is none
        print(f"gitreg: {args.module} {args.version}: {exc}", file=sys.stderr)
        return 2
    finally:
        sync.shared.close()
    if catalog.state is not None:
        print("the replicas on the same database were told, and serve it now")
        return 0
    print("a running server serves it from its next poll of the repository (or now, on SIGHUP)")
    return 0
