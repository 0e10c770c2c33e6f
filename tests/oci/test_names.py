"""OCI names of modules and providers, tables of good and bad ones; and `gitreg check`, which
names each module whose address cannot be one."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitreg.address import ModuleAddress
from gitreg.oci.names import (
    is_digest,
    is_repository,
    is_tag,
    is_well_formed_digest,
    module_repository,
    provider_repository,
    version_tag,
)
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import run_gitreg


@pytest.mark.parametrize(
    ("address", "repository"),
    [
        (("infra", "vpc", "aws"), "infra/vpc/aws"),
        (("Infra", "VPC", "aws"), "infra/vpc/aws"),
        (("team-a", "net_work", "aws"), "team-a/net_work/aws"),
        (("a--b", "x__y", "gcp"), "a--b/x__y/gcp"),
    ],
)
def test_module_repositories(address: tuple[str, str, str], repository: str) -> None:
    assert module_repository(ModuleAddress.parse(*address)) == repository


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        (("providers", "vpc", "aws"), "holds the providers' repositories"),
        (("infra", "a_-b", "aws"), "its name 'a_-b' has '_' beside '-'"),
        (("in-_fra", "vpc", "aws"), "its namespace 'in-_fra'"),
        (("infra", "a___b", "aws"), "three '_' in a row"),
    ],
)
def test_addresses_that_cannot_be_oci_names(address: tuple[str, str, str], reason: str) -> None:
    with pytest.raises(ValueError, match="cannot be an OCI repository") as caught:
        module_repository(ModuleAddress.parse(*address))
    assert reason in str(caught.value)


def test_provider_repositories_and_tags() -> None:
    assert provider_repository("Acme", "widget") == "providers/acme/widget"
    assert provider_repository("Acme_Corp", "widget") == "providers/acme_corp/widget"
    assert provider_repository("a_-b", "widget") is None  # Terraform takes it, OCI cannot
    assert is_repository("mirror/example.com/acme_corp/widget")
    assert not is_repository("providers/a_-b/widget") and not is_repository("a___b/x/y")
    assert version_tag("1.2.0+build.7") == "1.2.0_build.7"
    assert is_tag("1.2.0_build.7") and is_tag("latest") and not is_tag("1.2.0+x")
    assert not is_tag("-1") and not is_tag("x" * 129)
    assert is_digest("sha256:" + "a" * 64)
    assert not is_digest("sha256:" + "A" * 64) and not is_digest("sha512:" + "a" * 128)


@pytest.mark.parametrize(
    ("reference", "well_formed"),
    [
        ("sha256:" + "a" * 64, True),
        ("sha512:" + "0" * 128, True),
        ("blake3:abc", True),  # an algorithm the spec does not register: its grammar alone
        ("multi+part.alg_x:AbC=_-", True),
        ("sha256:" + "a" * 63, False),
        ("sha256:" + "A" * 64, False),
        ("sha512:" + "a" * 64, False),
        ("SHA256:" + "a" * 64, False),
        ("sha256:", False),
        (":abc", False),
        ("latest", False),
        ("x:" + "a" * 300, False),
    ],
)
def test_well_formed_digests(reference: str, well_formed: bool) -> None:
    assert is_well_formed_digest(reference) is well_formed


def test_check_names_a_module_that_cannot_be_an_oci_name(tmp_path: Path) -> None:
    GitRepo(tmp_path / "vpc").release("v1.0.0", module_files("1.0.0"))
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\noci: {enabled: true}\nmodules:\n"
        "  - {namespace: infra, name: vpc, system: aws, repo: vpc}\n"
        "  - {namespace: infra, name: a_-b, system: aws, repo: vpc}\n"
    )
    done = run_gitreg("check", "--config", str(tmp_path / "registry.yaml"))
    assert done.returncode == 1, done.stdout
    assert "modules[1]: module infra/a_-b/aws cannot be an OCI repository" in done.stdout
    assert "1 problems" in done.stdout
