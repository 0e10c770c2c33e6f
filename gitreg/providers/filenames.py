"""Provider release file names, parsed and written here only.

    terraform-provider-TYPE_VERSION_OS_ARCH.zip                (a package: PackageFile)
    terraform-provider-TYPE_VERSION_SHA256SUMS, its .sig, _manifest.json   (ReleaseFile)

The version is the text between the underscores, as written: callers that need a Semantic
Version parse it (a folder's release with a bad version is reported, not skipped unseen).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

PREFIX = "terraform-provider-"
_PLATFORM = re.compile(r"[a-z0-9]{1,32}")
_PART = re.compile(r"[^_/\\\x00]+")  # a type or a version as it appears in a name

ReleaseKind = Literal["SHA256SUMS", "SHA256SUMS.sig", "manifest.json"]
_KINDS: tuple[ReleaseKind, ...] = ("SHA256SUMS", "SHA256SUMS.sig", "manifest.json")


def platform_problem(os_name: str, arch: str) -> str | None:
    """Why OS and ARCH are not a platform like linux/amd64 (1 to 32 lowercase letters or
    digits each), or None."""
    if _PLATFORM.fullmatch(os_name) and _PLATFORM.fullmatch(arch):
        return None
    return f"{os_name}/{arch} is not a platform like linux/amd64"


@dataclass(frozen=True)
class PackageFile:
    """`terraform-provider-TYPE_VERSION_OS_ARCH.zip`."""

    type: str
    version: str
    os: str
    arch: str

    @classmethod
    def parse(cls, name: str) -> PackageFile:
        """Raise ValueError saying what is wrong with `name`."""
        if not name.startswith(PREFIX) or not name.endswith(".zip"):
            raise ValueError(f"{name!r} is not named {PREFIX}TYPE_VERSION_OS_ARCH.zip")
        parts = name[len(PREFIX) : -len(".zip")].split("_")
        if len(parts) != 4 or not all(_PART.fullmatch(p) for p in parts[:2]):
            raise ValueError(f"{name!r} is not named {PREFIX}TYPE_VERSION_OS_ARCH.zip")
        provider_type, version, os_name, arch = parts
        problem = platform_problem(os_name, arch)
        if problem:
            raise ValueError(f"{name!r}: {problem}")
        return cls(provider_type, version, os_name, arch)

    @classmethod
    def find(cls, name: str, provider_type: str) -> PackageFile | None:
        """The package `name` is, if it is one of `provider_type`'s."""
        try:
            package = cls.parse(name)
        except ValueError:
            return None
        return package if package.type == provider_type else None

    @property
    def name(self) -> str:
        return f"{PREFIX}{self.type}_{self.version}_{self.os}_{self.arch}.zip"

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class ReleaseFile:
    """`terraform-provider-TYPE_VERSION_SHA256SUMS` (and `.sig`, `_manifest.json`)."""

    type: str
    version: str
    kind: ReleaseKind

    @classmethod
    def find(cls, name: str, provider_type: str) -> ReleaseFile | None:
        """The release file `name` is, if it is one of `provider_type`'s."""
        head = f"{PREFIX}{provider_type}_"
        if not name.startswith(head):
            return None
        version, _, kind = name[len(head) :].partition("_")
        if not _PART.fullmatch(version):
            return None
        return next((cls(provider_type, version, k) for k in _KINDS if k == kind), None)

    @property
    def name(self) -> str:
        return f"{PREFIX}{self.type}_{self.version}_{self.kind}"

    def __str__(self) -> str:
        return self.name
