"""The `gitreg` command line: parsed here, each subcommand run by its module of `commands/`."""

from __future__ import annotations

import argparse
import errno
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from gitreg import __version__, pacing
from gitreg.catalog.load import load_catalog
from gitreg.catalog.secrets import SECRET_USES, SecretUse
from gitreg.commands.endpoint import add_endpoint_flags
from gitreg.errors import ConfigError
from gitreg.logs import LOG_FORMATS
from gitreg.logs import configure as configure_logging
from gitreg.process.heap import collector_paused

if TYPE_CHECKING:
    from gitreg.catalog.model import Catalog

# Each subcommand's module is imported when that subcommand runs, not to parse the line:
# `--version`, `--help`, `cert` and `token` start without the server, Git, httpx or PGPy.


def serve(catalog: Catalog, args: argparse.Namespace) -> int:
    from gitreg.commands.serve import serve as run

    return run(catalog, args)


def demo(catalog: Catalog, args: argparse.Namespace) -> int:
    from gitreg.commands.demo import demo as run

    return run(catalog, args)


def check(catalog: Catalog, args: argparse.Namespace) -> int:
    from gitreg.commands.check import check as run

    return run(catalog, args)


def list_modules(catalog: Catalog, args: argparse.Namespace) -> int:
    from gitreg.commands.reads import list_modules as run

    return run(catalog, args)


def docs(catalog: Catalog, args: argparse.Namespace) -> int:
    from gitreg.commands.reads import docs as run

    return run(catalog, args)


def accept(catalog: Catalog, args: argparse.Namespace) -> int:
    from gitreg.commands.reads import accept as run

    return run(catalog, args)


def approve(catalog: Catalog, args: argparse.Namespace) -> int:
    from gitreg.commands.approve import approve as run

    return run(catalog, args)


def verify(catalog: Catalog, args: argparse.Namespace) -> int:
    from gitreg.commands.verify import verify as run

    return run(catalog, args)


def usage(catalog: Catalog, args: argparse.Namespace) -> int:
    from gitreg.commands.usage import usage as run

    return run(catalog, args)


def mirror(catalog: Catalog, args: argparse.Namespace) -> int:
    from gitreg.commands.tools import mirror as run

    return run(catalog, args)


def cert(args: argparse.Namespace) -> int:
    from gitreg.commands.tools import cert as run

    return run(args)


def token(args: argparse.Namespace) -> int:
    from gitreg.commands.tools import token as run

    return run(args)


def mcp_stdio(catalog: Catalog, args: argparse.Namespace) -> int:
    from gitreg.commands.mcp import mcp_stdio as run

    return run(catalog, args)


def issued_tokens(catalog: Catalog, args: argparse.Namespace) -> int:
    from gitreg.commands.issued import issued_tokens as run

    return run(catalog, args)


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors in gitreg's one form: `gitreg: <what>: <why>`, then where to
    read more, exit status 2 (argparse's own prints its usage, then `gitreg serve: error: ...`)."""

    def error(self, message: str) -> NoReturn:
        what = self.prog.removeprefix("gitreg").strip()
        if message.startswith("argument "):  # "argument --workers: invalid int value: 'x'"
            message = message.removeprefix("argument ")
        elif what:
            message = f"{what}: {message}"
        more = f"gitreg {what} --help" if what else "gitreg --help"
        self.exit(2, f"gitreg: {message} (see {more})\n")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    # Bursts of objects made to be kept (registry.yaml's nodes, the first of them) are made with
    # the cyclic collector off, in every command (gitreg.process.heap).
    restore = pacing.install(pause=collector_paused)
    try:
        return _run(args)
    finally:
        restore()


def _run(args: argparse.Namespace) -> int:
    flag_format = getattr(args, "log_format", None)  # serve and demo have --log-format
    configure_logging(args.log_level, flag_format or "text", args.command not in (serve, demo))
    if args.command is cert or (args.command is token and args.action == "new"):
        status: int = args.command(args)  # needs no catalog
        return status
    if args.command is token:  # list, revoke: the tokens sign-in issued, in the state
        args.command = issued_tokens
    # `list --offline` fetches nothing, so it needs no Git credential either.
    secrets: frozenset[SecretUse] = frozenset() if getattr(args, "offline", False) else args.secrets
    try:
        catalog = load_catalog(Path(args.config), secrets)
    except ConfigError as exc:
        for line in _config_errors(exc, args.config):
            print(f"gitreg: {line}", file=sys.stderr)
        return 2
    problem = _cache_dir_problem(catalog.cache_dir)
    if problem:
        print(f"gitreg: {args.config}: cache_dir: {problem}", file=sys.stderr)
        return 2
    log_format = catalog.server.log_format
    if hasattr(args, "log_format") and not flag_format and log_format != "text":
        configure_logging(args.log_level, log_format)  # the flag wins over the catalog
    result: int = args.command(catalog, args)
    return result


def _config_errors(exc: ConfigError, config: str) -> list[str]:
    """Each problem of registry.yaml as `<file>: <key> (line N): <why>`; a file that cannot be
    read at all as `--config <file>: <why>`."""
    problems = exc.problems
    if [p.path for p in problems] == ["(file)"]:
        why = problems[0].reason
        why = "no such file" if why == os.strerror(errno.ENOENT) else why[:1].lower() + why[1:]
        return [f"--config {config}: {why}"]
    return [f"{config}: {problem}" for problem in problems]


def _cache_dir_problem(path: Path) -> str | None:
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        return f"{path} is not a writable folder: {exc.strerror or exc}"
    return None


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="gitreg", description="Git tags become a Terraform/OpenTofu registry.")
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
    add_endpoint_flags(sub)
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
    sub = command(
        "check",
        check,
        "validate the catalog, the address and TLS files serve would use, and reach every"
        " repository",
        "warning",
    )
    add_endpoint_flags(sub)  # what `serve` with the same flags would use
    sub = command(
        "list",
        list_modules,
        "show every module and provider, their versions, and what was ignored or refused",
        "error",  # what could not be read is said in the list's text, plainly, not as log lines
        frozenset({"git", "state"}),
    )
    sub.add_argument("--offline", action="store_true", help="never fetch, not even new mirrors")
    sub.add_argument(
        "--fetch",
        action="store_true",
        help="discover every source and fetch every repository first",
    )
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
        "usage",
        usage,
        "show who calls a module or uses a hosted provider: modules and consumers, their"
        " constraints and the version each picks; exit status 1 when one would pick a deprecated"
        " version, 2 on a usage error",
        "warning",
        frozenset({"git", "state"}),
    )
    sub.add_argument(
        "module", nargs="?", help="NAMESPACE/NAME/SYSTEM, or a hosted provider's NAMESPACE/TYPE"
    )
    sub.add_argument(
        "--retiring",
        nargs="?",
        const="",
        metavar="NAMESPACE",
        help="instead: each deprecated version of the namespace's modules (default: every"
        " namespace), its downloads of the last days and its callers; exit status 1 when one is"
        " still used",
    )
    sub.add_argument("--days", help="with --retiring: the days downloads are counted over (30)")
    sub.add_argument("--json", action="store_true", help="with --retiring: the report as JSON")
    sub.add_argument("--offline", action="store_true", help="never fetch: read what is cached")
    sub.add_argument("--fetch", action="store_true", help="fetch every repository first")
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
        "approve",
        approve,
        "approve a version pending under publish_when: appended to approvals.yaml, beside"
        " registry.yaml, for review; it publishes once the registry reads the file",
        "warning",
        frozenset(),
    )
    sub.add_argument("module", help="NAMESPACE/NAME/SYSTEM")
    sub.add_argument("version", help="the pending version")
    sub.add_argument("--by", help="who approves (default: the user running the command)")
    sub.add_argument("--reason", help="why it may skip the cooldown")
    sub = command(
        "verify",
        verify,
        "compare every cached archive with the SHA-256 recorded for it; exit status 0 when"
        " all match, 1 when any is replaced, corrupted or unrecorded, 2 on a usage or config"
        " error",
        "warning",
        frozenset(),
    )
    sub.add_argument(
        "--rebuild",
        action="store_true",
        help="also build each recorded archive again from its Git clone (into a temporary"
        " file) and compare it with the record",
    )
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
    command(
        "mcp",
        mcp_stdio,
        "answer MCP tools over stdio, for an assistant on this machine (token: GITREG_TOKEN)",
        "warning",
        frozenset({"git", "state"}),
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
        help="make a client token; list or revoke the tokens sign-in issued",
        description="new: print a fresh random client token, and the auth.tokens entry for"
        " registry.yaml that holds only its SHA-256. list: the tokens people were issued when"
        " they signed in (auth.login). revoke NAME|ID: end those tokens at once, on every"
        " worker and replica.",
    )
    sub.set_defaults(command=token, log_level="warning", secrets=frozenset({"state"}))
    sub.add_argument("action", choices=["new", "list", "revoke"], help="new, list or revoke")
    sub.add_argument(
        "name",
        nargs="?",
        help="new: the token's name, shown in logs and metrics; revoke: a token's ID (as list"
        " shows it, or a start of it no other ID shares), or a person's name (every token of"
        " theirs; refused when people of different subjects share it)",
    )
    sub.add_argument(
        "--config",
        default="registry.yaml",
        help="list, revoke: the catalog whose state holds them (default: registry.yaml)",
    )
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
