"""A forge source in registry.yaml, discovered through gitreg's own lister of that forge: a
stand-in forge over HTTPS (trusted as Git trusts it, by the `credentials` entry's `ca_file`)
lists repositories that a real Git server on 127.0.0.1 serves, and they become modules; a token
the forge does not take is a refusal naming the source, and nothing discovered is lost."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitreg.sources.discovered import SourceDiscoveries
from gitreg.tlscert import TlsMaterial
from tests.conftest import WriteCatalog
from tests.support.forge_shapes import ForgeKind, ForgeRepository
from tests.support.forges import StandInForge
from tests.support.gitrepo import GitRepo, git, module_files
from tests.support.servers import bare_clone, git_daemon

TOKEN = "forge-t0ken-s3cret"
OWNER = {"gitlab": "platform", "gitea": "platform", "github": "platform", "bitbucket": "TF"}
SCOPE_KEY = {"gitlab": "group", "gitea": "org", "github": "org", "bitbucket": "project"}


def _source(kind: ForgeKind, url: str) -> str:
    where = "api_url" if kind == "github" else "url"
    return (
        f"  - {kind}: {{{where}: '{url}', {SCOPE_KEY[kind]}: {OWNER[kind]}, namespace: infra,"
        " token_env: FORGE_TOKEN}\n"
    )


@pytest.mark.parametrize("kind", ["gitlab", "gitea", "github", "bitbucket"])
def test_a_forge_source_discovers_its_repositories_as_modules(
    kind: ForgeKind,
    tmp_path: Path,
    tls: TlsMaterial,
    write_catalog: WriteCatalog,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    served = tmp_path / "served"
    work = GitRepo(tmp_path / "work" / "terraform-aws-vpc")
    git(work.path, "checkout", "-q", "-b", "main")
    work.release("v1.2.0", module_files("1.2.0"))
    bare_clone(work.path, served / "terraform-aws-vpc.git")
    monkeypatch.setenv("FORGE_TOKEN", TOKEN)
    with git_daemon(served) as base:
        listed = [
            ForgeRepository(
                f"{OWNER[kind]}/terraform-aws-vpc", clone_https=f"{base}/terraform-aws-vpc.git"
            ),
            ForgeRepository(f"{OWNER[kind]}/docs-site"),  # no module by its name: skipped
        ]
        with StandInForge(kind, listed, token=TOKEN, tls=tls) as forge:
            catalog = write_catalog(
                f"credentials:\n  - {{url: '{forge.url}', ca_file: '{tls.ca_cert}'}}\n"
                "sources:\n" + _source(kind, forge.url)
            )
            (spec,) = catalog.sources
            sources = SourceDiscoveries(catalog)
            assert sources.discover(spec, write=False)
            found = sources.last(spec)
            assert found is not None and found.error == "", found
            assert [str(m.spec.address) for m in found.modules] == ["infra/vpc/aws"]
            assert [s.repository for s in found.skipped] == [f"{OWNER[kind]}/docs-site"]
            served_catalog = sources.served(catalog)
            assert [str(m.address) for m in served_catalog.modules] == ["infra/vpc/aws"]

            # A token the forge does not take: refused, naming the source; what was found stays.
            monkeypatch.setenv("FORGE_TOKEN", "not-the-token")
            assert not sources.discover(spec, write=False)
            again = sources.last(spec)
            assert again is not None and again.refused, again
            assert again.modules == found.modules
            assert "not accepted" in again.error and forge.url in again.error
            assert TOKEN not in again.error and "not-the-token" not in again.error

            # What the two discoveries counted, added up for the source.
            totals = sources.totals(spec)
            assert dict(totals.discoveries) == {"ok": 1, "refused": 1}
            assert totals.api_calls >= 2  # the listing's pages, and the refused request
            assert (totals.errors, totals.rate_limit_waits) == (1, 0)
