"""One survey of a folder source over real Git repositories: naming, a monorepo's
`.gitreg.yaml`, filters, removal (keep and hide), the half-a-source guard, and a source that
fails (a stand-in Lister: the forges' own come with their clients)."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from gitreg.catalog.auth_settings import AuthSettings
from gitreg.catalog.specs import ForgeReleases, SourceSpec
from gitreg.sources.declared import DeclarationFiles
from gitreg.sources.folder import FolderLister
from gitreg.sources.found import FoundRepository, SourceRefused, SourceUnavailable
from gitreg.sources.survey import HOLD_CONFIRMATIONS, Survey, survey
from tests.conftest import WriteCatalog
from tests.support.gitrepo import GitRepo

MONOREPO = """\
modules:
  - {name: network, system: aws, path: modules/network}
  - {name: dns, system: aws, path: modules/dns, tags: "dns/v{version}"}
"""


@dataclass
class Folder:
    root: Path
    spec: SourceSpec
    read: DeclarationFiles

    @property
    def cache(self) -> Path:
        return self.read.catalog.cache_dir

    def repository(self, name: str, files: dict[str, str] | None = None) -> GitRepo:
        repo = GitRepo(self.root / name)
        repo.release("v1.0.0", files or {"main.tf": "\n"})
        return repo

    def survey(self, last: Survey | None = None, **changes: object) -> Survey:
        spec = replace(self.spec, **changes)  # type: ignore[arg-type]
        return survey(
            spec, FolderLister(self.root, spec.scope), self.read, last, 1000.0, cache_dir=self.cache
        )


@pytest.fixture
def folder(tmp_path: Path, write_catalog: WriteCatalog) -> Folder:
    root = tmp_path / "srv"
    root.mkdir()
    catalog = write_catalog("sources:\n  - folder: {path: srv, namespace: local}\n")
    return Folder(root, catalog.sources[0], DeclarationFiles(catalog))


def addresses(survey: Survey) -> list[str]:
    return sorted(str(m.spec.address) for m in survey.modules)


def test_names_make_modules_and_the_rest_is_skipped_with_a_reason(folder: Folder) -> None:
    folder.repository("terraform-aws-vpc-peering")
    folder.repository("terraform-google-dns")
    folder.repository("scripts")
    folder.repository("terraform-provider-widget")
    found = folder.survey()
    assert addresses(found) == ["local/dns/google", "local/vpc-peering/aws"]
    assert found.repositories == ("terraform-aws-vpc-peering", "terraform-google-dns")
    assert {s.repository: s.why for s in found.skipped} == {
        "scripts": "its name is not terraform-<SYSTEM>-<NAME>, and it has no .gitreg.yaml"
        " declaring its modules",
        "terraform-provider-widget": "terraform-provider-<TYPE> is a provider's repository, but"
        " a folder source has no releases API: list it under providers: with artifacts",
    }
    vpc = next(m.spec for m in found.modules if m.spec.address.name == "vpc-peering")
    assert vpc.repo.url == str(folder.root / "terraform-aws-vpc-peering")
    assert vpc.tags == folder.spec.tags and found.at == 1000.0


def test_a_monorepo_declares_its_modules_in_gitreg_yaml(folder: Folder) -> None:
    folder.repository("platform-modules", {".gitreg.yaml": MONOREPO, "modules/network/main.tf": ""})
    # .gitreg.yaml wins over the name: this one declares another module than its name would.
    folder.repository("terraform-aws-vpc", {".gitreg.yaml": MONOREPO.split("  - {name: dns")[0]})
    found = folder.survey()
    assert addresses(found) == ["local/dns/aws", "local/network/aws", "local/network/aws"]
    dns = next(m.spec for m in found.modules if m.spec.address.name == "dns")
    assert (dns.path, [str(t) for t in dns.tags]) == ("modules/dns", ["dns/v{version}"])


def test_gitreg_yaml_is_read_at_the_default_branch_only(folder: Folder) -> None:
    repo = folder.repository("tools")
    repo.path.joinpath(".gitreg.yaml").write_text(MONOREPO)  # written, not committed
    assert addresses(folder.survey()) == []


@pytest.mark.parametrize(
    ("declaration", "reason"),
    [
        ("modules:\n  - {name: vpc}\n", "modules[0].system (line 2): is required"),
        (
            "modules:\n  - {name: vpc, system: aws, repo: x}\n",
            "modules[0].repo (line 2): unknown key",
        ),
        ("modules:\n  - {name: vpc, system: aws, namespace: other}\n", "allow_namespaces"),
        ("modules: [\n", "not valid YAML"),
        ("modules: []\n", "declares no module"),
    ],
)
def test_a_refused_gitreg_yaml_names_the_repository_and_the_file(
    folder: Folder, declaration: str, reason: str
) -> None:
    folder.repository("terraform-aws-vpc", {".gitreg.yaml": declaration})
    found = folder.survey()
    assert found.modules == ()
    (problem,) = found.problems
    assert problem.startswith("terraform-aws-vpc: terraform-aws-vpc/.gitreg.yaml is invalid")
    assert reason in problem


def test_a_namespace_the_source_allows(folder: Folder) -> None:
    text = "modules:\n  - {name: vpc, system: aws, namespace: team-net}\n"
    folder.repository("infra", {".gitreg.yaml": text})
    assert addresses(folder.survey(allow_namespaces=("team-*",))) == ["team-net/vpc/aws"]


def test_providers_in_gitreg_yaml_of_a_folder_source_are_said_not_read(folder: Folder) -> None:
    text = "modules:\n  - {name: vpc, system: aws}\nproviders: [{type: widget}]\n"
    folder.repository("infra", {".gitreg.yaml": text})
    found = folder.survey()
    assert addresses(found) == ["local/vpc/aws"] and found.providers == ()
    assert found.notes == (
        "infra/.gitreg.yaml: providers: not read: a folder source has no releases API: list it"
        " under providers: with artifacts",
    )


def test_include_exclude_and_topics(folder: Folder) -> None:
    for name in ("terraform-aws-vpc", "terraform-aws-vpc-old", "terraform-aws-dns"):
        folder.repository(name)
    found = folder.survey(include=("terraform-aws-vpc*",), exclude=("*-old",))
    assert addresses(found) == ["local/vpc/aws"]
    assert {s.repository: s.why for s in found.skipped} == {
        "terraform-aws-dns": "its name matches none of include (terraform-aws-vpc*)",
        "terraform-aws-vpc-old": "its name matches exclude '*-old'",
    }
    # A folder's repositories carry no topics: a topics filter leaves them all out.
    assert folder.survey(topics=("terraform",)).modules == ()


@pytest.mark.parametrize("on_removed", ["keep", "hide"])
def test_a_repository_that_disappears_keeps_its_modules_marked_removed(
    folder: Folder, on_removed: str
) -> None:
    for name in ("terraform-aws-vpc", "terraform-aws-dns", "terraform-aws-nat"):
        folder.repository(name)
    first = folder.survey(on_removed=on_removed)
    shutil.rmtree(folder.root / "terraform-aws-dns")
    second = folder.survey(first, on_removed=on_removed)
    assert addresses(second) == addresses(first)
    (gone,) = [m for m in second.modules if m.removed]
    assert (str(gone.spec.address), gone.hidden) == ("local/dns/aws", on_removed == "hide")
    assert second.removed == ("terraform-aws-dns",)
    assert "terraform-aws-dns" not in second.repositories
    # Back again: served as before, no longer marked.
    folder.repository("terraform-aws-dns")
    assert not any(m.removed for m in folder.survey(second).modules)


def test_a_drop_of_more_than_half_is_held_until_seen_in_a_row(folder: Folder) -> None:
    for name in ("terraform-aws-a", "terraform-aws-b", "terraform-aws-c"):
        folder.repository(name)
    first = folder.survey()
    for name in ("terraform-aws-a", "terraform-aws-b"):
        shutil.rmtree(folder.root / name)
    held = first
    for seen in range(1, HOLD_CONFIRMATIONS):
        held = folder.survey(held)
        assert held.held.startswith("would drop 2 of its 3 repositories at once: held")
        assert f"({seen} of {HOLD_CONFIRMATIONS}" in held.held
        assert (held.modules, held.at) == (first.modules, first.at)
    applied = folder.survey(held)
    assert applied.held == "" and sorted(applied.removed) == ["terraform-aws-a", "terraform-aws-b"]


def test_a_drop_of_half_is_applied_at_once(folder: Folder) -> None:
    for name in ("terraform-aws-a", "terraform-aws-b"):
        folder.repository(name)
    first = folder.survey()
    shutil.rmtree(folder.root / "terraform-aws-a")
    assert folder.survey(first).removed == ("terraform-aws-a",)


@dataclass
class Failing:
    """A source that answers with a fault (the forge clients' stand-in)."""

    fault: Exception

    def repositories(self) -> Sequence[FoundRepository]:
        raise self.fault


def test_a_source_that_fails_keeps_its_last_survey(folder: Folder) -> None:
    folder.repository("terraform-aws-vpc")
    last = folder.survey()
    down = survey(
        folder.spec,
        Failing(SourceUnavailable("503 from the forge", 30)),
        folder.read,
        last,
        2000.0,
        cache_dir=folder.cache,
    )
    assert (down.modules, down.at, down.refused) == (last.modules, last.at, False)
    assert down.error == "unavailable: 503 from the forge"
    refused = survey(
        folder.spec,
        Failing(SourceRefused("401: the token is not taken")),
        folder.read,
        down,
        3000.0,
        cache_dir=folder.cache,
    )
    assert (refused.modules, refused.refused) == (last.modules, True)
    assert refused.error == "refused: 401: the token is not taken"
    back = folder.survey(refused)
    assert (back.error, back.at) == ("", 1000.0)


def test_with_auth_a_monorepo_of_two_namespaces_gets_archives_of_each_folder(
    folder: Folder,
) -> None:
    text = (
        "modules:\n"
        "  - {name: vpc, system: aws, path: modules/vpc}\n"
        "  - {name: dns, system: aws, path: modules/dns, namespace: team-dns}\n"
    )
    folder.repository("infra", {".gitreg.yaml": text})
    spec = replace(folder.spec, allow_namespaces=("team-*",))
    lister = FolderLister(folder.root, spec.scope)
    found = survey(spec, lister, folder.read, None, 1.0, AuthSettings(), cache_dir=folder.cache)
    assert {str(m.spec.address): m.spec.archive for m in found.modules} == {
        "local/vpc/aws": "folder",
        "team-dns/dns/aws": "folder",
    }
    # Without auth: everyone reads everything, and the archive is the repository's.
    open_to_all = survey(spec, lister, folder.read, None, 1.0, cache_dir=folder.cache)
    assert {m.spec.archive for m in open_to_all.modules} == {"repository"}


def test_with_auth_a_module_holding_another_readers_module_is_refused(folder: Folder) -> None:
    text = (
        "modules:\n"
        "  - {name: all, system: aws}\n"
        "  - {name: dns, system: aws, path: modules/dns, namespace: team-dns}\n"
    )
    folder.repository("infra", {".gitreg.yaml": text})
    spec = replace(folder.spec, allow_namespaces=("team-*",))
    lister = FolderLister(folder.root, "*")
    found = survey(spec, lister, folder.read, None, 1.0, AuthSettings(), cache_dir=folder.cache)
    assert found.modules == ()
    (problem,) = found.problems
    assert "modules[0] (line 2): the repository's root holds module team-dns/dns/aws" in problem


def test_a_module_no_longer_declared_is_kept_marked_removed(folder: Folder) -> None:
    repo = folder.repository("infra", {".gitreg.yaml": MONOREPO})
    first = folder.survey()
    repo.write({".gitreg.yaml": MONOREPO.split("  - {name: dns")[0]}).commit()
    second = folder.survey(first)
    assert {str(m.spec.address): m.removed for m in second.modules} == {
        "local/network/aws": False,
        "local/dns/aws": True,
    }


@dataclass
class Archiving:
    """A forge's listing of a folder's repositories, with some of them archived."""

    folder: Path
    archived: set[str]

    def repositories(self) -> Sequence[FoundRepository]:
        listed = FolderLister(self.folder).repositories()
        return [replace(r, archived=r.name in self.archived) for r in listed]


def test_an_archived_repository_keeps_its_modules_marked_removed(folder: Folder) -> None:
    for name in ("terraform-aws-vpc", "terraform-aws-dns"):
        folder.repository(name)
    forge = Archiving(folder.root, set())
    first = survey(folder.spec, forge, folder.read, None, 1.0, cache_dir=folder.cache)
    forge.archived.add("terraform-aws-dns")
    second = survey(folder.spec, forge, folder.read, first, 2.0, cache_dir=folder.cache)
    assert second.removed == ("terraform-aws-dns",)
    assert [s.why for s in second.skipped] == ["archived"]
    # Never served before: archived is a reason to skip it, no more.
    assert [
        m.removed
        for m in survey(folder.spec, forge, folder.read, None, 1.0, cache_dir=folder.cache).modules
    ] == [False]


def test_a_repository_a_filter_now_leaves_out_keeps_its_versions(folder: Folder) -> None:
    for name in ("terraform-aws-vpc", "terraform-aws-dns"):
        folder.repository(name)
    first = folder.survey()
    second = folder.survey(first, exclude=("*-dns",))
    assert second.removed == ("terraform-aws-dns",)


def test_a_provider_repository_is_a_provider_where_the_source_has_releases(folder: Folder) -> None:
    folder.repository("terraform-provider-widget")
    folder.repository("terraform-provider-Wid_get")
    found = folder.survey(kind="gitlab", where="https://gitlab.example.com")
    (widget,) = found.providers
    assert (str(widget.spec), widget.repository) == ("local/widget", "terraform-provider-widget")
    assert widget.spec.releases == ForgeReleases(
        "gitlab", "https://gitlab.example.com", "terraform-provider-widget", None, 300.0
    )
    assert widget.spec.artifacts == folder.cache / "provider-releases" / "local" / "widget"
    assert [(s.repository, s.why) for s in found.skipped] == [
        (
            "terraform-provider-Wid_get",
            "by its name it would be a provider, but the provider type 'Wid_get' may not"
            " contain '_': only a provider's namespace may",
        )
    ]
    # Bitbucket Data Center has no releases: the repository is skipped, saying so.
    on_bitbucket = folder.survey(kind="bitbucket")
    assert on_bitbucket.providers == ()
    assert (
        "terraform-provider-widget",
        "terraform-provider-<TYPE> is a provider's repository,"
        " but Bitbucket Data Center has no releases API: list it under providers: with"
        " artifacts",
    ) in [(s.repository, s.why) for s in on_bitbucket.skipped]


def test_a_provider_no_longer_listed_is_kept_marked_removed(folder: Folder) -> None:
    repo = folder.repository("terraform-provider-widget")
    first = folder.survey(kind="github", where="https://api.github.com")
    shutil.rmtree(repo.path)
    second = folder.survey(first, kind="github", where="https://api.github.com", on_removed="hide")
    (widget,) = second.providers
    assert (widget.removed, widget.hidden) == (True, True)
    assert second.removed == second.hidden == ("terraform-provider-widget",)
