"""What a repository's name makes of it, by the public registry's rule:
`terraform-<SYSTEM>-<NAME>` is the module `<NAME>` for `<SYSTEM>` (`terraform-aws-vpc-peering`:
the name `vpc-peering`, the system `aws`)."""

from __future__ import annotations

import re

from gitreg.address import name_problem, system_problem

_CONVENTION = re.compile(r"terraform-([^-]+)-(.+)")


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
