"""`gitreg approve`: a pending version's approval, appended to approvals.yaml for review.

The command only writes the file beside registry.yaml (its comments and layout kept: the entry
is appended as text); the approval takes effect once the file is committed, deployed and read
(a reload, as for registry.yaml). It never records an approval in gitreg's own state."""

from __future__ import annotations

import argparse
import datetime
import getpass
import json
import sys

from gitreg.atomic import write_atomically
from gitreg.catalog import yamldoc
from gitreg.catalog.approvals import FILE, approvals_in
from gitreg.catalog.model import Catalog
from gitreg.sources.surveys import SourceSurveys
from gitreg.tags import parse_version

_HEADER = (
    "# Versions published before their publish_when cooldown ends. Review and commit this\n"
    "# file like registry.yaml: gitreg reads it beside registry.yaml, and reloads on a change.\n"
    "approvals:\n"
)


def approve(catalog: Catalog, args: argparse.Namespace) -> int:
    """Append the approval of `args.module` at `args.version`; exit status 2 when refused."""
    served = SourceSurveys(catalog).served(catalog)  # with the modules sources found
    spec = next((m for m in served.modules if str(m.address) == args.module.lower()), None)
    spec = spec or next(
        (m for m in served.modules if "/".join(m.address.key) == args.module.lower()), None
    )
    try:
        version = parse_version(args.version.removeprefix("v"))
    except ValueError as exc:
        return _refused(f"{args.version!r}: {exc}")
    if spec is None:
        return _refused(f"no module {args.module} in {catalog.source}")
    path = catalog.source.parent / FILE
    text = path.read_text() if path.exists() else _HEADER
    if text and not text.endswith("\n"):
        text += "\n"
    if "approvals:" not in text:
        text += "approvals:\n"
    at = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    entry = {
        "module": str(spec.address),
        "version": str(version),
        "by": args.by or _who(),
        "at": at,
    }
    if args.reason:
        entry["reason"] = args.reason
    # JSON strings are YAML strings: each value quoted, whatever it holds.
    fields = ", ".join(f"{key}: {json.dumps(value)}" for key, value in entry.items())
    text += f"  - {{{fields}}}\n"
    reader = yamldoc.Reader(path.parent)
    approvals_in(reader, text)
    if reader.problems:  # written by hand in another shape: the operator adds it there
        problems = "; ".join(str(p) for p in reader.problems)
        return _refused(f"{path} would not read with the approval appended ({problems})")
    write_atomically(path, text.encode(), sync="folder")
    print(
        f"Approved {spec.address} {version} in {path}.\n"
        "Commit it and have it reviewed: the registry publishes the version once it reads the"
        " file (a change to it reloads, as registry.yaml does)."
    )
    return 0


def _refused(why: str) -> int:
    print(f"gitreg approve: {why}", file=sys.stderr)
    return 2


def _who() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"
