"""A module's or provider's `deprecated:` and `revoked:` lists, as registry.yaml and a repository's
`.gitreg.yaml` write them: the versions a constraint admits, and why they are retired."""

from __future__ import annotations

from gitreg.catalog import yamldoc
from gitreg.catalog.specs import Deprecation
from gitreg.version_constraints import VersionConstraint

REASON_MOST = 500  # a reason is printed by terraform init, once per version: a sentence or two


def deprecations(
    reader: yamldoc.Reader, m: yamldoc.Mapping, path: str, key: str = "deprecated"
) -> tuple[Deprecation, ...]:
    """`deprecated: [{versions: "< 2.0.0", reason: "..."}]`, or `revoked:` (`key`) in the same
    shape; every problem with its key path."""
    if key not in m:
        return ()
    found = []
    for where, line, item in reader.items(m, key, path):
        entry = reader.mapping(item, where, line, ("versions", "reason"), ("versions", "reason"))
        if entry is None:
            continue
        versions = reader.parsed(entry, "versions", where, VersionConstraint.parse)
        reason = reader.string(entry, "reason", where)
        if reason is not None and len(reason) > REASON_MOST:
            reader.problem(
                yamldoc.join(where, "reason"),
                entry.key_lines["reason"],
                f"is {len(reason)} characters long; at most {REASON_MOST} are allowed",
            )
        elif versions is not None and reason:
            found.append(Deprecation(versions, " ".join(reason.split())))
    return tuple(found)
