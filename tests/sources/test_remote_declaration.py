"""A forge's repository declares its modules in `.gitreg.yaml` too: read at its default branch,
or at its HEAD where the forge names none (Bitbucket), fetched into gitreg's clone of it beside
the tags from a real `git http-backend` over HTTPS with the token of its `credentials` entry; a
stand-in Lister lists it, as a forge's API would."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from gitreg.git.clone import DEFAULT_BRANCH_REF
from gitreg.process.tlscert import TlsMaterial
from gitreg.sources.declared import DeclarationFiles
from gitreg.sources.found import FoundRepository
from gitreg.sources.survey import survey
from tests.conftest import WriteCatalog
from tests.support.forge_git import ForgeGit, forge_git
from tests.support.gitrepo import git, module_files

TOKEN = "git-t0ken-s3cret"
MONOREPO = "modules:\n  - {name: dns, system: aws, path: modules/dns, tags: 'dns/v{version}'}\n"


@dataclass
class Forge:
    """What a forge's API lists: each repository's clone URL, and its default branch unless the
    forge names none (Bitbucket)."""

    served: ForgeGit
    names: tuple[str, ...]
    names_branches: bool = True

    def repositories(self) -> Sequence[FoundRepository]:
        return [
            FoundRepository(
                name=name,
                path=f"infra/{name}",
                clone_https=f"{self.served.url}/infra/{name}.git",
                clone_ssh=f"git@git.example.com:infra/{name}.git",
                default_branch="trunk" if self.names_branches else "",
            )
            for name in self.names
        ]


@pytest.mark.parametrize("names_branches", [True, False], ids=["named", "its HEAD"])
def test_a_remote_repository_declares_its_modules_at_its_default_branch(
    names_branches: bool,
    tmp_path: Path,
    tls: TlsMaterial,
    write_catalog: WriteCatalog,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GIT_TOKEN", TOKEN)
    with forge_git(tmp_path, TOKEN, tls) as served:
        catalog = write_catalog(
            served.credentials("https://git.example.com", "GIT_TOKEN")
            + "sources:\n  - gitea: {url: https://git.example.com, org: infra, namespace: infra,"
            f" {served.clone_hosts}}}\n"
        )
        (spec,) = catalog.sources
        monorepo = {".gitreg.yaml": MONOREPO, **module_files("1.0.0", "modules/dns")}
        served.publish("infra/platform", [("dns/v1.0.0", monorepo)], branch="trunk")
        served.publish("infra/terraform-aws-vpc", [("v1.0.0", module_files("1.0.0"))], "trunk")
        # A branch other than the default declares something else: never read.
        other = served.work / "infra" / "platform"
        git(other, "checkout", "-q", "-b", "elsewhere")
        (other / ".gitreg.yaml").write_text("modules: [1]\n")
        git(other, "commit", "-q", "-am", "not the default branch")
        git(other, "push", "-q", str(served.root / "infra" / "platform.git"), "elsewhere")
        forge = Forge(served, ("platform", "terraform-aws-vpc"), names_branches)
        found = survey(
            spec, forge, DeclarationFiles(catalog), None, 1.0, cache_dir=catalog.cache_dir
        )
    assert found.problems == () and found.skipped == ()
    assert {str(m.spec.address): m.spec.repo.url for m in found.modules} == {
        "infra/dns/aws": f"{served.url}/infra/platform.git",
        "infra/vpc/aws": f"{served.url}/infra/terraform-aws-vpc.git",
    }
    dns = next(m.spec for m in found.modules if m.spec.address.name == "dns")
    assert (dns.path, [str(t) for t in dns.tags]) == ("modules/dns", ["dns/v{version}"])
    # The branch is kept in the clone under gitreg's own ref, which the tags' fetch never prunes.
    clones = list((catalog.cache_dir / "git").glob("platform-*.git"))
    assert len(clones) == 1
    trunk = git(served.root / "infra" / "platform.git", "rev-parse", "trunk")
    assert git(clones[0], "rev-parse", DEFAULT_BRANCH_REF) == trunk


def test_an_empty_repository_declares_nothing_yet(
    tmp_path: Path,
    tls: TlsMaterial,
    write_catalog: WriteCatalog,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A repository with no commit has no HEAD to read: named by the rule, with no versions yet,
    whether or not the forge names a default branch for it."""
    monkeypatch.setenv("GIT_TOKEN", TOKEN)
    with forge_git(tmp_path, TOKEN, tls) as served:
        catalog = write_catalog(
            served.credentials("https://bb.example.com", "GIT_TOKEN")
            + "sources:\n  - bitbucket: {url: https://bb.example.com, project: INFRA,"
            f" namespace: infra, {served.clone_hosts}}}\n"
        )
        (spec,) = catalog.sources
        (served.root / "infra").mkdir()
        git(served.root / "infra", "init", "-q", "--bare", "terraform-aws-new.git")
        forge = Forge(served, ("terraform-aws-new",), False)
        found = survey(
            spec, forge, DeclarationFiles(catalog), None, 1.0, cache_dir=catalog.cache_dir
        )
    assert found.problems == () and found.skipped == ()
    assert [str(m.spec.address) for m in found.modules] == ["infra/new/aws"]
