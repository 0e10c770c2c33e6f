"""A forge's repository declares its modules in `.gitreg.yaml` too: read at its default branch,
fetched into gitreg's clone of it from a real Git server on 127.0.0.1 (git daemon), beside the
tags; a stand-in Lister lists it, as a forge's API would."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gitreg.git.clone import DEFAULT_BRANCH_REF
from gitreg.sources.declared import DeclarationFiles
from gitreg.sources.discovery import discover
from gitreg.sources.found import FoundRepository
from tests.conftest import WriteCatalog
from tests.support.gitrepo import GitRepo, git, module_files
from tests.support.servers import bare_clone, git_daemon

MONOREPO = "modules:\n  - {name: dns, system: aws, path: modules/dns, tags: 'dns/v{version}'}\n"


@dataclass
class Forge:
    """What a forge's API lists: each repository's clone URL and default branch."""

    base: str
    names: tuple[str, ...]

    def repositories(self) -> Sequence[FoundRepository]:
        return [
            FoundRepository(
                name=name,
                path=f"infra/{name}",
                clone_https=f"{self.base}/{name}.git",
                clone_ssh=f"git@git.example.com:infra/{name}.git",
                default_branch="trunk",
            )
            for name in self.names
        ]


def test_a_remote_repository_declares_its_modules_at_its_default_branch(
    tmp_path: Path, write_catalog: WriteCatalog
) -> None:
    catalog = write_catalog(
        "sources:\n  - gitea: {url: https://git.example.com, org: infra, namespace: infra}\n"
    )
    (spec,) = catalog.sources
    served = tmp_path / "served"
    mono = GitRepo(tmp_path / "work" / "platform")
    git(mono.path, "checkout", "-q", "-b", "trunk")
    mono.release("dns/v1.0.0", {".gitreg.yaml": MONOREPO, **module_files("1.0.0", "modules/dns")})
    named = GitRepo(tmp_path / "work" / "terraform-aws-vpc")
    git(named.path, "checkout", "-q", "-b", "trunk")
    named.release("v1.0.0", module_files("1.0.0"))
    for repo in (mono, named):
        bare_clone(repo.path, served / f"{repo.path.name}.git")
    with git_daemon(served) as base:
        forge = Forge(base, ("platform", "terraform-aws-vpc"))
        found = discover(
            spec, forge, DeclarationFiles(catalog), None, 1.0, cache_dir=catalog.cache_dir
        )
    assert found.problems == () and found.skipped == ()
    assert {str(m.spec.address): m.spec.repo.url for m in found.modules} == {
        "infra/dns/aws": f"{base}/platform.git",
        "infra/vpc/aws": f"{base}/terraform-aws-vpc.git",
    }
    dns = next(m.spec for m in found.modules if m.spec.address.name == "dns")
    assert (dns.path, [str(t) for t in dns.tags]) == ("modules/dns", ["dns/v{version}"])
    # The branch is kept in the clone under gitreg's own ref, which the tags' fetch never prunes.
    clones = list((catalog.cache_dir / "git").glob("platform-*.git"))
    assert len(clones) == 1
    assert git(clones[0], "rev-parse", DEFAULT_BRANCH_REF) == git(mono.path, "rev-parse", "trunk")
