"""A release the check refused (a file that does not match SHA256SUMS) is fetched again: at once
when the forge lists its files otherwise (uploaded again), else an hour after its last fetch;
never at every read. A release that fetched whole is never fetched again."""

from __future__ import annotations

from pathlib import Path

import pgpy
import pytest

from gitreg.catalog.load import load_catalog
from gitreg.process.tlscert import TlsMaterial
from gitreg.providers.fetched_releases import RETRY_EVERY, ReleaseFetcher
from gitreg.providers.hosted import Providers
from tests.support.clock import Clock
from tests.support.forge_providers import (
    PROJECT,
    SECRET,
    TOKEN,
    NoRepositories,
    downloads,
    released,
    write_registry,
)
from tests.support.forge_release_shapes import ForgeRelease
from tests.support.forge_shapes import ForgeKind
from tests.support.forges import StandInForge
from tests.support.provider_releases import new_key, write_key

BROKEN = "terraform-provider-widget_1.1.0_linux_amd64.zip"


@pytest.fixture
def key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> pgpy.PGPKey:
    monkeypatch.setenv("WIDGET_FORGE_TOKEN", TOKEN)
    monkeypatch.setenv("HOOK_SECRET", SECRET)
    signer = new_key("ci")
    write_key(signer, tmp_path / "ci.asc", public=True)
    return signer


def tampered(release: ForgeRelease) -> ForgeRelease:
    files = tuple((n, d + b"tampered" if n == BROKEN else d) for n, d in release.files)
    return ForgeRelease(PROJECT, release.tag, files)


def _providers(
    kind: ForgeKind, tmp_path: Path, forge: StandInForge, tls: TlsMaterial
) -> tuple[Providers, ReleaseFetcher, Clock]:
    """acme/widget's providers, its fetcher on a clock the test moves."""
    catalog = load_catalog(write_registry(tmp_path, forge, tls))
    providers = Providers(catalog, NoRepositories())
    (spec,) = catalog.providers
    clock = Clock()
    fetcher = ReleaseFetcher(spec, catalog.credentials, clock)
    providers.fetchers[spec.key] = fetcher
    return providers, fetcher, clock


def _served(providers: Providers) -> list[str]:
    entry = providers.get("acme", "widget")
    assert entry is not None
    return [r.version for r in entry.releases]


@pytest.mark.parametrize("kind", ["gitea", "github"])  # each lists a file's size
def test_a_refused_release_uploaded_again_is_fetched_again_and_served(
    kind: ForgeKind, tmp_path: Path, tls: TlsMaterial, key: pgpy.PGPKey
) -> None:
    good, fixed = released(tmp_path, key, "1.0.0"), released(tmp_path, key, "1.1.0")
    with StandInForge(kind, token=TOKEN, tls=tls, releases=[good, tampered(fixed)]) as forge:
        providers, fetcher, _ = _providers(kind, tmp_path, forge, tls)
        providers.refresh(poll_forges=True)
        assert _served(providers) == ["1.0.0"]
        first = downloads(forge)
        assert (fetcher.stats.fetched, fetcher.stats.refused) == (2, 1)

        providers.refresh(poll_forges=True)  # listed as before: not fetched again
        assert downloads(forge) == first

        forge.releases = [good, fixed]  # the broken file uploaded again, whole
        providers.refresh(poll_forges=True)
        assert _served(providers) == ["1.1.0", "1.0.0"]
        assert downloads(forge) == first + 5  # that release's five files, and no other
        entry = providers.get("acme", "widget")
        assert entry is not None and entry.problems == ()
        assert (fetcher.stats.fetched, fetcher.stats.refused) == (3, 1)

        providers.refresh(poll_forges=True)  # served whole: never fetched again
        assert downloads(forge) == first + 5
        aside = [p.name for p in fetcher.spec.artifacts.parent.iterdir()]
        assert aside == ["widget"]  # the refused files set aside, then removed


def test_a_release_broken_for_good_is_fetched_again_once_an_hour(
    tmp_path: Path, tls: TlsMaterial, key: pgpy.PGPKey
) -> None:
    broken = tampered(released(tmp_path, key, "1.1.0"))
    with StandInForge("gitlab", token=TOKEN, tls=tls, releases=[broken]) as forge:
        providers, fetcher, clock = _providers("gitlab", tmp_path, forge, tls)
        providers.refresh(poll_forges=True)
        first = downloads(forge)
        assert first == 5
        clock.now += RETRY_EVERY - 1
        providers.refresh(poll_forges=True)
        assert downloads(forge) == first
        clock.now += 1
        providers.refresh(poll_forges=True)
        assert downloads(forge) == 2 * first
        assert (fetcher.stats.fetched, fetcher.stats.refused) == (2, 2)
        assert _served(providers) == []
        entry = providers.get("acme", "widget")
        assert entry is not None
        assert [str(p) for p in entry.problems] == [
            f"1.1.0: {BROKEN} does not match its SHA256SUMS line (corrupt or replaced)"
        ]
