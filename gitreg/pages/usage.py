"""What a module page tells Terraform users to write.

It is the `module` block for the version shown (`~> X.Y` on the newest release's page, that
exact version on any other, a prerelease's only ever exactly), with its required inputs as
placeholders of their types; and, when the browser reached the registry by another address than
its hostname, the CLI config `host` block that leads Terraform there."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol, TypeVar

from gitreg.docs.model import Input
from gitreg.pages.placeholders import placeholder
from gitreg.tags import parse_version
from gitreg.terraform_services import host_block, same_host

# What a Host header or a public_url's host may hold to be shown: a name or an address, a port.
_ADDRESS = re.compile(r"[A-Za-z0-9.-]+(:[0-9]{1,5})?|\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?")


def prerelease(version: str) -> bool:
    try:
        return parse_version(version).prerelease is not None
    except ValueError:
        return False


class Versioned(Protocol):
    @property
    def version(self) -> str: ...


V = TypeVar("V", bound=Versioned)


def latest_release(releases: Sequence[V]) -> V | None:
    """The newest of `releases` (newest first) that is no prerelease (what `~>` picks), else the
    newest: a module's release or a provider's."""
    for release in releases:
        if not prerelease(release.version):
            return release
    return releases[0] if releases else None


def constraint(version: str, newest: bool = True) -> str:
    """`~> X.Y` for the newest release, which installs its newest patch; the exact version for
    any other (`~>` would install a newer one than the page shows), and for a prerelease, which
    Terraform only ever matches exactly."""
    if not newest or prerelease(version):
        return version
    parsed = parse_version(version)
    return f"~> {parsed.major}.{parsed.minor}"


def module_snippet(name: str, source: str, version: str, inputs: Sequence[Input]) -> str:
    """The `module` block, with each required input set to a placeholder of its type."""
    lines = [
        f'module "{name.replace("-", "_")}" {{',
        f'  source  = "{source}"',
        f'  version = "{version}"',
    ]
    required = [i for i in inputs if i.required]
    if required:
        width = max(len(i.name) for i in required)
        lines.append("")
        lines += [f"  {i.name:<{width}} = {placeholder(i.type)}" for i in required]
    return "\n".join([*lines, "}"])


def cli_host_block(hostname: str, address: str, login: bool = False) -> str:
    """The `host` block mapping `hostname` to `address` (where the browser reached the
    registry: its Host, or public_url's), with `login.v1` when `login`, or "" when they are one
    (then `hostname` leads here, as far as the page can tell) or `address` is not a plain host
    and port."""
    if not address or same_host(hostname, address) or not _ADDRESS.fullmatch(address):
        return ""
    return host_block(hostname, f"https://{address.lower()}", login)
