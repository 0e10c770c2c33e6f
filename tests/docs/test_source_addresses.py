"""Provider and module sources read as Terraform reads them, credentials left out: tables."""

from __future__ import annotations

import pytest

from gitreg.address import ModuleAddress
from gitreg.docs.source_addresses import module_source, provider_address, without_credentials


@pytest.mark.parametrize(
    ("local", "source", "address"),
    [
        ("aws", "hashicorp/aws", "registry.terraform.io/hashicorp/aws"),
        ("aws", "", "registry.terraform.io/hashicorp/aws"),
        ("aws", "aws", "registry.terraform.io/hashicorp/aws"),
        ("random", "HashiCorp/Random", "registry.terraform.io/hashicorp/random"),
        ("w", "Registry.Example.com/acme/widget", "registry.example.com/acme/widget"),
        ("w", "registry.example.com:443/acme/widget", "registry.example.com/acme/widget"),
        ("w", "localhost:8443/acme/widget", "localhost:8443/acme/widget"),
        ("w", "acme_corp/widget", "registry.terraform.io/acme_corp/widget"),
        ("terraform", "", "terraform.io/builtin/terraform"),
        ("terraform", "terraform.io/builtin/terraform", "terraform.io/builtin/terraform"),
    ],
)
def test_provider_sources_are_normalised_as_terraform_does(
    local: str, source: str, address: str
) -> None:
    assert provider_address(local, source) == (address, "")


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ("a/b/c/d", "has 4 parts"),
        ("acme/wid_get", "may not contain '_'"),
        ("/aws", "namespace must not be empty"),
        ("bad host!/acme/widget", "is not a registry host name"),
    ],
)
def test_a_provider_source_terraform_refuses_is_kept_with_why(source: str, problem: str) -> None:
    shown, why = provider_address("x", source)
    assert shown == source and problem in why


@pytest.mark.parametrize(
    ("source", "kind", "shown", "host", "module"),
    [
        ("./modules/subnets", "local", "./modules/subnets", "", None),
        ("../naming", "local", "../naming", "", None),
        ("cloudposse/label/null", "registry", "registry.terraform.io/cloudposse/label/null",
         "registry.terraform.io", "cloudposse/label/null"),
        ("Registry.Example.test/acme/vpc/aws//modules/x", "registry",
         "registry.example.test/acme/vpc/aws//modules/x", "registry.example.test", "acme/vpc/aws"),
        ("localhost:8443/acme/vpc/aws", "registry", "localhost:8443/acme/vpc/aws",
         "localhost:8443", "acme/vpc/aws"),
        ("github.com/hashicorp/example", "remote", "github.com/hashicorp/example", "", None),
        ("github.com/acme/vpc/aws", "remote", "github.com/acme/vpc/aws", "", None),
        ("acme/vpc/AWS", "remote", "acme/vpc/AWS", "", None),
        ("git::https://git.example.com/vpc.git?ref=v1.2.0", "remote",
         "git::https://git.example.com/vpc.git?ref=v1.2.0", "", None),
        ("https://example.com/vpc.zip", "remote", "https://example.com/vpc.zip", "", None),
    ],
)  # fmt: skip
def test_module_sources_are_of_terraforms_three_kinds(
    source: str, kind: str, shown: str, host: str, module: str | None
) -> None:
    read = module_source(source)
    assert (read.kind, read.shown, read.host) == (kind, shown, host)
    assert read.module == (ModuleAddress.parse(*module.split("/")) if module else None)


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        ("git::https://oauth2:glpat-secret@git.example.com/vpc.git?ref=v1",
         "git::https://git.example.com/vpc.git?ref=v1"),
        ("git::https://ghp_token@github.com/acme/vpc.git", "git::https://github.com/acme/vpc.git"),
        ("git::ssh://git@github.com/acme/vpc.git?ref=v1&sshkey=LS0tLS1CRUdJTg",
         "git::ssh://github.com/acme/vpc.git?ref=v1"),
        ("git@github.com:acme/vpc.git?ref=v1", "github.com:acme/vpc.git?ref=v1"),
        ("s3::https://s3.amazonaws.com/b/vpc.zip?aws_access_key_id=AKIA&aws_access_key_secret=x",
         "s3::https://s3.amazonaws.com/b/vpc.zip"),
        ("https://example.com/vpc.zip?archive=zip&token=abc", "https://example.com/vpc.zip?archive=zip"),
        ("https://git.example.com/infra/mono.git", "https://git.example.com/infra/mono.git"),
    ],
)  # fmt: skip
def test_credentials_are_left_out(source: str, shown: str) -> None:
    assert without_credentials(source) == shown
    assert module_source(source).shown == shown
