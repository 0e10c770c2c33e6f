"""The `gitreg` command line: parsed here, each subcommand run by `gitreg/commands/`."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from gitreg import __version__
from gitreg.catalog.load import load_catalog
from gitreg.catalog.model import SECRET_USES, SecretUse
from gitreg.commands.check import check
from gitreg.commands.reads import accept, docs, list_modules
from gitreg.commands.serve import demo, serve
from gitreg.commands.tools import cert, mirror, token
from gitreg.errors import ConfigError
from gitreg.logs import LOG_FORMATS
from gitreg.logs import configure as configure_logging


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


def _cache_dir_problem(path: Path) -> str | None:
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        return f"{path} is not a writable folder: {exc.strerror or exc}"
    return None


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
