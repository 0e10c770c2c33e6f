"""The `gitreg` command: serve, check, list, accept, mirror sync, demo."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

from gitreg import __version__
from gitreg.archive_cache import ArchiveCache
from gitreg.catalog import Catalog, Listen, TlsFiles
from gitreg.catalog_loader import load_catalog, parse_listen
from gitreg.errors import ClientError, ConfigError, OriginError, SourceError
from gitreg.gitsource import GitMirror
from gitreg.listing import print_listing
from gitreg.mirror_sync import sync
from gitreg.origin import OriginRegistry
from gitreg.provider_hashes import HashCache
from gitreg.providers import Providers
from gitreg.readthrough import ReadThrough
from gitreg.registry import Registry
from gitreg.repo_location import RepoLocation
from gitreg.server import hypercorn_config, serve_until_signalled
from gitreg.web.app import create_app
from gitreg.web.live import reload

log = logging.getLogger("gitreg")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=getattr(logging, args.log_level.upper()),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        catalog = load_catalog(Path(args.config))
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 2
    problem = _cache_dir_problem(catalog.cache_dir)
    if problem:
        print(f"{catalog.source} is invalid:\n  cache_dir: {problem}", file=sys.stderr)
        return 2
    result: int = args.command(catalog, args)
    return result


def serve(catalog: Catalog, args: argparse.Namespace) -> int:
    listen = _listen(args.listen) if args.listen else catalog.listen
    tls = catalog.tls
    if bool(args.certfile) != bool(args.keyfile):
        print("--certfile and --keyfile go together", file=sys.stderr)
        return 2
    if args.certfile:
        tls = TlsFiles(Path(args.certfile).resolve(), Path(args.keyfile).resolve())
        missing = [str(p) for p in (tls.certfile, tls.keyfile) if not p.is_file()]
        if missing:
            print(f"no such file: {', '.join(missing)}", file=sys.stderr)
            return 2
    return run_server(catalog, listen, tls, args.access_log)


def run_server(
    catalog: Catalog, listen: Listen, tls: TlsFiles | None, access_log: bool = False
) -> int:
    registry = Registry(catalog)
    log.info("reading %d repositories for %d modules", len(registry.mirrors), len(catalog.modules))
    registry.refresh()
    log.info(
        "%d modules, %d versions",
        len(registry.index),
        sum(len(e.versions.releases) for e in registry.index.entries()),
    )
    providers = Providers(catalog, registry)
    providers.refresh()
    app = create_app(registry, ArchiveCache(catalog.cache_dir), providers)
    config = hypercorn_config(listen, tls, access_log)
    try:
        asyncio.run(serve_until_signalled(app, config, partial(reload, app)))
    except OSError as exc:
        print(f"cannot serve on {listen}: {exc}", file=sys.stderr)
        return 1
    return 0


def check(catalog: Catalog, args: argparse.Namespace) -> int:
    """Validate, reach every repository, and report each problem with its key path."""
    problems: list[str] = []
    registry = Registry(catalog)
    paths = {spec.address.key: f"modules[{i}]" for i, spec in enumerate(catalog.modules)}

    def reach(mirror: GitMirror) -> str | None:
        try:
            mirror.remote_tags()
        except SourceError as exc:
            return str(exc)
        return None

    with ThreadPoolExecutor(8) as pool:
        errors = dict(
            zip(registry.mirrors, pool.map(reach, registry.mirrors.values()), strict=True)
        )
    for location, error in errors.items():
        for spec in registry.specs[location] if error else ():
            problems.append(f"{paths[spec.address.key]}.repo: {error}")
    registry.refresh()
    for entry in registry.index.entries():
        if not entry.versions.releases and registry.status[entry.spec.repo].last_error is None:
            templates = ", ".join(str(t) for t in entry.spec.tags)
            problems.append(
                f"{paths[entry.spec.address.key]}: {entry.spec.address} has no version"
                f" (no tag fits {templates})"
            )
    providers = Providers(catalog, registry)
    providers.refresh()
    provider_paths = {
        spec.key: f"providers[{i}].artifacts" for i, spec in enumerate(catalog.providers)
    }
    for provider in providers.entries():
        where = provider_paths[provider.spec.key]
        problems += [f"{where}: {provider.spec} {p}" for p in provider.problems]
    problems += _origin_problems(catalog)
    for problem in problems:
        print(problem)
    counts = f"{len(catalog.modules)} modules, {len(catalog.providers)} providers"
    print(f"{catalog.source}: {counts}, {len(problems)} problems")
    return 1 if problems else 0


def _origin_problems(catalog: Catalog) -> list[str]:
    """Each origin the catalog maps, asked for its providers.v1 service (others are public
    registries, reached when first needed)."""
    if not catalog.mirror.read_through or not catalog.mirror.origins:
        return []
    origin = OriginRegistry(catalog.mirror)
    problems = []
    try:
        for hostname, _ in catalog.mirror.origins:
            try:
                origin.providers_url(hostname)
            except OriginError as exc:
                problems.append(f"mirror.origins.{hostname}: {exc}")
    finally:
        origin.close()
    return problems


def list_modules(catalog: Catalog, args: argparse.Namespace) -> int:
    """What a server on this cache_dir serves: mirrors are read as they are, and fetched only
    when they do not exist yet (or with --fetch), so the repositories' state is the server's."""
    registry = Registry(catalog)

    def fetch(location: RepoLocation) -> bool:
        return not args.offline and (args.fetch or not registry.mirrors[location].exists())

    registry.refresh(fetch=fetch, mechanism="cli")
    print_listing(registry)
    return 0


def accept(catalog: Catalog, args: argparse.Namespace) -> int:
    """An operator's decision on a moved tag: publish the commit it points at now."""
    if args.module.count("/") != 2:
        print(f"{args.module!r}: give the module as NAMESPACE/NAME/SYSTEM", file=sys.stderr)
        return 2
    namespace, name, system = args.module.split("/")
    registry = Registry(catalog)
    registry.refresh(fetch=False, mechanism="cli")
    try:
        print(registry.accept(namespace, name, system, args.version))
    except (ClientError, ValueError) as exc:
        print(exc, file=sys.stderr)
        return 1
    print("a running server serves it from its next poll of the repository (or now, on SIGHUP)")
    return 0


def mirror(catalog: Catalog, args: argparse.Namespace) -> int:
    """`gitreg mirror sync PROVIDER...`: fill the network mirror's cache ahead of time."""
    read_through = ReadThrough(catalog.mirror, catalog.cache_dir, HashCache(), own=catalog.hostname)
    try:
        failures = sync(read_through, args.providers, set(args.platform or ()))
    finally:
        read_through.close()
    print(f"{len(args.providers)} providers, {failures} failures")
    return 1 if failures else 0


def demo(catalog: Catalog, args: argparse.Namespace) -> int:
    from gitreg.demo import prepare_demo

    listen = _listen(args.listen) if args.listen else catalog.listen
    tls = prepare_demo(catalog, listen)
    return run_server(dataclasses.replace(catalog, tls=tls), listen, tls)


def _cache_dir_problem(path: Path) -> str | None:
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        return f"{path} is not a writable folder: {exc.strerror or exc}"
    return None


def _listen(text: str) -> Listen:
    try:
        return parse_listen(text)
    except ValueError as exc:
        print(f"--listen: {exc}", file=sys.stderr)
        raise SystemExit(2) from exc


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gitreg", description="Git tags become a Terraform/OpenTofu registry."
    )
    parser.add_argument("--version", action="version", version=f"gitreg {__version__}")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    def command(name: str, func: object, help: str, log_level: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help, description=help)
        sub.set_defaults(command=func)
        sub.add_argument(
            "--config", default="registry.yaml", help="the catalog (default: registry.yaml)"
        )
        sub.add_argument(
            "--log-level", default=log_level, choices=["debug", "info", "warning", "error"]
        )
        return sub

    sub = command("serve", serve, "serve the registry", "info")
    sub.add_argument("--listen", help="HOST:PORT (default: listen in registry.yaml)")
    sub.add_argument("--certfile", help="TLS certificate (PEM); with --keyfile, serve HTTPS")
    sub.add_argument("--keyfile", help="TLS private key (PEM)")
    sub.add_argument("--access-log", action="store_true", help="log every request")
    command("check", check, "validate the catalog and reach every repository", "warning")
    sub = command(
        "list", list_modules, "show every module, its versions and ignored tags", "warning"
    )
    sub.add_argument("--offline", action="store_true", help="never fetch, not even new mirrors")
    sub.add_argument("--fetch", action="store_true", help="fetch every repository first")
    sub = command(
        "accept", accept, "publish a moved tag's new commit (pinned or quarantined)", "warning"
    )
    sub.add_argument("module", help="NAMESPACE/NAME/SYSTEM")
    sub.add_argument("version", help="the version whose tag moved")
    sub = command(
        "mirror", mirror, "fetch providers into the mirror's cache ahead of time", "warning"
    )
    sub.add_argument("action", choices=["sync"], help="sync: fetch, verify and cache")
    sub.add_argument("providers", nargs="+", help="HOST/NAMESPACE/TYPE[@VERSION,...]")
    sub.add_argument(
        "--platform", action="append", help="OS_ARCH to fetch (default: all); repeatable"
    )
    sub = command("demo", demo, "serve the catalog over HTTPS with a throwaway certificate", "info")
    sub.add_argument("--listen", help="HOST:PORT (default: listen in registry.yaml)")
    return parser
