"""The sources: section of registry.yaml: the five kinds as the issue writes them, their
defaults, and each mistake refused with its key path and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitreg.catalog.secrets import SecretRef
from gitreg.catalog.specs import SourceSpec
from gitreg.tags import TagTemplate
from tests.conftest import WriteCatalog
from tests.support.refused_catalogs import refusal


def test_the_five_kinds_as_the_issue_writes_them(
    write_catalog: WriteCatalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("GITLAB_TOKEN", "GH_TOKEN", "BB_TOKEN"):
        monkeypatch.setenv(name, "stand-in")
    (tmp_path / "gitea-token").write_text("stand-in\n")
    (tmp_path / "git").mkdir()
    catalog = write_catalog(
        """
        sources:
          - gitlab: {url: https://gitlab.example.com, group: platform/terraform, token_env: GITLAB_TOKEN}
          - gitea: {url: https://git.example.com, org: infra, token_file: gitea-token}
          - github: {org: acme, token_env: GH_TOKEN}
          - bitbucket: {url: https://bitbucket.example.com, project: TF, token_env: BB_TOKEN, namespace: tf}
          - folder: {path: git, glob: "*/terraform-*.git", namespace: local}
        """
    )
    gitlab, gitea, github, bitbucket, folder = catalog.sources
    assert gitlab == SourceSpec(
        key_path="sources[0]",
        kind="gitlab",
        where="https://gitlab.example.com",
        scope="platform/terraform",
        namespace="terraform",
        token=SecretRef(env="GITLAB_TOKEN"),
    )
    assert (gitea.kind, gitea.scope, gitea.namespace) == ("gitea", "infra", "infra")
    assert gitea.token == SecretRef(file=tmp_path / "gitea-token")
    assert (github.where, github.namespace) == ("https://api.github.com", "acme")
    assert (bitbucket.scope, bitbucket.namespace) == ("TF", "tf")
    assert (folder.where, folder.scope, folder.token) == (
        str(tmp_path / "git"),
        "*/terraform-*.git",
        None,
    )
    assert (gitlab.interval, gitlab.on_removed, gitlab.clone) == (300.0, "keep", "https")
    assert catalog.modules == ()


def test_every_option_of_a_source(write_catalog: WriteCatalog, tmp_path: Path) -> None:
    (tmp_path / "git").mkdir()
    (source,) = write_catalog(
        """
        sources:
          - folder:
              path: git
              namespace: local
              include: [terraform-*]
              exclude: "*-old"
              topics: [Terraform]
              allow_namespaces: [team-*]
              interval: 30s
              on_removed: hide
              tags: release-{version}
              moved_tags: follow
              deleted_tags: remove
        """
    ).sources
    assert source.include == ("terraform-*",)
    assert source.exclude == ("*-old",)
    assert source.topics == ("terraform",)
    assert source.allow_namespaces == ("team-*",)
    assert (source.interval, source.on_removed, source.scope) == (30.0, "hide", "*")
    assert source.tags == (TagTemplate.parse("release-{version}"),)
    assert (source.moved_tags, source.deleted_tags) == ("follow", "remove")


def test_github_enterprise_and_ssh_clones(write_catalog: WriteCatalog) -> None:
    (source,) = write_catalog(
        "sources:\n  - github: {org: acme, api_url: https://ghe.example.com/api/v3/, clone: ssh}\n"
    ).sources
    assert (source.where, source.clone) == ("https://ghe.example.com/api/v3", "ssh")


@pytest.mark.parametrize(
    ("entry", "path", "line", "reason"),
    [
        ("- {}", "sources[0]", 3, "give one of gitlab, gitea, github, bitbucket, folder"),
        (
            "- {gitea: {url: https://g.example, org: a}, github: {org: a}}",
            "sources[0]",
            3,
            "not gitea, github",
        ),
        ("- svn: {url: https://x}", "sources[0].svn", 3, "unknown key"),
        ("- gitlab: {url: https://x.example}", "sources[0].gitlab.group", 3, "is required"),
        ("- gitlab: {url: ftp://x, group: a}", "sources[0].gitlab.url", 3, "https:// URL"),
        (
            "- gitlab: {url: 'https://me:pw@x.example', group: a}",
            "sources[0].gitlab.url",
            3,
            "must not carry a user or a token",
        ),
        (
            "- gitlab: {url: https://x.example, group: a//b}",
            "sources[0].gitlab.group",
            3,
            "group path",
        ),
        (
            "- gitea: {url: https://x.example, org: a, colour: red}",
            "sources[0].gitea.colour",
            3,
            "unknown key",
        ),
        (
            "- github: {org: acme, token_env: GITREG_TEST_UNSET}",
            "sources[0].github.token_env",
            3,
            "is not set",
        ),
        (
            "- bitbucket: {url: https://b.example, project: TF}",
            "sources[0].bitbucket.namespace",
            3,
            "is required",
        ),
        ("- folder: {path: nowhere, namespace: n}", "sources[0].folder.path", 3, "is not a folder"),
        (
            "- folder: {path: ., glob: ../*, namespace: n}",
            "sources[0].folder.glob",
            3,
            "inside the folder",
        ),
        (
            "- folder: {path: ., namespace: n, token_env: X}",
            "sources[0].folder.token_env",
            3,
            "unknown key",
        ),
        ("- folder: {path: ., namespace: -n}", "sources[0].folder.namespace", 3, "namespace '-n'"),
        ("- github: {org: acme.corp}", "sources[0].github", 3, "give namespace:"),
        ("- github: {org: acme, interval: 5}", "sources[0].github.interval", 3, "has no unit"),
        (
            "- github: {org: acme, on_removed: drop}",
            "sources[0].github.on_removed",
            3,
            "keep, hide",
        ),
        ("- github: {org: acme, clone: git}", "sources[0].github.clone", 3, "https, ssh"),
        ("- github: {org: acme, include: [1]}", "sources[0].github.include", 3, "a pattern"),
        ("- github: {org: acme, clone_hosts: h}", "sources[0].github.clone_hosts", 3, "a list"),
        (
            "- github: {org: acme, clone_hosts: [h, 'https://h']}",
            "sources[0].github.clone_hosts[1]",
            3,
            "'https://h' must be a host name, or host:port",
        ),
        (
            "- github: {org: acme, clone_hosts: ['git@h']}",
            "sources[0].github.clone_hosts[0]",
            3,
            "must be a host name",
        ),
        (
            "- github: {org: acme, clone_hosts: ['h:22x']}",
            "sources[0].github.clone_hosts[0]",
            3,
            "its port must be a number",
        ),
        (
            "- github: {org: acme, clone_hosts: ['[zz]:22']}",
            "sources[0].github.clone_hosts[0]",
            3,
            "must be a host name",
        ),
        (
            "- folder: {path: ., namespace: n, clone_hosts: [h]}",
            "sources[0].folder.clone_hosts",
            3,
            "unknown key",
        ),
        ("- github: {org: acme, tags: 'v{major}'}", "sources[0].github.tags", 3, "version"),
    ],
)
def test_each_mistake_with_its_path_and_line(
    tmp_path: Path, entry: str, path: str, line: int, reason: str
) -> None:
    refused = refusal(tmp_path, f"sources:\n  {entry}\n")
    found = [(p.path, p.line) for p in refused.problems if reason in p.reason]
    assert found == [(path, line)], refused.problems


def test_clone_hosts_are_read_as_host_and_port(write_catalog: WriteCatalog) -> None:
    catalog = write_catalog(
        "sources:\n  - gitea: {url: https://git.example.com, org: infra,"
        " clone_hosts: [SSH.example.com, 'ssh.example.com:2222', '[2001:db8::1]:22']}\n"
    )
    assert catalog.sources[0].clone_hosts == (
        ("ssh.example.com", None),
        ("ssh.example.com", 2222),
        ("2001:db8::1", 22),
    )


def test_a_catalog_of_sources_alone_serves_something(write_catalog: WriteCatalog) -> None:
    assert len(write_catalog("sources:\n  - github: {org: acme}\n").sources) == 1
