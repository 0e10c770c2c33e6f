"""The `consumers:` section: a repository with its namespace, or a group listed as `sources:`
lists one; every problem refused with its key path and line."""

from __future__ import annotations

from pathlib import Path

from gitreg.catalog.load import load_catalog
from tests.support.refused_catalogs import assert_refused, refusal, registry_yaml


def test_a_repository_and_a_listed_group_are_read(tmp_path: Path) -> None:
    (tmp_path / "live").mkdir()
    catalog = load_catalog(
        registry_yaml(
            tmp_path,
            """
            mirror: {}
            consumers:
              - {repo: live, namespace: platform, branch: prod, interval: 10m}
              - gitlab: {url: "https://gitlab.example.com", group: infra/live}
            """,
        ),
        secrets=(),
    )
    local, listed = catalog.consumers
    assert local.repo is not None and local.repo.url == str((tmp_path / "live").resolve())
    assert (local.namespace, local.branch, local.interval) == ("platform", "prod", 600.0)
    assert listed.source is not None and listed.source.scope == "infra/live"
    assert listed.namespace == "live" and listed.key_path == "consumers[1]"


def test_every_problem_is_refused_with_its_key_path(tmp_path: Path) -> None:
    error = refusal(
        tmp_path,
        """
        mirror: {}
        consumers:
          - {repo: "https://git.example.com/live.git"}
          - {repo: "https://git.example.com/live.git", namespace: "a b"}
          - {repo: "https://git.example.com/live.git", folder: {path: ., namespace: x}}
          - gitlab: {url: "https://gitlab.example.com", group: g, tags: "v{version}"}
            namespace: platform
          - {repo: "https://user:t0ken@git.example.com/live.git", namespace: x}
        """,
    )
    assert_refused(error, "consumers[0]", 5, "give namespace:")
    assert_refused(error, "consumers[1].namespace", 6, "namespace 'a b' must be")
    assert_refused(error, "consumers[2]", 7, "give one of repo, gitlab")
    assert_refused(error, "consumers[3].gitlab.tags", 8, "unknown key")
    assert_refused(error, "consumers[3].namespace", 9, "inside the source's own mapping")
    assert_refused(error, "consumers[4].repo", 10, "must not carry a password or token")
