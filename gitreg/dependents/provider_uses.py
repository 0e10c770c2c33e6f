"""Where providers are used: consumers' lock files and modules' `required_providers`.

The `provider` blocks of consumers' committed `.terraform.lock.hcl` files (the version
`terraform init` locked, the constraints it recorded), and the `required_providers` of modules'
latest versions (a constraint, resolved later). Read as the module calls are, beside them;
which of these name a provider hosted here is provider_index.py's to say. See
docs/dependents.md."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from gitreg.dependents.index import Caller, Problem, latest_reads
from gitreg.docs import hcl
from gitreg.docs.model import ProviderRequirement
from gitreg.git.trees import DocFile
from gitreg.modules.index import ModuleEntry, VersionIndex
from gitreg.modules.resolve import Release
from gitreg.pacing import breathe

LOCK_FILE = ".terraform.lock.hcl"


@dataclass(frozen=True)
class ProviderUse:
    """One provider a caller needs: its `source` as written, the local name of a
    `required_providers` entry ("" in a lock file), the constraint, and the version a lock
    file locked ("" for a module's requirement)."""

    caller: Caller
    source: str
    name: str = ""
    constraint: str = ""
    locked: str = ""


def is_lock_file(path: str) -> bool:
    return posixpath.basename(path) == LOCK_FILE


def locked_in(
    files: Sequence[DocFile], namespace: str, repository: str, version: str
) -> tuple[list[ProviderUse], list[Problem]]:
    """The providers the lock files among `files` locked; each lock file that cannot be read
    named, never the end of the read."""
    uses: list[ProviderUse] = []
    problems: list[Problem] = []
    for file in files:
        if not is_lock_file(file.path):
            continue
        caller = Caller("consumer", namespace, repository, version, file.path)
        try:
            uses += _locked(file, caller)
        except Exception as exc:  # a shape nobody foresaw is this file's fault, named
            message = str(exc) if isinstance(exc, ValueError) else repr(exc)
            problems.append(Problem(namespace, repository, file.path, message[:300]))
        breathe()
    return uses, problems


def hcl_of(file: DocFile) -> dict[str, Any]:
    """A file of a consumer, parsed; ValueError says why it cannot be (too large, not UTF-8
    text, not HCL)."""
    if file.data is None:
        raise ValueError(file.why or "not read")
    try:
        return hcl.parse(file.data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text") from None


def _locked(file: DocFile, caller: Caller) -> list[ProviderUse]:
    body = hcl_of(file)
    uses = []
    for source, block in hcl.labelled(body, "provider"):
        version, constraints = block.get("version"), block.get("constraints")
        if not isinstance(version, str):
            raise ValueError(f"provider {source!r} has no version")
        uses.append(
            ProviderUse(
                caller,
                source,
                constraint=hcl.text(constraints) if isinstance(constraints, str) else "",
                locked=hcl.text(version),
            )
        )
    return uses


RequirementsOf = Callable[[ModuleEntry, Release], Iterable[tuple[str, ProviderRequirement]] | None]


def module_uses(
    index: VersionIndex, requirements_of: RequirementsOf
) -> tuple[list[ProviderUse], int]:
    """Each module's latest version's `required_providers` (those the docs warming put in
    memory), and how many modules' are not there yet: the latest alone, as for its calls."""
    found, pending = latest_reads(index, requirements_of)
    return [ProviderUse(c, r.source, r.name, r.version) for c, r in found], pending
