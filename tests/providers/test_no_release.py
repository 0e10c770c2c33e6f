"""A hosted provider that serves nothing though no release was refused (none in its folder, or
none a tag fits): a warning, logged once while it stays so (not at each rescan, nor again when a
catalog reload rebuilds the providers)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from gitreg.catalog.load import load_catalog
from gitreg.modules.sync import ModuleSync
from gitreg.providers.hosted import Providers
from tests.support.gitrepo import GitRepo
from tests.support.provider_releases import new_key, write_key, write_release


def test_a_provider_with_no_release_is_logged_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    key = new_key("gitreg")
    write_key(key, tmp_path / "gitreg.asc")
    (tmp_path / "releases").mkdir()
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\nsigning: {keys: [gitreg.asc]}\n"
        "providers:\n  - {namespace: acme, type: widget, artifacts: releases}\n"
    )
    catalog = load_catalog(tmp_path / "registry.yaml")
    sync = ModuleSync(catalog)
    caplog.set_level(logging.INFO, logger="gitreg")

    def warnings() -> list[str]:
        return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]

    providers = Providers(catalog, sync)
    providers.refresh()
    providers.refresh()
    reloaded = Providers(catalog, sync, previous=providers)
    reloaded.refresh()
    expected = (
        f"provider acme/widget has no release in {tmp_path / 'releases'}"
        " (no terraform-provider-widget_VERSION_OS_ARCH.zip)"
    )
    assert warnings() == [expected]
    write_release(tmp_path / "releases", "widget", "1.0.0", signer=key)
    reloaded.refresh()
    (entry,) = reloaded.entries()
    assert entry.warning() is None and [r.version for r in entry.releases] == ["1.0.0"]
    assert warnings() == [expected]


def test_a_gated_provider_whose_releases_no_tag_fits_is_a_warning(tmp_path: Path) -> None:
    key = new_key("gitreg")
    write_key(key, tmp_path / "gitreg.asc")
    write_release(tmp_path / "releases", "widget", "1.0.0", signer=key)
    source = GitRepo(tmp_path / "source")
    source.commit("first")
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\nsigning: {keys: [gitreg.asc]}\nproviders:\n"
        "  - {namespace: acme, type: widget, artifacts: releases, repo: source, tags: 'v{version}'}\n"
    )
    catalog = load_catalog(tmp_path / "registry.yaml")
    sync = ModuleSync(catalog)
    sync.refresh()
    providers = Providers(catalog, sync)
    providers.refresh()
    (entry,) = providers.entries()
    assert entry.warning() == "serves no version: no tag fits v{version} for 1.0.0"
    source.tag("v1.0.0")
    sync.refresh()
    providers.refresh()
    (entry,) = providers.entries()
    assert entry.warning() is None and [r.version for r in entry.releases] == ["1.0.0"]
