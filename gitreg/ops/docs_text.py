"""The text of `gitreg docs`: a module version's documentation for a terminal, inputs and
outputs as aligned tables, and the usage snippet the module's page shows for that version.
Everything shown comes from a repository, so control characters are replaced: a README must not
move the cursor or retitle the terminal of whoever reads it."""

from __future__ import annotations

import time
import unicodedata
from collections.abc import Callable, Sequence

from gitreg.docs.model import FolderDocs, ModuleDocs
from gitreg.modules.index import ModuleEntry
from gitreg.modules.resolve import Release
from gitreg.pages.usage import constraint, latest_release, module_snippet

Out = Callable[[str], None]

CELL_MOST = 60  # characters of a type or default shown in a table; the rest is elided


def print_docs(
    hostname: str, entry: ModuleEntry, release: Release, docs: ModuleDocs, out: Out = print
) -> None:
    address = f"{hostname}/{entry.spec.address}"
    when = time.strftime("%Y-%m-%d", time.gmtime(docs.commit_time)) if docs.commit_time else ""
    dated = f", {when}" if when else ""
    out(f"{address} {release.version} (tag {release.tag}, commit {release.commit[:12]}{dated})")
    reason = entry.deprecation(release)
    if reason:
        out(f"Deprecated: {_clean(reason)} (it still installs)")
    if revoked := entry.revocation(release):
        out(f"Revoked: {_clean(revoked)} (it installs only where it was installed before)")
    if docs.root.description:
        out("")
        out(_clean(docs.root.description))
    out("")
    out("Usage")
    latest = latest_release(entry.versions.releases) or release
    version = constraint(release.version, newest=latest.version == release.version)
    snippet = module_snippet(entry.spec.address.name, address, version, docs.root.inputs)
    for line in snippet.splitlines():
        out(f"  {_clean(line)}" if line else "")
    for line in _folder(docs.root):
        out(line)
    for title, folders in (("Submodules", docs.submodules), ("Examples", docs.examples)):
        if folders:
            out("")
            out(title)
            rows = [
                [
                    f.path,
                    _count(len(f.inputs), "input"),
                    _count(len(f.outputs), "output"),
                    _clean(f.description),
                ]
                for f in folders
            ]
            for line in _table(["PATH", "INPUTS", "OUTPUTS", "DESCRIPTION"], rows):
                out(f"  {line}")
    problems = [p for f in (docs.root, *docs.submodules, *docs.examples) for p in f.problems]
    if problems:
        out("")
        out("Not documented (these files could not be read)")
        for problem in problems:
            out(f"  {_clean(problem.path)}: {_clean(problem.message)}")


def _folder(folder: FolderDocs) -> list[str]:
    lines = ["", "Inputs"]
    if folder.inputs:
        rows = [
            [
                i.name,
                _short(i.type or "any"),
                "(required)" if i.required else _short(i.default or ""),
                _notes(i.sensitive, i.nullable, i.deprecated),
                _first_line(i.description),
            ]
            for i in folder.inputs
        ]
        header = ["NAME", "TYPE", "DEFAULT", "", "DESCRIPTION"]
        lines += [f"  {line}" for line in _table(header, rows)]
    else:
        lines.append("  (none)")
    lines += ["", "Outputs"]
    if folder.outputs:
        rows = [
            [o.name, _notes(o.sensitive, True, o.deprecated), _first_line(o.description)]
            for o in folder.outputs
        ]
        lines += [f"  {line}" for line in _table(["NAME", "", "DESCRIPTION"], rows)]
    else:
        lines.append("  (none)")
    if folder.providers or folder.terraform_version:
        lines += ["", "Requirements"]
        rows = [["terraform", "", folder.terraform_version]] if folder.terraform_version else []
        rows += [[p.name, p.source, p.version] for p in folder.providers]
        lines += [f"  {line}" for line in _table(["NAME", "SOURCE", "VERSION"], rows)]
    return lines


def _notes(sensitive: bool, nullable: bool, deprecated: str) -> str:
    notes = ["sensitive"] * sensitive + ["not null"] * (not nullable)
    notes += ["deprecated"] * bool(deprecated)
    return ", ".join(notes)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Columns padded to their widest cell; empty columns left out; no trailing spaces."""
    cleaned = [[_clean(cell) for cell in row] for row in rows]
    keep = [n for n in range(len(header)) if any(row[n] for row in cleaned)]
    table = [[header[n] for n in keep], *([row[n] for n in keep] for row in cleaned)]
    widths = [max(len(row[n]) for row in table) for n in range(len(keep))]
    return [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in table
    ]


def _first_line(text: str) -> str:
    return text.strip().split("\n", 1)[0]


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= CELL_MOST else flat[: CELL_MOST - 1] + "…"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _clean(text: str) -> str:
    """`text` with every control character (escape sequences' ESC first) made a space."""
    return "".join(" " if unicodedata.category(c) in ("Cc", "Cf") else c for c in text)
