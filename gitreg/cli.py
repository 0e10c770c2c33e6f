"""The `gitreg` command: serve, check, list, docs, accept, mirror sync, demo, cert."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import logging
import socket
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

from gitreg import __version__
from gitreg.atomic import sweep_stale
from gitreg.auth.review import archive_warnings, auth_warnings
from gitreg.auth.tokens import digest, new_token
from gitreg.catalog.archive_scopes import narrowed_notices
from gitreg.catalog.auth import TOKEN_NAME
from gitreg.catalog.load import load_catalog, parse_listen
from gitreg.catalog.model import SECRET_USES, Catalog, Listen, SecretUse, TlsFiles
from gitreg.docs.service import DocsService
from gitreg.errors import ClientError, ConfigError, OriginError, SourceError, StartupError
from gitreg.freshness.watching import reread_catalog
from gitreg.git.clone import BareClone, move_old_clones
from gitreg.git.location import RepoLocation
from gitreg.git.shutdown import stop_git_processes
from gitreg.heap import Freezer
from gitreg.logs import LOG_FORMATS
from gitreg.logs import configure as configure_logging
from gitreg.mirror.origin import OriginRegistry
from gitreg.mirror.prefetch import sync
from gitreg.mirror.readthrough import ReadThrough
from gitreg.modules.acceptance import accept as accept_moved_tag
from gitreg.modules.sync import Registry
from gitreg.ops.docs_text import print_docs
from gitreg.ops.listing import print_listing
from gitreg.providers.hashes import HashCache
from gitreg.providers.hosted import Providers
from gitreg.server import (
    SHUTDOWN_MOST,
    TLS_KEYS,
    SharingLoop,
    bind,
    check_tls,
    hypercorn_config,
    serve_until_signalled,
)
from gitreg.tags import parse_version
from gitreg.web.app import create_app
from gitreg.web.state import RegistryState
from gitreg.workers import run_workers
from gitreg.world.world import open_world

log = logging.getLogger("gitreg")

MAX_WORKERS = 64


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    flag_format = getattr(args, "log_format", None)  # serve and demo have --log-format
    configure_logging(args.log_level, flag_format or "text")
    if args.command in (cert, token):  # need no catalog
        status: int = args.command(args)
        return status
    # `list --offline` fetches nothing, so it needs no Git credential either.
    secrets: frozenset[SecretUse] = frozenset() if getattr(args, "offline", False) else args.secrets
    try:
        catalog = load_catalog(Path(args.config), secrets)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 2
    problem = _cache_dir_problem(catalog.cache_dir)
    if problem:
        print(f"{catalog.source} is invalid:\n  cache_dir: {problem}", file=sys.stderr)
        return 2
    if hasattr(args, "log_format") and not flag_format and catalog.log_format != "text":
        configure_logging(args.log_level, catalog.log_format)  # the flag wins over the catalog
    result: int = args.command(catalog, args)
    return result


def serve(catalog: Catalog, args: argparse.Namespace) -> int:
    listen = _listen(args.listen) if args.listen else catalog.listen
    tls, tls_keys = catalog.tls, TLS_KEYS
    if bool(args.certfile) != bool(args.keyfile):
        print("--certfile and --keyfile go together", file=sys.stderr)
        return 2
    if args.certfile:
        tls = TlsFiles(Path(args.certfile).resolve(), Path(args.keyfile).resolve())
        tls_keys = ("--certfile", "--keyfile")
        missing = [str(p) for p in (tls.certfile, tls.keyfile) if not p.is_file()]
        if missing:
            print(f"no such file: {', '.join(missing)}", file=sys.stderr)
            return 2
    if not 1 <= args.workers <= MAX_WORKERS:
        print(f"--workers: from 1 to {MAX_WORKERS}", file=sys.stderr)
        return 2
    return run_server(catalog, listen, tls, args.access_log, tls_keys, workers=args.workers)


def run_server(
    catalog: Catalog,
    listen: Listen,
    tls: TlsFiles | None,
    access_log: bool = False,
    tls_keys: tuple[str, str] = TLS_KEYS,
    banner: str = "",
    workers: int = 1,
) -> int:
    """Serve until signalled, in this process or in `workers` forked ones on the one socket;
    what would stop the start is refused before the repositories are read, as one line
    (`banner` is printed once it cannot)."""
    try:
        if tls is not None:
            check_tls(tls, tls_keys)
        sock = bind(listen)
    except StartupError as exc:
        print(f"gitreg: {exc}", file=sys.stderr)
        return exc.status
    for notice in narrowed_notices(catalog):  # here: once, however many workers
        log.warning("%s", notice)
    swept = sweep_stale(catalog.cache_dir, skip=("git",))  # clones hold no file of ours
    if swept:
        log.info(
            "removed %d temporary files that a crashed writer left in %s", swept, catalog.cache_dir
        )
    if workers == 1:
        return _serve(catalog, listen, tls, access_log, sock, banner)
    move_old_clones(catalog.cache_dir)  # once, here, rather than raced by the workers
    if banner:
        print(banner, flush=True)

    def work(index: int, restarted: bool) -> int:
        # A worker started again reads registry.yaml as a reload would: it may have changed.
        served = reread_catalog(catalog) if restarted else catalog
        return _serve(served, listen, tls, access_log, sock, worker=index)

    # A worker's stop: the grace its requests get, then at most SHUTDOWN_MOST to close.
    stop_within = catalog.shutdown_grace + SHUTDOWN_MOST + 10.0
    return run_workers(workers, work, sock, stop_within)


def _serve(
    catalog: Catalog,
    listen: Listen,
    tls: TlsFiles | None,
    access_log: bool,
    sock: socket.socket,
    banner: str = "",
    worker: int | None = None,
) -> int:
    """Serve on `sock` until signalled, at once: the clones are read, then fetched, once the
    port answers (`/healthz` says it lives, `/readyz` what it still reads). The only server
    process, or one of several workers."""
    freezer = Freezer()
    current, registry = open_world(catalog, on_swap=freezer.swapped)
    state = RegistryState.build(current, registry, worker=worker)
    # What start-up read lives until its repositories change: out of the collector's full walks
    # (gitreg.heap), once read; each swap after it refreezes.
    settled = partial(freezer.freeze_now, full=True)
    app = create_app(state, start=True, settled=settled, access_log=access_log)
    config = hypercorn_config(listen, tls, catalog.shutdown_grace, worker)
    if banner:
        print(banner, flush=True)
    try:
        with asyncio.Runner(loop_factory=None if worker is None else SharingLoop) as runner:
            runner.run(
                serve_until_signalled(app, config, sock, state.live.reload, state.background.stop)
            )
    except StartupError as exc:
        print(f"gitreg: {exc}", file=sys.stderr)
        return exc.status
    except OSError as exc:  # the checks above passed, and yet: say so in one line
        print(f"gitreg: cannot serve on {listen}: {exc}", file=sys.stderr)
        return 1
    finally:
        stopped = stop_git_processes()
        if stopped:
            log.info("stopped %d git processes still running", stopped)
    return 0


def check(catalog: Catalog, args: argparse.Namespace) -> int:
    """Validate, reach every repository, and report each problem with its key path. Warnings
    (a provider with no release yet) are printed and counted, but only problems fail."""
    problems: list[str] = []
    warnings: list[str] = []
    registry = Registry(catalog)
    paths = {spec.address.key: f"modules[{i}]" for i, spec in enumerate(catalog.modules)}

    def reach(clone: BareClone) -> str | None:
        try:
            clone.remote_tags()
        except SourceError as exc:
            return str(exc)
        return None

    clones = registry.snapshot.clones
    with ThreadPoolExecutor(8) as pool:
        errors = dict(zip(clones, pool.map(reach, clones.values()), strict=True))
    for location, error in errors.items():
        for spec in registry.snapshot.specs[location] if error else ():
            problems.append(f"{paths[spec.address.key]}.repo: {error}")
    registry.refresh()
    for entry in registry.snapshot.index.entries():
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
        if warning := provider.warning():
            warnings.append(f"warning: {where}: {provider.spec} {warning}")
    problems += _origin_problems(catalog)
    warnings += auth_warnings(catalog)
    warnings += archive_warnings(catalog)
    for line in problems + warnings:
        print(line)
    counts = f"{len(catalog.modules)} modules, {len(catalog.providers)} providers"
    print(f"{catalog.source}: {counts}, {len(problems)} problems, {len(warnings)} warnings")
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
    clones = registry.snapshot.clones

    def fetch(location: RepoLocation) -> bool:
        return not args.offline and (args.fetch or not clones[location].exists())

    registry.refresh(fetch=fetch, mechanism="cli")
    providers = Providers(catalog, registry)
    providers.refresh()
    print_listing(registry, providers)
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
        print(f"{args.module!r}: no such module in {catalog.source}", file=sys.stderr)
        if len(parts) != 3:
            print("give the module as NAMESPACE/NAME/SYSTEM", file=sys.stderr)
        return 2
    registry = Registry(catalog)
    try:
        clone = registry.snapshot.clones[spec.repo]
        fetch = not args.offline and (args.fetch or not clone.exists())
        registry.sync_repo(spec.repo, "cli", fetch=fetch)
        entry = registry.snapshot.index.get(*spec.address.key)
        releases = entry.versions.releases if entry else ()
        if entry is None or not releases:
            why = registry.status[spec.repo].last_error or "no tag fits its templates"
            print(f"{spec.address} has no versions: {why}", file=sys.stderr)
            return 2
        wanted = _version(args.version) if args.version else releases[0].version
        release = entry.by_version.get(wanted)
        if release is None:
            known = ", ".join(r.version for r in releases[:10])
            more = ", ..." if len(releases) > 10 else ""
            print(
                f"{spec.address} has no version {args.version!r} (it has {known}{more})",
                file=sys.stderr,
            )
            return 2
        service = DocsService(catalog.cache_dir)
        try:
            module_docs = asyncio.run(service.module_docs(entry, release))
        except SourceError as exc:
            print(f"cannot read {spec.address} {release.version}: {exc}", file=sys.stderr)
            return 1
        finally:
            service.close()
    finally:
        registry.shared.close()
    print_docs(catalog.hostname, entry, release, module_docs)
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
        print(f"{args.module!r}: give the module as NAMESPACE/NAME/SYSTEM", file=sys.stderr)
        return 2
    namespace, name, system = args.module.split("/")
    registry = Registry(catalog)
    registry.refresh(fetch=False, mechanism="cli")
    try:
        print(accept_moved_tag(registry, namespace, name, system, args.version))
    except (ClientError, ValueError) as exc:
        print(exc, file=sys.stderr)
        return 1
    finally:
        registry.shared.close()
    if catalog.state is not None:
        print("the replicas on the same database were told, and serve it now")
        return 0
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
    from gitreg.demo import demo_banner, demo_tls

    listen = _listen(args.listen) if args.listen else catalog.listen
    material = demo_tls(catalog, listen)
    tls = TlsFiles(material.certfile, material.keyfile)
    banner = demo_banner(catalog, listen, material)
    return run_server(dataclasses.replace(catalog, tls=tls), listen, tls, banner=banner)


def cert(args: argparse.Namespace) -> int:
    """`gitreg cert --host NAME ... --out DIR`: a certificate for `serve`, from a local CA."""
    from gitreg.tlscert import issue_certificate, parse_host

    try:
        hosts = tuple(dict.fromkeys(parse_host(h) for h in args.host))
    except ValueError as exc:
        print(f"--host: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out).resolve()
    try:
        issued = issue_certificate(out, hosts)
    except ValueError as exc:
        print(f"gitreg: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"gitreg: cannot write in {out}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    m = issued.material
    ca = "a new local CA" if issued.new_ca else "the local CA"
    print(
        f"""Made {m.certfile} and {m.keyfile} for {", ".join(hosts)}
(valid until {issued.not_after:%Y-%m-%d}), signed by {ca} {m.ca_cert}.
The CA's key {m.ca_key} is readable by you only: whoever holds it can make certificates
that everyone trusting the CA accepts. Keep it there: `gitreg cert --out {out}` reuses it.

Serve with it: in registry.yaml (or with --certfile and --keyfile),

    tls: {{certfile: {m.certfile}, keyfile: {m.keyfile}}}

Trust the CA where Terraform runs. On Linux, through the environment:

    export SSL_CERT_FILE={m.ca_cert}

(this replaces the system's CA list for that shell: to reach public registries too, give a
bundle holding both). Terraform on macOS and Windows ignores SSL_CERT_FILE; add the CA to the
system's trust store instead:

    security add-trusted-cert -r trustRoot -k ~/Library/Keychains/login.keychain-db {m.ca_cert}
    certutil -user -addstore Root {m.ca_cert}
"""
    )
    return 0


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

    def command(
        name: str,
        func: object,
        help: str,
        log_level: str,
        secrets: frozenset[SecretUse] = SECRET_USES,
    ) -> argparse.ArgumentParser:
        """`secrets`: the catalog's secrets the command sends, so must find set at start-up."""
        sub = commands.add_parser(name, help=help, description=help)
        sub.set_defaults(command=func, secrets=secrets)
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
    sub.add_argument(
        "--access-log", action="store_true", help="log every request (gitreg.access, at info)"
    )
    _log_format_flag(sub)
    sub.add_argument(
        "--workers",
        type=int,
        default=1,
        help="worker processes serving the one socket (default: 1; about one per core)",
    )
    command("check", check, "validate the catalog and reach every repository", "warning")
    sub = command(
        "list",
        list_modules,
        "show every module and provider, their versions, and what was ignored or refused",
        "warning",
        frozenset({"git", "state"}),
    )
    sub.add_argument("--offline", action="store_true", help="never fetch, not even new mirrors")
    sub.add_argument("--fetch", action="store_true", help="fetch every repository first")
    sub = command(
        "docs",
        docs,
        "show a module version's documentation: inputs, outputs, providers, submodules, examples",
        "warning",
        frozenset({"git", "state"}),
    )
    sub.add_argument("module", help="NAMESPACE/NAME/SYSTEM")
    sub.add_argument("version", nargs="?", help="the version (default: the latest)")
    sub.add_argument("--offline", action="store_true", help="never fetch, not even a new clone")
    sub.add_argument("--fetch", action="store_true", help="fetch the module's repository first")
    sub = command(
        "accept",
        accept,
        "publish a moved tag's new commit (pinned or quarantined)",
        "warning",
        frozenset({"state"}),
    )
    sub.add_argument("module", help="NAMESPACE/NAME/SYSTEM")
    sub.add_argument("version", help="the version whose tag moved")
    sub = command(
        "mirror",
        mirror,
        "fetch providers into the mirror's cache ahead of time",
        "warning",
        frozenset({"origin"}),
    )
    sub.add_argument("action", choices=["sync"], help="sync: fetch, verify and cache")
    sub.add_argument("providers", nargs="+", help="HOST/NAMESPACE/TYPE[@VERSION,...]")
    sub.add_argument(
        "--platform", action="append", help="OS_ARCH to fetch (default: all); repeatable"
    )
    sub = command("demo", demo, "serve the catalog over HTTPS with a throwaway certificate", "info")
    sub.add_argument("--listen", help="HOST:PORT (default: listen in registry.yaml)")
    _log_format_flag(sub)
    sub = commands.add_parser(
        "cert",
        help="make a TLS certificate for serve, signed by a local CA kept in --out",
        description="Make a TLS certificate and key for `gitreg serve`, signed by a local CA "
        "kept in --out (made the first time, reused after).",
    )
    sub.set_defaults(command=cert, log_level="warning")
    sub.add_argument(
        "--host",
        action="append",
        required=True,
        help="a host name or IP address clients use to reach the server; repeatable",
    )
    sub.add_argument("--out", default="tls", help="the folder for the CA and certificate (tls)")
    sub = commands.add_parser(
        "token",
        help="make a client token for a private registry",
        description="Print a fresh random client token, and the auth.tokens entry for"
        " registry.yaml that holds only its SHA-256.",
    )
    sub.set_defaults(command=token, log_level="warning")
    sub.add_argument("action", choices=["new"], help="new: make one")
    sub.add_argument("name", help="the token's name, shown in logs and metrics")
    sub.add_argument(
        "--read", action="append", default=[], help="a namespace (pattern) it reads; repeatable"
    )
    return parser


def _log_format_flag(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--log-format",
        choices=LOG_FORMATS,
        help="text, or json: one object a line (default: log_format in registry.yaml, or text)",
    )


def token(args: argparse.Namespace) -> int:
    if not TOKEN_NAME.fullmatch(args.name):
        print(
            f"{args.name!r}: a token's name is 1 to 64 letters, digits, '.', '_' or '-'",
            file=sys.stderr,
        )
        return 2
    value = new_token()
    read = ", ".join(json.dumps(r) for r in args.read)
    print(
        f"token: {value}\n"
        "\n"
        "# Give the token to its user; paste this under auth.tokens in registry.yaml\n"
        "# (it holds only the token's SHA-256, so registry.yaml can be shared):\n"
        f"  - name: {args.name}\n"
        f'    token_sha256: "{digest(value).hex()}"\n'
        f"    read: [{read}]"
    )
    return 0
