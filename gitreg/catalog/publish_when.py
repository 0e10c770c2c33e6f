"""`publish_when`: how long a module's new versions wait before they are served.

Scoped as `require_signed_tags` is: a module's own entry wins, then its source's, then the
first top-level entry whose namespaces cover it (`Catalog` applies that one to every module it
lists). `min_age` is the one condition today; a forge's check verdict will be another."""

from __future__ import annotations

from functools import partial

from gitreg.catalog import yamldoc
from gitreg.catalog.auth import AuthSection
from gitreg.catalog.specs import NamespacePublishWhen, PublishWhen

KEY = "publish_when"
_RULE_KEYS = ("min_age", "warn_after")


def publish_when(reader: yamldoc.Reader, m: yamldoc.Mapping, path: str) -> PublishWhen | None:
    """`publish_when: {min_age: 2d}` of a module or source entry; None when absent."""
    s = reader.section(m, KEY, path, _RULE_KEYS)
    return None if s is None else _rule(reader, s, yamldoc.join(path, KEY))


def namespace_publish_when(
    reader: AuthSection, top: yamldoc.Mapping
) -> tuple[NamespacePublishWhen, ...]:
    """The top-level list: `- {namespaces: [platform, team-*], min_age: 2d}`."""
    found = reader.namespace_entries(top, KEY, _RULE_KEYS, partial(_rule, reader))
    return tuple(NamespacePublishWhen(patterns, rule) for patterns, rule in found)


def _rule(reader: yamldoc.Reader, m: yamldoc.Mapping, where: str) -> PublishWhen | None:
    if "min_age" not in m:
        reader.problem(where, m.line, "give min_age: how old a version must be, like 2d or 12h")
        return None
    # 0 is allowed: a namespace's rule turned off for one module or source.
    min_age = reader.duration(m, "min_age", where, 0.0, zero_is_off=True)
    return PublishWhen(min_age, reader.duration(m, "warn_after", where, 0.0, zero_is_off=True))
