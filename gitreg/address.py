"""Module and provider addresses, validated as Terraform's own parser (terraform-registry-address)
and the registry protocols allow."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# The same rules as Terraform's own registry addresses (terraform-registry-address).
_NAME = re.compile(r"[0-9A-Za-z](?:[0-9A-Za-z_-]{0,62}[0-9A-Za-z])?")
_SYSTEM = re.compile(r"[0-9a-z]{1,64}")
_TYPE_CHARS = re.compile(r"[0-9A-Za-z-]+")
_NAMESPACE_CHARS = re.compile(r"[0-9A-Za-z_-]+")  # Terraform ≥ 1.16 takes '_' in namespaces
# A provider's registry host as the network mirror and read-through see it: no port (a mirror
# cannot serve a provider whose own address has one), lower case.
_HOSTNAME = re.compile(r"[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?")


def name_problem(value: str, what: str) -> str | None:
    """Why `value` is not a valid namespace or module name, or None when it is."""
    if _NAME.fullmatch(value):
        return None
    return (
        f"{what} {value!r} must be 1 to 64 ASCII letters, digits, '-' or '_', "
        "starting and ending with a letter or digit"
    )


def provider_problem(value: str, what: str) -> str | None:
    """Why `value` is not a valid provider namespace or type ("namespace", "type"), or None.

    As Terraform ≥ 1.16 (terraform-registry-address's ParseProviderNamespace): 1 to 64 ASCII
    letters, digits or '-', and '_' in a namespace only; starting and ending with a letter or
    digit, no '--'. A type must be lowercase here (the catalog); requests are folded to lower
    case before they are asked.
    """
    label = f"provider {what} {value!r}"
    if not value:
        return f"provider {what} must not be empty"
    if len(value) > 64:
        return f"{label} is {len(value)} characters long; at most 64 are allowed"
    allowed = _NAMESPACE_CHARS if what == "namespace" else _TYPE_CHARS
    if not allowed.fullmatch(value):
        bad = next(c for c in value if not allowed.fullmatch(c))
        if bad == "_":
            return f"{label} may not contain '_': only a provider's namespace may"
        listed = "digits, '-' and '_'" if what == "namespace" else "digits and '-'"
        return f"{label} may contain only ASCII letters, {listed}, not {bad!r}"
    if value[0] in "-_" or value[-1] in "-_":
        return f"{label} must start and end with a letter or digit"
    if "--" in value:
        return f"{label} may not contain '--'"
    if what == "type" and value != value.lower():
        return f"{label} must be lowercase"
    return None


def hostname_problem(value: str) -> str | None:
    """Why `value` is not a provider's registry host name (lower case, no port), or None."""
    if _HOSTNAME.fullmatch(value):
        return None
    if ":" in value:
        return f"{value!r} is not a provider's registry host name: give it without a port"
    return (
        f"{value!r} is not a provider's registry host name: 1 to 253 lowercase ASCII letters, "
        "digits, '.' or '-', starting and ending with a letter or digit"
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
    # Lookup key: registries compare addresses case-insensitively. Made once: a reload of
    # 10,000 modules asks for it 50,000 times.
    key: tuple[str, str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        key = (_folded(self.namespace), _folded(self.name), _folded(self.system))
        object.__setattr__(self, "key", key)

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

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}/{self.system}"


def _folded(text: str) -> str:
    """`text` in lower case, the same string when it is already (one string kept, not two)."""
    lowered = text.lower()
    return text if lowered == text else lowered


@dataclass(frozen=True)
class ProviderAddress:
    """A provider's source address, folded to lower case as Terraform folds it. `hostname` is
    None for this registry's own providers (providers.v1 paths carry no hostname); the network
    mirror and read-through always have one."""

    namespace: str
    type: str
    hostname: str | None = None

    @classmethod
    def of(cls, namespace: str, provider_type: str, hostname: str | None = None) -> ProviderAddress:
        """From its parts (a request path's); raise ValueError naming the first bad one."""
        host = hostname.lower() if hostname is not None else None
        namespace, provider_type = namespace.lower(), provider_type.lower()
        for problem in (
            hostname_problem(host) if host is not None else None,
            provider_problem(namespace, "namespace"),
            provider_problem(provider_type, "type"),
        ):
            if problem:
                raise ValueError(problem)
        return cls(namespace, provider_type, host)

    @classmethod
    def parse(cls, text: str) -> ProviderAddress:
        """`HOSTNAME/NAMESPACE/TYPE` or `NAMESPACE/TYPE`; raise ValueError saying what is wrong."""
        parts = text.split("/")
        if len(parts) not in (2, 3):
            raise ValueError(
                f"{text!r} has {len(parts)} part{'s' if len(parts) != 1 else ''} separated by '/'; "
                "a provider address is [HOSTNAME/]NAMESPACE/TYPE"
            )
        if len(parts) == 3:
            return cls.of(parts[1], parts[2], parts[0])
        return cls.of(parts[0], parts[1])

    @property
    def parts(self) -> tuple[str, ...]:
        """hostname (when known), namespace, type: for paths and URLs."""
        head = (self.hostname,) if self.hostname is not None else ()
        return (*head, self.namespace, self.type)

    def __str__(self) -> str:
        return "/".join(self.parts)
