"""Version constraints as Terraform writes them (`>= 1.2, < 2.0.0`, `~> 1.4`): parsed once, with
the reason a clause is wrong, and asked whether a version meets them."""

from __future__ import annotations

import re
from dataclasses import dataclass

import semver

_CLAUSE = re.compile(
    r"\s*(=|!=|>=|<=|>|<|~>)?\s*v?"
    r"(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?\s*"
)


@dataclass(frozen=True)
class Clause:
    operator: str  # one of = != > >= < <= ~>
    version: semver.Version
    parts: int  # how many of major, minor and patch were written: `~> 1.4` is 2

    def admits(self, version: semver.Version) -> bool:
        plain = version if version.build is None else version.replace(build=None)
        if plain.prerelease is None and self.version.prerelease is None and self.operator != "~>":
            # Release against release: their numbers alone (semver's compare is far slower).
            mine, theirs = self.version.to_tuple()[:3], plain.to_tuple()[:3]
            return {
                "=": theirs == mine,
                "!=": theirs != mine,
                ">": theirs > mine,
                ">=": theirs >= mine,
                "<": theirs < mine,
                "<=": theirs <= mine,
            }[self.operator]
        if self.operator == "~>":
            upper = (
                semver.Version(self.version.major + 1, 0, 0)
                if self.parts <= 2
                else semver.Version(self.version.major, self.version.minor + 1, 0)
            )
            return self.version <= plain < upper
        order = plain.compare(self.version)
        return {
            "=": order == 0,
            "!=": order != 0,
            ">": order > 0,
            ">=": order >= 0,
            "<": order < 0,
            "<=": order <= 0,
        }[self.operator]


@dataclass(frozen=True)
class VersionConstraint:
    """Clauses joined by commas; a version meets the constraint when it meets every clause.
    Prereleases are ordered as Semantic Versioning orders them (1.0.0-rc.1 < 1.0.0)."""

    text: str
    clauses: tuple[Clause, ...]

    @classmethod
    def parse(cls, text: str) -> VersionConstraint:
        clauses = []
        for piece in text.split(","):
            found = _CLAUSE.fullmatch(piece)
            if found is None or not piece.strip():
                raise ValueError(
                    f"{piece.strip()!r} is not a version constraint clause"
                    ' (like "< 2.0.0", ">= 1.2, < 1.4" or "~> 1.4")'
                )
            operator, major, minor, patch, pre = found.groups()
            parts = 1 + (minor is not None) + (patch is not None)
            if operator == "~>" and parts == 1:
                raise ValueError(f"{piece.strip()!r}: ~> needs at least a major and a minor")
            version = semver.Version(int(major), int(minor or 0), int(patch or 0), pre)
            clauses.append(Clause(operator or "=", version, parts))
        return cls(text.strip(), tuple(clauses))

    def admits(self, version: str | semver.Version) -> bool:
        """Whether `version` meets every clause; False for text that is no version."""
        if isinstance(version, str):
            try:
                version = semver.Version.parse(version.removeprefix("v"))
            except ValueError:
                return False
        return all(c.admits(version) for c in self.clauses)

    def __str__(self) -> str:
        return self.text
