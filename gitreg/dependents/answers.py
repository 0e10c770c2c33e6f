"""A module's dependents as one reader is answered them: JSON for the API and MCP, and lines
of text for `gitreg usage`. Only what `Seen` names is named; the rest is a count."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from gitreg.dependents.index import Dependent, DependentsIndex, Seen

Json = dict[str, Any]


def dependents_json(module: str, seen: Seen, index: DependentsIndex) -> Json:
    """`GET /v1/modules/NS/NAME/SYSTEM/dependents`'s body (docs/dependents.md)."""
    built = datetime.fromtimestamp(index.built, UTC) if index.built else None
    return {
        "module": module,
        "dependents": [dependent_json(d) for d in seen.named],
        "hidden": {"count": seen.hidden, "deprecated": seen.hidden_deprecated},
        "on_deprecated": sum(1 for d in seen.named if d.deprecated) + seen.hidden_deprecated,
        "index": {
            "built_at": built.isoformat().replace("+00:00", "Z") if built else None,
            "complete": index.built > 0 and index.pending == 0,
        },
    }


def dependent_json(dependent: Dependent) -> Json:
    caller = dependent.caller
    return {
        "caller": {
            "kind": caller.kind,
            "namespace": caller.namespace,
            "name": caller.name,
            "version": caller.version,
            "path": caller.path,
        },
        "block": dependent.block,
        "source": dependent.source,
        "constraint": dependent.constraint,
        "via": dependent.via,
        "resolves_to": dependent.resolved or None,
        "unresolved": dependent.unresolved or None,
        "deprecated": dependent.deprecated or None,
    }


def dependent_line(dependent: Dependent, called: str = "") -> str:
    """One dependent as `gitreg usage` prints it; `called`: what it calls, if not a module's
    block (a provider's source)."""
    caller = dependent.caller
    where = f"{caller.name} {caller.version}".strip()
    if caller.path:
        where += f" ({caller.path})"
    wanted = dependent.constraint or "(no constraint)"
    picks = dependent.resolved or f"none: {dependent.unresolved}"
    called = called or f"module {dependent.block!r}"
    line = f"{where}: {called} by {dependent.via} {wanted} -> {picks}"
    if dependent.deprecated:
        line += f" DEPRECATED: {dependent.deprecated}"
    return line
