"""What a repository's name makes of it: terraform-<SYSTEM>-<NAME>, by a table."""

from __future__ import annotations

import pytest

from gitreg.sources.naming import module_of


@pytest.mark.parametrize(
    ("repository", "module"),
    [
        ("terraform-aws-vpc", ("vpc", "aws")),
        ("terraform-aws-vpc-peering", ("vpc-peering", "aws")),
        ("terraform-google-gke_cluster", ("gke_cluster", "google")),
        ("terraform-azurerm-Network", ("Network", "azurerm")),
    ],
)
def test_names_that_follow_the_rule(repository: str, module: tuple[str, str]) -> None:
    assert module_of(repository) == module


@pytest.mark.parametrize(
    ("repository", "why"),
    [
        ("vpc", "not terraform-<SYSTEM>-<NAME>"),
        ("terraform-aws", "not terraform-<SYSTEM>-<NAME>"),
        ("terraform-provider-widget", "a provider's repository"),
        ("terraform-AWS-vpc", "system 'AWS' must be 1 to 64 lowercase"),
        ("terraform-aws-vpc.", "name 'vpc.' must be"),
    ],
)
def test_names_that_do_not(repository: str, why: str) -> None:
    with pytest.raises(ValueError, match=why.replace("(", r"\(")):
        module_of(repository)
