"""Tag templates: which tags are releases of a module, and the version each one carries."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import semver

PLACEHOLDER = "{version}"
DEFAULT_TEMPLATES = ("v{version}", "{version}")

# What `git check-ref-format` refuses, minus the parts that need the whole name.
_BAD_REF_CHARS = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]")


def parse_version(text: str) -> semver.Version:
    """A strict Semantic Version 2.0; raise ValueError with the reason otherwise."""
    try:
        return semver.Version.parse(text)
    except (ValueError, TypeError) as exc:
        raise ValueError(
            f"{text!r} is not a Semantic Version 2.0 (like 1.2.0 or 1.2.0-rc.1)"
        ) from exc


def version_sort_key(version: semver.Version) -> tuple[semver.Version, str]:
    """Precedence first; build metadata (ignored by precedence) breaks ties, so order is stable."""
    return (version, version.build or "")


@dataclass(frozen=True)
class TagTemplate:
    """A tag pattern such as `vpc/v{version}`: fixed text around one version placeholder."""

    prefix: str
    suffix: str

    @classmethod
    def parse(cls, text: str) -> TagTemplate:
        if text.count(PLACEHOLDER) != 1:
            raise ValueError(f"template {text!r} must contain {PLACEHOLDER} exactly once")
        prefix, suffix = text.split(PLACEHOLDER)
        fixed = prefix + suffix
        if "{" in fixed or "}" in fixed:
            raise ValueError(f"template {text!r} has braces other than {PLACEHOLDER}")
        if _BAD_REF_CHARS.search(fixed) or ".." in fixed or "@{" in fixed:
            raise ValueError(f"template {text!r} has characters a Git tag cannot contain")
        if prefix.startswith("/") or suffix.endswith((".lock", "/", ".")) or "//" in fixed:
            raise ValueError(f"template {text!r} cannot form a valid Git tag name")
        return cls(prefix, suffix)

    def version_of(self, tag: str) -> semver.Version | None:
        """The version `tag` releases under this template, or None when it releases none: it
        does not fit, or what stands for {version} is no Semantic Version (`problem` says)."""
        return self._read(tag)[0]

    def problem(self, tag: str) -> str | None:
        """Why a tag that fits and starts like a version (`v1.2`) still releases none."""
        return self._read(tag)[1]

    def _read(self, tag: str) -> tuple[semver.Version | None, str | None]:
        # The one rule: the fixed text around a strict Semantic Version. What stands for
        # {version} must start with a digit, or the tag is not meant for this template at all
        # (`{version}` and `nightly`, or another module's `vpc/v1.0.0`): no problem to report.
        if len(tag) <= len(self.prefix) + len(self.suffix):
            return None, None
        if not (tag.startswith(self.prefix) and tag.endswith(self.suffix)):
            return None, None
        text = tag[len(self.prefix) : len(tag) - len(self.suffix)]
        if not text[:1].isdigit():
            return None, None
        try:
            return parse_version(text), None
        except ValueError as exc:
            return None, str(exc)

    def fits_but_for_case(self, tag: str) -> bool:
        """True when `tag` releases no version under this template but would with other letter
        case (`V1.2.0` for `v{version}`): a slip worth naming, as tags are matched exactly."""
        folded = TagTemplate(self.prefix.lower(), self.suffix.lower())
        return self.version_of(tag) is None and folded.version_of(tag.lower()) is not None

    def tag_for(self, version: str) -> str:
        return f"{self.prefix}{version}{self.suffix}"

    def __str__(self) -> str:
        return f"{self.prefix}{PLACEHOLDER}{self.suffix}"


def released_version(templates: Iterable[TagTemplate], tag: str) -> semver.Version | None:
    """The version `tag` releases under the first of `templates` it fits, if any."""
    for template in templates:
        version = template.version_of(tag)
        if version is not None:
            return version
    return None
