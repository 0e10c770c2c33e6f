"""A consumer's files read for their calls: `module` blocks in every folder, the version each
folder's committed modules.json recorded, and each file that cannot be read named, never the
end of the read."""

from __future__ import annotations

import json
from pathlib import Path

from gitreg.catalog.load import load_catalog
from gitreg.dependents.consumers import ConsumerReads, calls_in
from gitreg.git.trees import DocFile
from tests.support.gitrepo import GitRepo
from tests.support.refused_catalogs import registry_yaml


def _modules_json(*entries: tuple[str, str]) -> bytes:
    modules = [{"Key": key, "Source": "s", "Version": version} for key, version in entries]
    return json.dumps({"Modules": [{"Key": "", "Source": "", "Dir": "."}, *modules]}).encode()


def test_each_call_with_the_version_its_folder_recorded() -> None:
    recorded = _modules_json(("vpc", "1.2.0"), ("vpc.inner", "9.0.0"))  # a nested call: not ours
    files = [
        DocFile("prod/main.tf", b'module "vpc" {\n  source = "a/b/c"\n  version = "~> 1.0"\n}\n'),
        DocFile("prod/.terraform/modules/modules.json", recorded),
        DocFile("stage/main.tf", b'module "vpc" {\n  source = "a/b/c"\n}\n'),
    ]
    sites, problems = calls_in(files, "platform", "live", "abc")
    assert [(s.caller.path, s.call.version, s.recorded) for s in sites] == [
        ("prod/main.tf", "~> 1.0", "1.2.0"),
        ("stage/main.tf", "", ""),
    ]
    assert problems == []


def test_what_cannot_be_read_is_named_and_the_rest_read() -> None:
    files = [
        DocFile(".terraform/modules/modules.json", b"{not json"),
        DocFile("big.tf", None, "larger than 262144 bytes: not read"),
        DocFile("broken.tf", b'module "x" {\n  source =\n'),
        DocFile("latin1.tf", "# caf\xe9\n".encode("latin-1")),
        DocFile("ok.tf", b'module "y" {\n  source = "a/b/c"\n}\n'),
    ]
    sites, problems = calls_in(files, "platform", "live", "abc")
    assert [s.call.name for s in sites] == ["y"]
    assert [(p.path, p.message.split(":")[0]) for p in problems] == [
        (".terraform/modules/modules.json", "not JSON"),
        ("big.tf", "larger than 262144 bytes"),
        ("broken.tf", "syntax error at line 2, column 11"),
        ("latin1.tf", "not UTF-8 text"),
    ]
    assert {p.namespace for p in problems} == {"platform"}


def test_a_folder_of_consumers_is_listed_as_a_source_lists_it(tmp_path: Path) -> None:
    for name in ("live-prod", "live-stage", "other"):
        repo = GitRepo(tmp_path / "git" / name)
        repo.write({"main.tf": f'module "vpc" {{\n  source = "x/{name}/vpc/aws"\n}}\n'})
        repo.commit()
    GitRepo(tmp_path / "git" / "live-empty")  # no commit yet: no branch to read
    catalog = load_catalog(
        registry_yaml(
            tmp_path,
            """
            mirror: {}
            consumers:
              - folder: {path: git, glob: "live-*", namespace: platform}
            """,
        ),
        secrets=(),
    )
    read = ConsumerReads().read(catalog)
    assert read.repositories == 3 and read.problems == ()
    assert sorted((s.caller.name.rsplit("/", 1)[-1], s.call.source) for s in read.sites) == [
        ("live-prod", "x/live-prod/vpc/aws"),
        ("live-stage", "x/live-stage/vpc/aws"),
    ]
    assert {s.caller.namespace for s in read.sites} == {"platform"}


def test_what_cannot_be_read_now_keeps_the_calls_it_had(tmp_path: Path) -> None:
    for name in ("one", "listed/two"):
        repo = GitRepo(tmp_path / name)
        repo.write({"main.tf": f'module "vpc" {{\n  source = "x/{name}/vpc/aws"\n}}\n'})
        repo.commit()
    catalog = load_catalog(
        registry_yaml(
            tmp_path,
            """
            mirror: {}
            consumers:
              - {repo: one, namespace: platform}
              - folder: {path: listed, namespace: platform}
            """,
        ),
        secrets=(),
    )
    reads = ConsumerReads()
    first = reads.read(catalog)
    assert len(first.sites) == 2 and first.problems == ()
    (tmp_path / "one").rename(tmp_path / "one-gone")
    (tmp_path / "listed").rename(tmp_path / "listed-gone")
    again = reads.read(catalog)
    assert again.sites == first.sites
    assert [p.repository for p in again.problems] == [
        str((tmp_path / "one").resolve()),
        "consumers[1] (folder " + str((tmp_path / "listed").resolve()) + " *)",
    ]
