"""A hosted provider's dependents as one reader is answered them: JSON for the API, in the
module answer's shape (answers.py), and lines for `gitreg usage NS/TYPE`."""

from __future__ import annotations

from gitreg.dependents.answers import Json, dependent_json, dependent_line, dependents_json
from gitreg.dependents.index import Dependent, DependentsIndex, Seen


def provider_dependents_json(provider: str, seen: Seen, index: DependentsIndex) -> Json:
    """`GET /v1/providers/NS/TYPE/dependents`'s body (docs/dependents.md)."""
    body = dependents_json(provider, seen, index)
    del body["module"]
    body["dependents"] = [provider_dependent_json(d) for d in seen.named]
    return {"provider": provider, **body}


def provider_dependent_json(dependent: Dependent) -> Json:
    """A module dependent's fields, with the `required_providers` entry's local name for its
    block (None in a lock file)."""
    body = dependent_json(dependent)
    local_name = body.pop("block") or None
    return {"caller": body.pop("caller"), "local_name": local_name, **body}


def provider_dependent_line(dependent: Dependent) -> str:
    """One provider dependent as `gitreg usage` prints it."""
    return dependent_line(dependent, dependent.source)
