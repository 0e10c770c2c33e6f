"""`approvals.yaml`, beside registry.yaml: versions published before their cooldown ends.

The file is the record, reviewed and committed like registry.yaml (`gitreg approve` appends an
entry and says so); gitreg keeps no approval of its own. It is read with registry.yaml, and a
change to it reloads as one to registry.yaml does. Its problems are registry.yaml's, their
key paths starting `approvals.yaml:`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import semver
import yaml

from gitreg.address import ModuleAddress
from gitreg.catalog import yamldoc, yamltree

FILE = "approvals.yaml"
_KEYS = ("module", "version", "by", "at", "reason")


@dataclass(frozen=True)
class Approval:
    """A module's version published before its cooldown ends, who approved it, when, and why."""

    module: tuple[str, str, str]  # its address's key
    version: str
    by: str
    at: str = ""
    reason: str = ""

    def __str__(self) -> str:
        when = f" at {self.at}" if self.at else ""
        why = f": {self.reason}" if self.reason else ""
        return f"approved by {self.by}{when}{why}"


def read_approvals(reader: yamldoc.Reader, folder: Path) -> tuple[Approval, ...]:
    """The approvals in `folder`'s approvals.yaml; none without one."""
    try:
        text = (folder / FILE).read_text()
    except FileNotFoundError:
        return ()
    except (OSError, UnicodeDecodeError) as exc:
        reader.problem(f"{FILE}:", None, f"cannot be read: {exc}")
        return ()
    return approvals_in(reader, text)


def approvals_in(reader: yamldoc.Reader, text: str) -> tuple[Approval, ...]:
    """The approvals `text` holds, as approvals.yaml; its problems told to `reader`."""
    try:
        document = yamltree.load(text)
    except (yaml.YAMLError, RecursionError) as exc:
        reader.problem(f"{FILE}:", None, f"cannot be read: {exc}")
        return ()
    top = reader.mapping(document, f"{FILE}:", getattr(document, "line", 1), ("approvals",))
    found: list[Approval] = []
    for where, line, item in reader.items(top, "approvals", f"{FILE}:") if top else ():
        m = reader.mapping(item, where, line, _KEYS, ("module", "version", "by"))
        if m is None:
            continue
        module = reader.parsed(m, "module", where, _address)
        version = reader.parsed(m, "version", where, _version)
        by = reader.string(m, "by", where)
        at, reason = reader.string(m, "at", where) or "", reader.string(m, "reason", where) or ""
        if module and version and by:
            found.append(Approval(module.key, version, by, at, reason))
    return tuple(found)


def approval_of(approvals: tuple[Approval, ...], version: str) -> Approval | None:
    """The approval of `version`, or None."""
    return next((a for a in approvals if a.version == version), None)


def _address(text: str) -> ModuleAddress:
    parts = text.split("/")
    if len(parts) != 3:
        raise ValueError(f"{text!r} must be NAMESPACE/NAME/SYSTEM")
    return ModuleAddress.parse(*parts)


def _version(text: str) -> str:
    return str(semver.Version.parse(text.removeprefix("v")))
