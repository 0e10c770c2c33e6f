"""Which `module` sources name this registry's modules: a table of sources as people write them,
by registry address (hostname, public_url's host) and by Git (every form Terraform reads as
Git), and of sources that name something else; credentials never shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitreg.address import ModuleAddress
from gitreg.catalog.specs import ModuleSpec
from gitreg.dependents.sources import RegistrySources, Target, shown, split_git
from gitreg.git.location import RepoLocation

VPC = ("platform", "vpc", "aws")
DNS = ("platform", "dns", "aws")


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> RegistrySources:
    local = tmp_path_factory.mktemp("mono")
    mono = RepoLocation("https://git.example.com/infra/mono.git", "https")
    specs = [
        ModuleSpec(ModuleAddress(*VPC), mono, path="modules/vpc"),
        ModuleSpec(
            ModuleAddress(*DNS),
            RepoLocation(str(local), "local"),
            git_url="ssh://git@git.example.com:2222/infra/dns.git",
        ),
    ]
    return RegistrySources(["registry.example.com", "tf.example.com:8443"], specs)


@pytest.mark.parametrize(
    ("source", "target"),
    [
        ("registry.example.com/platform/vpc/aws", Target((VPC,), by_git=False)),
        ("Registry.Example.com/Platform/VPC/aws", Target((VPC,), by_git=False)),
        ("tf.example.com:8443/platform/vpc/aws//sub", Target((VPC,), by_git=False, folder="sub")),
        (
            "git::https://git.example.com/infra/mono.git//modules/vpc?ref=vpc/v1.0.0",
            Target((VPC,), by_git=True, ref="vpc/v1.0.0"),
        ),
        (
            "git::https://oauth2:secret@GIT.example.com/Infra/Mono//modules/vpc/inner?ref=abc1234",
            Target((VPC,), by_git=True, ref="abc1234"),
        ),
        (
            "git::ssh://git@git.example.com/infra/mono.git//modules/vpc",
            Target((VPC,), by_git=True),
        ),
        ("git@git.example.com:infra/mono.git//modules/vpc?ref=v1", Target((VPC,), True, "v1")),
        ("https://git.example.com/infra/mono.git//modules/vpc", Target((VPC,), by_git=True)),
        ("git::ssh://git@git.example.com:2222/infra/dns.git?ref=v2", Target((DNS,), True, "v2")),
    ],
)
def test_sources_that_name_a_module_here(
    sources: RegistrySources, source: str, target: Target
) -> None:
    assert sources.target(source) == target


@pytest.mark.parametrize(
    "source",
    [
        "platform/vpc/aws",  # the public registry's
        "registry.terraform.io/platform/vpc/aws",
        "registry.example.com/platform/vpc",  # three parts
        "registry.example.com/platform/vpc/AWS_X",
        "./modules/vpc",
        "../vpc",
        "git::https://git.example.com/infra/mono.git//modules/other?ref=v1",  # no module there
        "git::https://git.example.com/infra/mono.git",  # its root is no module
        "git::https://git.example.com/infra/other.git//modules/vpc",
        "hg::https://git.example.com/infra/mono.git//modules/vpc",
        "https://git.example.com/infra/mono.tar.gz//modules/vpc",  # an archive over HTTP
        "s3::https://bucket.s3.amazonaws.com/vpc.zip",
        "",
    ],
)
def test_sources_that_name_nothing_here(sources: RegistrySources, source: str) -> None:
    assert sources.target(source) is None


def test_a_git_source_splits_as_go_getter_splits_it() -> None:
    assert split_git("https://h/r.git//a/b?ref=v1&depth=1") == ("https://h/r.git", "a/b", "v1")
    assert split_git("git@h:r.git//a?ref=x") == ("git@h:r.git", "a", "x")
    assert split_git("github.com/acme/vpc//m") == ("https://github.com/acme/vpc", "m", "")


def test_a_shown_source_carries_no_credential() -> None:
    assert shown("git::https://oauth2:glpat-123@git.example.com/x.git") == (
        "git::https://***@git.example.com/x.git"
    )
    assert "s3cr3t" not in shown("git::ssh://git@h/x.git?sshkey=s3cr3t&ref=v1")
    assert shown("registry.example.com/a/b/c") == "registry.example.com/a/b/c"


def test_a_local_repository_is_named_by_a_file_url(tmp_path: Path) -> None:
    spec = ModuleSpec(ModuleAddress(*VPC), RepoLocation(str(tmp_path.resolve()), "local"))
    sources = RegistrySources(["registry.example.com"], [spec])
    assert sources.target(f"git::file://{tmp_path}?ref=v1") == Target((VPC,), True, "v1")
    assert sources.target(f"git::file://{tmp_path}/.git?ref=v1") == Target((VPC,), True, "v1")
