"""A forge source in registry.yaml, surveyed through gitreg's own lister of that forge: a
stand-in forge over HTTPS (trusted as Git trusts it, by the `credentials` entry's `ca_file`)
lists, a page at a time, repositories that a real `git http-backend` serves over HTTPS with a
token (the `credentials` entry for its URL), and they become modules. A token the forge does not
take is a refusal naming the source, one the Git server does not take a problem naming the
repository, and neither loses what was surveyed."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitreg.git.git_command import CREDENTIALS_WANTED
from gitreg.process.tlscert import TlsMaterial
from gitreg.sources.forge_pages import AT_ONCE_UNCOUNTED
from gitreg.sources.surveys import SourceSurveys
from tests.conftest import WriteCatalog
from tests.support.forge_git import ForgeGit, forge_git
from tests.support.forge_shapes import ForgeKind, ForgeRepository
from tests.support.forges import StandInForge
from tests.support.gitrepo import module_files
from tests.support.servers import GitHttpTap

TOKEN = "forge-t0ken-s3cret"
OWNER = {"gitlab": "platform", "gitea": "platform", "github": "platform", "bitbucket": "TF"}
SCOPE_KEY = {"gitlab": "group", "gitea": "org", "github": "org", "bitbucket": "project"}


def _source(kind: ForgeKind, url: str, served: ForgeGit) -> str:
    where = "api_url" if kind == "github" else "url"
    return (
        f"  - {kind}: {{{where}: '{url}', {SCOPE_KEY[kind]}: {OWNER[kind]}, namespace: infra,"
        f" token_env: FORGE_TOKEN, {served.clone_hosts}}}\n"
    )


@pytest.mark.parametrize("kind", ["gitlab", "gitea", "github", "bitbucket"])
def test_a_forge_source_surveyed_serves_its_repositories_as_modules(
    kind: ForgeKind,
    tmp_path: Path,
    tls: TlsMaterial,
    write_catalog: WriteCatalog,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FORGE_TOKEN", TOKEN)
    tap = GitHttpTap()
    with forge_git(tmp_path, TOKEN, tls, tap) as served:
        owner = OWNER[kind]
        listed = [
            served.publish(f"{owner}/terraform-aws-vpc", [("v1.2.0", module_files("1.2.0"))]),
            ForgeRepository(f"{owner}/docs-site"),  # no module by its name: skipped, not cloned
            served.publish(f"{owner}/terraform-aws-dns", [("v0.1.0", module_files("0.1.0"))]),
        ]
        # A page a repository: the listing is followed over three pages.
        with StandInForge(kind, listed, token=TOKEN, tls=tls, page_size=1) as forge:
            catalog = write_catalog(
                served.credentials(forge.url, "FORGE_TOKEN")
                + "sources:\n"
                + _source(kind, forge.url, served)
            )
            (spec,) = catalog.sources
            sources = SourceSurveys(catalog)
            assert sources.survey(spec, write=False)
            found = sources.last(spec)
            assert found is not None and found.error == "", found
            assert [str(m.spec.address) for m in found.modules] == [
                "infra/vpc/aws",
                "infra/dns/aws",
            ]
            assert [s.repository for s in found.skipped] == [f"{owner}/docs-site"]
            served_catalog = sources.served(catalog)
            assert [str(m.address) for m in served_catalog.modules] == [
                "infra/vpc/aws",
                "infra/dns/aws",
            ]
            # Each module repository's default branch was fetched from the Git server, which
            # takes the token alone: its .gitreg.yaml is read there (none here).
            fetched = {r.split()[1].split(".git/")[0] for r in tap.requests if "upload-pack" in r}
            assert fetched == {f"/{owner}/terraform-aws-vpc", f"/{owner}/terraform-aws-dns"}

            # A token the forge does not take: refused, naming the source; what was found stays.
            monkeypatch.setenv("FORGE_TOKEN", "not-the-token")
            assert not sources.survey(spec, write=False)
            again = sources.last(spec)
            assert again is not None and again.refused, again
            assert again.modules == found.modules
            assert "not accepted" in again.error and forge.url in again.error
            assert TOKEN not in again.error and "not-the-token" not in again.error

            # What the two surveys counted, added up for the source.
            totals = sources.totals(spec)
            assert dict(totals.surveys) == {"ok": 1, "refused": 1}
            # The listing's three pages and the refused request; Bitbucket's pages say no count,
            # so one asked ahead may be past the last.
            past = AT_ONCE_UNCOUNTED - 1 if kind == "bitbucket" else 0
            assert 4 <= totals.api_calls <= 4 + past
            assert (totals.errors, totals.rate_limit_waits) == (1, 0)


def test_a_token_the_git_server_does_not_take_names_the_repository_and_keeps_what_served(
    tmp_path: Path,
    tls: TlsMaterial,
    write_catalog: WriteCatalog,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The forge lists the repository, its Git server refuses the clones' token: a problem naming
    the repository and never the token, skipped the first time, and serving what it served
    once it had been read."""
    monkeypatch.setenv("FORGE_TOKEN", TOKEN)
    monkeypatch.setenv("GIT_TOKEN", "not-the-git-token")
    with forge_git(tmp_path, TOKEN, tls) as served:
        vpc = served.publish("platform/terraform-aws-vpc", [("v1.2.0", module_files("1.2.0"))])
        with StandInForge("gitlab", [vpc], token=TOKEN, tls=tls) as forge:
            catalog = write_catalog(
                served.credentials(forge.url, "GIT_TOKEN")
                + "sources:\n"
                + _source("gitlab", forge.url, served)
            )
            (spec,) = catalog.sources
            sources = SourceSurveys(catalog)
            assert not sources.survey(spec, write=False)
            found = sources.last(spec)
            assert found is not None and found.error == "" and found.modules == (), found
            (problem,) = found.problems
            assert problem == (
                f"platform/terraform-aws-vpc: fetch of main from {vpc.clone_https} failed: "
                + CREDENTIALS_WANTED
            )
            assert "not-the-git-token" not in problem and TOKEN not in problem
            assert [s.repository for s in found.skipped] == ["platform/terraform-aws-vpc"]

            monkeypatch.setenv("GIT_TOKEN", TOKEN)
            assert sources.survey(spec, write=False)
            assert [str(m.address) for m in sources.served(catalog).modules] == ["infra/vpc/aws"]
            monkeypatch.setenv("GIT_TOKEN", "not-the-git-token")
            assert not sources.survey(spec, write=False)
            again = sources.last(spec)
            assert again is not None and len(again.problems) == 1 and again.skipped == ()
            assert [str(m.address) for m in sources.served(catalog).modules] == ["infra/vpc/aws"]
