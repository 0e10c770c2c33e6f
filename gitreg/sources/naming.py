"""What a repository's name makes of it, by the public registry's rules.

`terraform-<SYSTEM>-<NAME>` is the module `<NAME>` for `<SYSTEM>` (`terraform-aws-vpc-peering`:
the name `vpc-peering`, the system `aws`), and `terraform-provider-<TYPE>` the provider `<TYPE>`,
whose releases are the repository's own. See docs/sources.md."""

from __future__ import annotations

import re

from gitreg.address import name_problem, provider_problem, system_problem

_CONVENTION = re.compile(r"terraform-([^-]+)-(.+)")
_PROVIDER = re.compile(r"terraform-provider-(.+)")


def provider_of(repository: str) -> str | None:
    """The provider type a `terraform-provider-<TYPE>` name makes, None for another name;
    ValueError saying why when TYPE is no provider type."""
    match = _PROVIDER.fullmatch(repository)
    if match is None:
        return None
    problem = provider_problem(match[1], "type")
    if problem:
        raise ValueError(f"by its name it would be a provider, but the {problem}")
    return match[1]


def module_of(repository: str) -> tuple[str, str]:
    """(name, system) by the naming rule; ValueError saying why when the name does not follow
    it. A provider's repository (`terraform-provider-<TYPE>`) is no module."""
    match = _CONVENTION.fullmatch(repository)
    if match is None:
        raise ValueError(
            "its name is not terraform-<SYSTEM>-<NAME>, and it has no .gitreg.yaml declaring"
            " its modules"
        )
    system, name = match[1], match[2]
    if system == "provider":
        raise ValueError("terraform-provider-<TYPE> is a provider's repository, not a module's")
    problem = system_problem(system) or name_problem(name, "name")
    if problem:
        raise ValueError(f"by its name it would be {name}/{system}, but the {problem}")
    return name, system
