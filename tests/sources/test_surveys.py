"""What the sources last surveyed, kept: a source that fails (a stand-in Lister for the forges,
whose clients come apart) keeps its last survey in memory and on disk, a restart serves it,
and the catalog served is registry.yaml's with the found modules settled beside it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from gitreg.catalog.model import Catalog
from gitreg.sources import persisted
from gitreg.sources.folder import FolderLister
from gitreg.sources.found import FoundRepository, SourceRefused, SourceUnavailable
from gitreg.sources.surveys import SourceSurveys
from tests.conftest import WriteCatalog
from tests.support.gitrepo import GitRepo, module_files


@dataclass
class StandIn:
    """A forge as survey sees it: the repositories of a folder, or a fault."""

    folder: Path
    fault: Exception | None = None
    calls: list[int] = field(default_factory=list)

    def repositories(self) -> Sequence[FoundRepository]:
        self.calls.append(1)
        if self.fault is not None:
            raise self.fault
        return FolderLister(self.folder).repositories()


def catalog_of(write_catalog: WriteCatalog, tmp_path: Path) -> Catalog:
    GitRepo(tmp_path / "explicit").release("v0.1.0", module_files("0.1.0"))
    (tmp_path / "srv").mkdir(exist_ok=True)
    return write_catalog(
        f"""
        sources:
          - folder: {{path: srv, namespace: local, on_removed: hide}}
        modules:
          - {{namespace: infra, name: keep, system: generic, repo: {tmp_path / "explicit"}}}
        """
    )


def test_the_catalog_served_holds_what_was_found(
    write_catalog: WriteCatalog, tmp_path: Path
) -> None:
    catalog = catalog_of(write_catalog, tmp_path)
    GitRepo(tmp_path / "srv" / "terraform-aws-vpc").release("v1.0.0", module_files("1.0.0"))
    sources = SourceSurveys(catalog)
    assert sources.served(catalog) is catalog  # nothing surveyed yet
    assert sources.survey(catalog.sources[0]) is True
    served = sources.served(catalog)
    assert [str(m.address) for m in served.modules] == ["infra/keep/generic", "local/vpc/aws"]
    assert sources.survey(catalog.sources[0]) is False  # the same modules: nothing to serve


def test_a_failing_source_keeps_its_last_survey_across_a_restart(
    write_catalog: WriteCatalog, tmp_path: Path
) -> None:
    catalog = catalog_of(write_catalog, tmp_path)
    (spec,) = catalog.sources
    GitRepo(tmp_path / "srv" / "terraform-aws-vpc").release("v1.0.0", module_files("1.0.0"))
    forge = StandIn(tmp_path / "srv")
    sources = SourceSurveys(catalog)
    sources.survey(spec, forge)
    forge.fault = SourceUnavailable("429 Too Many Requests", retry_after=120)
    assert sources.survey(spec, forge) is False
    last = sources.last(spec)
    assert last is not None
    assert (last.error, last.retry_after) == ("unavailable: 429 Too Many Requests", 120)
    # A restart, the forge still down: what was surveyed serves.
    again = SourceSurveys(catalog)
    assert [str(m.address) for m in again.served(catalog).modules][-1] == "local/vpc/aws"
    forge.fault = SourceRefused("401: the token may not read the group")
    again.survey(spec, forge)
    refused = again.last(spec)
    assert refused is not None and refused.refused
    assert refused.error == "refused: 401: the token may not read the group"
    assert [str(m.address) for m in again.served(catalog).modules][-1] == "local/vpc/aws"


def test_the_file_holds_no_secret_and_a_damaged_one_is_surveyed_again(
    write_catalog: WriteCatalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITREG_TEST_HOOK", "hook-secret-value")
    (tmp_path / "srv").mkdir()
    catalog = write_catalog(
        "sources:\n  - folder: {path: srv, namespace: local, webhook: {secret_env: GITREG_TEST_HOOK}}\n"
    )
    GitRepo(tmp_path / "srv" / "terraform-aws-vpc").release("v1.0.0", module_files("1.0.0"))
    SourceSurveys(catalog).survey(catalog.sources[0])
    path = catalog.cache_dir / persisted.FILE
    assert "GITREG_TEST_HOOK" not in path.read_text()
    assert "hook-secret-value" not in path.read_text()
    (restarted,) = SourceSurveys(catalog).served(catalog).modules
    assert restarted.webhook_secret is not None
    assert restarted.webhook_secret.value() == "hook-secret-value"  # the source's, given again
    document = json.loads(path.read_text())
    (stored,) = document["sources"].values()
    assert [m["address"] for m in stored["modules"]] == [["local", "vpc", "aws"]]
    path.write_text("{not json")
    assert SourceSurveys(catalog).last(catalog.sources[0]) is None


def test_hidden_modules_are_served_unlisted(write_catalog: WriteCatalog, tmp_path: Path) -> None:
    catalog = catalog_of(write_catalog, tmp_path)
    (spec,) = catalog.sources
    for name in ("terraform-aws-vpc", "terraform-aws-dns"):
        GitRepo(tmp_path / "srv" / name).release("v1.0.0", module_files("1.0.0"))
    sources = SourceSurveys(catalog)
    sources.survey(spec)
    (tmp_path / "srv" / "terraform-aws-dns").rename(tmp_path / "gone")
    assert sources.survey(spec) is True
    hidden = {str(m.address): m.hidden for m in sources.served(catalog).modules}
    assert hidden == {"infra/keep/generic": False, "local/dns/aws": True, "local/vpc/aws": False}


def test_a_survey_read_back_is_the_one_written(write_catalog: WriteCatalog, tmp_path: Path) -> None:
    catalog = catalog_of(write_catalog, tmp_path)
    (spec,) = catalog.sources
    srv = tmp_path / "srv"
    GitRepo(srv / "terraform-aws-vpc").release("v1.0.0", module_files("1.0.0"))
    GitRepo(srv / "scripts").release("v1.0.0", module_files("1.0.0"))
    monorepo = (
        "modules:\n  - {name: dns, system: aws, path: dns, tags: 'dns/v{version}'}\nproviders: []\n"
    )
    GitRepo(srv / "mono").release("dns/v1.0.0", {".gitreg.yaml": monorepo})
    GitRepo(srv / "broken").release("v1.0.0", {".gitreg.yaml": "modules: {}\n"})
    sources = SourceSurveys(catalog)
    sources.survey(spec)
    (srv / "terraform-aws-vpc").rename(tmp_path / "vpc-gone")
    sources.survey(spec)
    written = sources.last(spec)
    assert written is not None
    assert written.skipped and written.problems and written.notes and written.removed
    assert SourceSurveys(catalog).last(spec) == written


def test_workers_sharing_cache_dir_follow_each_other_and_keep_the_later_survey(
    write_catalog: WriteCatalog, tmp_path: Path
) -> None:
    catalog = catalog_of(write_catalog, tmp_path)
    source = catalog.sources[0]
    GitRepo(tmp_path / "srv" / "terraform-aws-vpc").release("v1.0.0", module_files("1.0.0"))
    clock = [100.0]
    first = SourceSurveys(catalog, clock=lambda: clock[0])
    other = SourceSurveys(catalog, clock=lambda: clock[0])
    assert first.survey(source) is True
    assert other.follow() is True  # what the first found, taken as it is
    assert [str(m.address) for m in other.served(catalog).modules][1:] == ["local/vpc/aws"]

    GitRepo(tmp_path / "srv" / "terraform-aws-dns").release("v1.0.0", module_files("1.0.0"))
    clock[0] = 200.0
    assert other.survey(source) is True
    # The first worker writes again (its own survey, older): the later one is kept on disk.
    older = first.last(source)
    assert older is not None and older.at == 100.0
    persisted.save(catalog.cache_dir, {persisted.identity(source): older})
    stored = persisted.load(catalog.cache_dir, catalog.sources)[persisted.identity(source)]
    assert stored.at == 200.0 and len(stored.modules) == 2
    assert first.follow() is True
    assert other.follow() is False  # nothing later than its own
    assert [str(m.address) for m in first.served(catalog).modules][1:] == [
        "local/dns/aws",
        "local/vpc/aws",
    ]
