"""Module addresses: `namespace/name/system`, validated as the registry protocol allows."""

from __future__ import annotations

import re
from dataclasses import dataclass

# The same rules as Terraform's own registry addresses (terraform-registry-address).
_NAME = re.compile(r"[0-9A-Za-z](?:[0-9A-Za-z_-]{0,62}[0-9A-Za-z])?")
_SYSTEM = re.compile(r"[0-9a-z]{1,64}")


def name_problem(value: str, what: str) -> str | None:
    """Why `value` is not a valid namespace or module name, or None when it is."""
    if _NAME.fullmatch(value):
        return None
    return (
        f"{what} {value!r} must be 1 to 64 ASCII letters, digits, '-' or '_', "
        "starting and ending with a letter or digit"
    )


_PROVIDER_PART = re.compile(r"[0-9A-Za-z](?:[0-9A-Za-z-]{0,62}[0-9A-Za-z])?")


def provider_problem(value: str, what: str) -> str | None:
    """Why `value` is not a valid provider namespace or type, or None when it is."""
    if _PROVIDER_PART.fullmatch(value) and (what != "type" or value == value.lower()):
        return None
    case = "lowercase " if what == "type" else ""
    return (
        f"provider {what} {value!r} must be 1 to 64 {case}ASCII letters, digits or '-', "
        "starting and ending with a letter or digit"
    )


def system_problem(value: str) -> str | None:
    """Why `value` is not a valid target system, or None when it is."""
    if _SYSTEM.fullmatch(value):
        return None
    return f"system {value!r} must be 1 to 64 lowercase ASCII letters or digits"


@dataclass(frozen=True)
class ModuleAddress:
    """A module's address on this registry, with the case the catalog gave it."""

    namespace: str
    name: str
    system: str

    @classmethod
    def parse(cls, namespace: str, name: str, system: str) -> ModuleAddress:
        """Validate the three parts; raise ValueError naming the first bad one."""
        for problem in (
            name_problem(namespace, "namespace"),
            name_problem(name, "name"),
            system_problem(system),
        ):
            if problem:
                raise ValueError(problem)
        return cls(namespace, name, system)

    @property
    def key(self) -> tuple[str, str, str]:
        """Lookup key: registries compare addresses case-insensitively."""
        return (self.namespace.lower(), self.name.lower(), self.system.lower())

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}/{self.system}"
