"""OCI names as the Distribution spec writes them, and refusals that say what is wrong.

A module's repository (`<namespace>/<name>/<system>`, lowercase), a provider's
(`providers/<namespace>/<type>`), tags made of versions (`+` written `_`), and digests."""

from __future__ import annotations

import re

from gitreg.address import ModuleAddress

# The Distribution spec's grammar for one path component of a repository name, and for tags.
_COMPONENT = re.compile(r"[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*")
_TAG = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
# The image spec's digest grammar, and the encoding of each algorithm it registers.
_ANY_DIGEST = re.compile(r"[a-z0-9]+(?:[+._-][a-z0-9]+)*:[a-zA-Z0-9=_-]+")
_REGISTERED = {"sha256": re.compile(r"[0-9a-f]{64}"), "sha512": re.compile(r"[0-9a-f]{128}")}
PROVIDERS = "providers"  # the first component of every provider's repository


def module_repository(address: ModuleAddress) -> str:
    """The repository a module's versions are at; ValueError saying why it has none."""
    parts = (address.namespace.lower(), address.name.lower(), address.system)
    if parts[0] == PROVIDERS:
        raise ValueError(
            f"module {address} cannot be an OCI repository: the namespace {PROVIDERS!r} holds"
            " the providers' repositories (providers/<namespace>/<type>)"
        )
    for what, part in zip(("namespace", "name", "system"), parts, strict=True):
        if not _COMPONENT.fullmatch(part):
            raise ValueError(
                f"module {address} cannot be an OCI repository: its {what} {part!r} has '_'"
                " beside '-', or three '_' in a row, which OCI names do not allow"
            )
    return "/".join(parts)


def provider_repository(namespace: str, provider_type: str) -> str | None:
    """The repository a hosted provider's versions are at; None when the namespace cannot be
    one: '_' beside '-', or three '_' in a row (a type, letters, digits and '-', always can)."""
    repository = f"{PROVIDERS}/{namespace.lower()}/{provider_type.lower()}"
    return repository if all(map(_COMPONENT.fullmatch, repository.split("/"))) else None


def version_tag(version: str) -> str:
    """A version's tag: `+` has no place in a tag, and OpenTofu reads `_` back as `+`."""
    return version.replace("+", "_")


def is_repository(name: str) -> bool:
    """Whether `name` is a repository name by the spec's grammar: a provider namespace may hold
    '_', and one with '_' beside '-' can be no repository."""
    return all(map(_COMPONENT.fullmatch, name.split("/")))


def is_tag(reference: str) -> bool:
    return _TAG.fullmatch(reference) is not None


def is_digest(reference: str) -> bool:
    return _DIGEST.fullmatch(reference) is not None


def is_well_formed_digest(reference: str) -> bool:
    """Whether `reference` is a digest by the image spec's grammar, of any algorithm (those it
    registers with their exact encoding), though gitreg names its content by sha256 alone."""
    if len(reference) > 256 or _ANY_DIGEST.fullmatch(reference) is None:
        return False
    algorithm, _, encoded = reference.partition(":")
    registered = _REGISTERED.get(algorithm)
    return registered is None or registered.fullmatch(encoded) is not None
