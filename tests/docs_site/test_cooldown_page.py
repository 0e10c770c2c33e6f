"""docs/cooldown.md's examples, loaded as gitreg reads them: each says what the page says."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitreg.catalog.load import load_catalog
from gitreg.catalog.specs import PublishWhen
from tests.support.site_snippets import claimed

TEST = "test_the_cooldown_page_s_catalogs_hold_what_it_says"
DAY = 86400.0


def test_the_cooldown_page_s_catalogs_hold_what_it_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VPC_CI_TOKEN", "a CI token")
    with claimed("cooldown.md", TEST) as page:
        namespaces = page.take("yaml", "publish_when:\n  - {namespaces")
        entries = page.take("yaml", "modules:")
        tokens = page.take("yaml", "auth:")
        approvals = page.take("yaml", "approvals:")
    (tmp_path / "approvals.yaml").write_text(approvals)
    path = tmp_path / "registry.yaml"
    path.write_text(f"cache_dir: cache\n{namespaces}{entries}{tokens}")
    catalog = load_catalog(path)
    (vpc,) = catalog.modules
    assert vpc.publish_when == PublishWhen(DAY / 2)  # its own wins over its namespace's
    assert catalog.publish_when[0].rule == PublishWhen(2 * DAY, 3 * DAY)
    assert catalog.sources[0].publish_when == PublishWhen(DAY)
    assert catalog.auth is not None and catalog.auth.tokens[0].preview
    (approval,) = vpc.approvals
    assert (approval.version, approval.by) == ("1.4.1", "alice")
