"""Release events parsed (each forge's documented shape, tests/support/webhook_payloads.py), and
the providers whose releases' repository they name, table-driven: GitHub's API root is not where
its repositories are, a GitHub Enterprise Server's is under /api/v3, a GitLab under a path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitreg.catalog.load import load_catalog
from gitreg.freshness.webhooks import PARSERS, matching_providers
from tests.support.webhook_payloads import RELEASE_FORGES


@pytest.mark.parametrize("name", list(RELEASE_FORGES))
def test_a_release_event_names_its_repository_and_is_worth_a_read(name: str) -> None:
    hook = RELEASE_FORGES[name]
    body, headers = hook.request("git.example.com", "acme/terraform-provider-widget", "v1", "s")
    push = PARSERS[hook.name]({k.lower(): v for k, v in headers.items()}, json.loads(body))
    assert push.releases and push.triggers and not push.asks_survey
    assert "https://git.example.com/acme/terraform-provider-widget.git" in push.urls


@pytest.mark.parametrize(
    ("releases", "url", "matches"),
    [
        ("{github: {repo: acme/tp}}", "https://github.com/acme/tp.git", True),
        ("{github: {repo: acme/tp}}", "git@github.com:acme/tp.git", True),
        ("{github: {repo: acme/tp}}", "https://api.github.com/acme/tp", False),
        ("{github: {repo: acme/tp}}", "https://github.com/acme/other", False),
        (
            "{github: {repo: Acme/TP, api_url: 'https://ghe.example/api/v3'}}",
            "https://ghe.example/acme/tp",
            True,
        ),
        (
            "{gitlab: {url: 'https://example.com/gitlab', project: g/sub/tp}}",
            "https://example.com/gitlab/g/sub/tp.git",
            True,
        ),
        ("{gitlab: {url: 'https://example.com', project: g/tp}}", "https://other/g/tp", False),
        (
            "{gitea: {url: 'https://git.example:3000', repo: o/tp}}",
            "https://git.example/o/tp",
            True,
        ),
    ],
)
def test_providers_matched_by_their_releases_repository(
    tmp_path: Path, releases: str, url: str, matches: bool
) -> None:
    (tmp_path / "registry.yaml").write_text(
        f"cache_dir: cache\nproviders:\n  - {{namespace: acme, type: tp, releases: {releases}}}\n"
    )
    catalog = load_catalog(tmp_path / "registry.yaml")
    assert [str(p) for p in matching_providers(catalog, [url])] == (["acme/tp"] if matches else [])
