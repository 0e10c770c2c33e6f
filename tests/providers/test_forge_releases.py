"""Provider releases read from a forge (GitLab, Gitea/Forgejo, GitHub stand-ins over HTTPS on
127.0.0.1, with real signed goreleaser-style files): fetched once into cache_dir, checked as a
release folder is, served; a refused release reported while the rest serve; the forge down
after a fetch still served; a file on another address never asked; a bad token named."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import pgpy
import pytest

from gitreg.catalog.load import load_catalog
from gitreg.process.tlscert import TlsMaterial
from gitreg.providers.fetched_releases import ReleaseFetcher
from gitreg.providers.forge_releases import ReleaseList
from gitreg.providers.hosted import Providers
from gitreg.sources.found import SourceRefused
from tests.support.clock import Clock
from tests.support.forge_providers import NoRepositories
from tests.support.forge_release_shapes import ForgeRelease
from tests.support.forge_shapes import ForgeKind
from tests.support.forges import StandInForge
from tests.support.provider_releases import new_key, write_key, write_release
from tests.support.refused_catalogs import refusal
from tests.support.servers import run_gitreg
from tests.support.tls_clients import served_over_tls

FORGES: tuple[ForgeKind, ...] = ("gitlab", "gitea", "github")
PROJECT = "acme/terraform-provider-widget"
TOKEN = "forge-token-7f3a"


def released(tmp_path: Path, key: pgpy.PGPKey, version: str, tag: str = "") -> ForgeRelease:
    folder = tmp_path / "built" / version
    write_release(folder, "widget", version, ("linux_amd64", "darwin_arm64"), signer=key)
    return ForgeRelease.of_folder(PROJECT, tag or f"v{version}", folder)


def releases_entry(kind: ForgeKind, url: str) -> str:
    where = {"gitlab": f"url: '{url}', project", "gitea": f"url: '{url}', repo"}
    first = where.get(kind, f"api_url: '{url}', repo")
    return f"{{{kind}: {{{first}: {PROJECT}, token_env: WIDGET_FORGE_TOKEN}}}}"


def write_registry(tmp_path: Path, forge: StandInForge, tls: TlsMaterial) -> Path:
    (tmp_path / "registry.yaml").write_text(
        "hostname: registry.example.test\ncache_dir: cache\n"
        "signing: {verify_keys: [ci.asc]}\n"
        f"credentials:\n  - {{url: '{forge.url}', ca_file: '{tls.ca_cert}'}}\n"
        "mirror: {read_through: false}\n"
        "providers:\n"
        f"  - {{namespace: acme, type: widget, releases: {releases_entry(forge.kind, forge.url + forge.prefix)}}}\n"
    )
    return tmp_path / "registry.yaml"


@pytest.fixture
def key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> pgpy.PGPKey:
    monkeypatch.setenv("WIDGET_FORGE_TOKEN", TOKEN)
    signer = new_key("ci")
    write_key(signer, tmp_path / "ci.asc", public=True)
    return signer


def downloads(forge: StandInForge) -> int:
    """Release files the forge was asked for (GitHub's asset API and their downloads alike)."""
    return sum(1 for a in forge.asked if "/downloads/" in a.target)


@pytest.mark.parametrize("kind", FORGES)
def test_releases_are_fetched_once_and_served(
    kind: ForgeKind, tmp_path: Path, tls: TlsMaterial, key: pgpy.PGPKey
) -> None:
    releases = [released(tmp_path, key, "1.0.0"), released(tmp_path, key, "1.1.0")]
    other = ForgeRelease(PROJECT, "docs-2026", (("notes.txt", b"not a provider release"),))
    prefix = "/api/v3" if kind == "github" else ""
    with StandInForge(
        kind, token=TOKEN, tls=tls, prefix=prefix, releases=[*releases, other]
    ) as forge:
        catalog = load_catalog(write_registry(tmp_path, forge, tls))
        providers = Providers(catalog, NoRepositories())
        providers.refresh(poll_forges=True)
        entry = providers.get("acme", "widget")
        assert entry is not None
        assert [r.version for r in entry.releases] == ["1.1.0", "1.0.0"]
        assert entry.problems == ()
        fetched = downloads(forge)
        assert fetched == 2 * 5  # two zips, SHA256SUMS, its .sig and the manifest, a release
        folder = tmp_path / "cache" / "provider-releases" / "acme" / "widget" / "1.1.0"
        sums = folder / "terraform-provider-widget_1.1.0_SHA256SUMS"
        assert sums.read_bytes() == releases[1].file(sums.name)

        providers.refresh(poll_forges=True)  # the forge is read again; nothing is fetched again
        assert downloads(forge) == fetched
        assert sum(1 for a in forge.asked if a.target.split("?")[0].endswith("/releases")) == 2

        forge.releases = [*forge.releases, released(tmp_path, key, "1.2.0")]
        providers.refresh(poll_forges=True)
        entry = providers.get("acme", "widget")
        assert entry is not None
        assert [r.version for r in entry.releases] == ["1.2.0", "1.1.0", "1.0.0"]
        assert downloads(forge) == fetched + 5
        assert all(TOKEN not in str(p) for p in entry.problems)


def test_served_over_https_by_the_app(tmp_path: Path, tls: TlsMaterial, key: pgpy.PGPKey) -> None:
    release = released(tmp_path, key, "2.0.0")
    with (
        StandInForge("gitlab", token=TOKEN, tls=tls, releases=[release]) as forge,
        served_over_tls(write_registry(tmp_path, forge, tls), tls) as (_, client),
    ):
        versions = client.get("/v1/providers/acme/widget/versions").json()["versions"]
        assert [v["version"] for v in versions] == ["2.0.0"]
        answer = client.get("/v1/providers/acme/widget/2.0.0/download/linux/amd64").json()
        zip_name = "terraform-provider-widget_2.0.0_linux_amd64.zip"
        assert answer["filename"] == zip_name
        data = release.file(zip_name)
        assert data is not None
        assert answer["shasum"] == hashlib.sha256(data).hexdigest()
        assert client.get(answer["download_url"]).content == data
        assert client.get(answer["shasums_signature_url"]).content == release.file(
            "terraform-provider-widget_2.0.0_SHA256SUMS.sig"
        )


def test_a_release_with_a_bad_checksum_is_reported_and_the_others_serve(
    tmp_path: Path, tls: TlsMaterial, key: pgpy.PGPKey
) -> None:
    good = released(tmp_path, key, "1.0.0")
    bad = released(tmp_path, key, "1.1.0")
    broken = "terraform-provider-widget_1.1.0_linux_amd64.zip"
    bad = ForgeRelease(
        PROJECT,
        bad.tag,
        tuple((n, d + b"tampered" if n == broken else d) for n, d in bad.files),
    )
    with StandInForge("gitea", token=TOKEN, tls=tls, releases=[good, bad]) as forge:
        providers = Providers(load_catalog(write_registry(tmp_path, forge, tls)), NoRepositories())
        providers.refresh(poll_forges=True)
        entry = providers.get("acme", "widget")
        assert entry is not None
        assert [r.version for r in entry.releases] == ["1.0.0"]
        assert [str(p) for p in entry.problems] == [
            f"1.1.0: {broken} does not match its SHA256SUMS line (corrupt or replaced)"
        ]


def test_the_forge_down_after_a_fetch_keeps_serving_what_was_fetched(
    tmp_path: Path, tls: TlsMaterial, key: pgpy.PGPKey
) -> None:
    with StandInForge(
        "github", token=TOKEN, tls=tls, releases=[released(tmp_path, key, "1.0.0")]
    ) as forge:
        catalog = load_catalog(write_registry(tmp_path, forge, tls))
        Providers(catalog, NoRepositories()).refresh(poll_forges=True)
    # A restart with the forge gone: what cache_dir holds is served, the forge's fault said.
    providers = Providers(catalog, NoRepositories())
    providers.refresh(poll_forges=True)
    entry = providers.get("acme", "widget")
    assert entry is not None
    assert [r.version for r in entry.releases] == ["1.0.0"]
    (problem,) = entry.problems
    assert problem.version == "*"
    assert f"GitHub {forge.url}" in problem.reason and "cannot be reached" in problem.reason


def test_a_file_on_another_address_is_refused_and_never_asked(
    tmp_path: Path, tls: TlsMaterial, key: pgpy.PGPKey
) -> None:
    good = released(tmp_path, key, "1.0.0")
    with StandInForge("gitlab", tls=tls) as elsewhere:
        away = released(tmp_path, key, "1.1.0")
        sums = "terraform-provider-widget_1.1.0_SHA256SUMS"
        away = ForgeRelease(PROJECT, away.tag, away.files, {sums: f"{elsewhere.url}/{sums}"})
        with StandInForge("gitlab", token=TOKEN, tls=tls, releases=[good, away]) as forge:
            providers = Providers(
                load_catalog(write_registry(tmp_path, forge, tls)), NoRepositories()
            )
            providers.refresh(poll_forges=True)
        assert elsewhere.asked == []
    entry = providers.get("acme", "widget")
    assert entry is not None
    assert [r.version for r in entry.releases] == ["1.0.0"]
    (problem,) = entry.problems
    assert problem.version == "1.1.0"
    assert f"is on https://127.0.0.1:{elsewhere.server.server_address[1]}" in problem.reason
    assert not (tmp_path / "cache" / "provider-releases" / "acme" / "widget" / "1.1.0").exists()


@pytest.mark.parametrize("kind", FORGES)
def test_a_bad_token_names_the_provider_and_its_forge(
    kind: ForgeKind,
    tmp_path: Path,
    tls: TlsMaterial,
    key: pgpy.PGPKey,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WIDGET_FORGE_TOKEN", "not-the-token")
    with StandInForge(
        kind, token=TOKEN, tls=tls, releases=[released(tmp_path, key, "1.0.0")]
    ) as forge:
        providers = Providers(load_catalog(write_registry(tmp_path, forge, tls)), NoRepositories())
        providers.refresh(poll_forges=True)
    entry = providers.get("acme", "widget")
    assert entry is not None and entry.releases == ()
    (problem,) = entry.problems
    name = {"gitlab": "GitLab", "gitea": "Gitea", "github": "GitHub"}[kind]
    assert problem.reason == (
        f"the forge's releases: {name} {forge.url}, releases of {PROJECT} (provider acme/widget):"
        " the token is not accepted (HTTP 401)"
    )
    assert "not-the-token" not in problem.reason


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            "{namespace: acme, type: widget}",
            "providers[0] (line 3): give artifacts (a folder of release files) or releases",
        ),
        (
            "{namespace: acme, type: widget, artifacts: ., releases: {github: {repo: a/b}}}",
            "providers[0] (line 3): give artifacts (a folder of release files) or releases",
        ),
        (
            "{namespace: acme, type: widget, releases: {bitbucket: {url: 'https://b.example'}}}",
            "providers[0].releases.bitbucket (line 3): unknown key",
        ),
        (
            "{namespace: acme, type: widget, releases: {gitlab: {url: 'https://g.example'}}}",
            "providers[0].releases.gitlab.project (line 3): is required",
        ),
        (
            "{namespace: acme, type: widget, releases: {gitea: {url: 'https://g.example', repo: widget}}}",
            "providers[0].releases.gitea.repo (line 3): 'widget' must be owner/name",
        ),
        (
            "{namespace: acme, type: widget, releases: {github: {repo: a/b, api_url: 'ftp://x'}}}",
            "providers[0].releases.github.api_url (line 3): 'ftp://x' is not an http(s) URL",
        ),
        (
            "{namespace: acme, type: widget, releases: {github: {repo: a/b, webhook: {}}}}",
            "providers[0].releases.github.webhook (line 3): give secret_env or secret_file",
        ),
    ],
)
def test_a_provider_entry_with_neither_or_both_or_a_bad_forge_is_refused(
    tmp_path: Path, entry: str, message: str
) -> None:
    assert message in str(refusal(tmp_path, f"providers:\n  - {entry}\n"))


def test_check_names_a_token_the_forge_refuses(
    tmp_path: Path, tls: TlsMaterial, key: pgpy.PGPKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WIDGET_FORGE_TOKEN", "not-the-token")
    release = released(tmp_path, key, "1.0.0")
    with StandInForge("gitea", token=TOKEN, tls=tls, releases=[release]) as forge:
        done = run_gitreg("check", "--config", str(write_registry(tmp_path, forge, tls)))
    assert done.returncode == 1, done.stdout + done.stderr
    assert (
        f"providers[0].releases: acme/widget *: the forge's releases: Gitea {forge.url}, "
        f"releases of {PROJECT} (provider acme/widget): the token is not accepted (HTTP 401)"
    ) in done.stdout
    assert "not-the-token" not in done.stdout + done.stderr


def test_a_fetch_a_crash_cut_short_is_swept_and_fetched_whole(
    tmp_path: Path, tls: TlsMaterial, key: pgpy.PGPKey
) -> None:
    release = released(tmp_path, key, "1.0.0")
    with StandInForge("github", token=TOKEN, tls=tls, releases=[release]) as forge:
        catalog = load_catalog(write_registry(tmp_path, forge, tls))
        left = tmp_path / "cache" / "provider-releases" / "acme" / ".widget_1.0.0.999999999.x.tmp"
        left.mkdir(parents=True)  # by a process gone (no process has that id)
        (left / "terraform-provider-widget_1.0.0_linux_amd64.zip").write_bytes(b"half")
        providers = Providers(catalog, NoRepositories())
        assert not left.exists()
        providers.refresh(poll_forges=True)
    entry = providers.get("acme", "widget")
    assert entry is not None and [r.version for r in entry.releases] == ["1.0.0"]
    assert [p.name for p in (tmp_path / "cache" / "provider-releases" / "acme").iterdir()] == [
        "widget"
    ]


def test_a_download_redirected_to_another_address_is_refused_and_never_asked(
    tmp_path: Path, tls: TlsMaterial, key: pgpy.PGPKey
) -> None:
    with (
        StandInForge("github", tls=tls) as storage,
        StandInForge(
            "github", token=TOKEN, tls=tls, releases=[released(tmp_path, key, "1.0.0")]
        ) as forge,
    ):
        forge.asset_storage = storage.url  # not github.com's storage: not followed
        providers = Providers(load_catalog(write_registry(tmp_path, forge, tls)), NoRepositories())
        providers.refresh(poll_forges=True)
        assert storage.asked == []
    entry = providers.get("acme", "widget")
    assert entry is not None and entry.releases == ()
    (problem,) = entry.problems
    assert problem.version == "1.0.0"
    assert (
        f"a release file is on https://127.0.0.1:{storage.server.server_address[1]}"
        in problem.reason
    )


def test_a_file_over_the_bound_is_refused(
    tmp_path: Path, tls: TlsMaterial, key: pgpy.PGPKey
) -> None:
    release = released(tmp_path, key, "1.0.0")
    with StandInForge("gitlab", token=TOKEN, tls=tls, releases=[release]) as forge:
        catalog = load_catalog(write_registry(tmp_path, forge, tls))
        spec = catalog.providers[0].releases
        assert spec is not None
        listing = ReleaseList(spec, "acme/widget", forge.verify)
        try:
            (listed,) = listing.listed()
            asset = next(a for a in listed.assets if a.name.endswith(".zip"))
            size = len(release.file(asset.name) or b"")
            kept = io.BytesIO()
            listing.download(asset, kept, size, 60.0)  # exactly the bound: fetched
            assert kept.getvalue() == release.file(asset.name)
            with pytest.raises(SourceRefused, match=f"is over {size - 1:,} bytes"):
                listing.download(asset, io.BytesIO(), size - 1, 60.0)
        finally:
            listing.close()


def test_list_shows_where_the_releases_come_from_and_what_is_served(
    tmp_path: Path, tls: TlsMaterial, key: pgpy.PGPKey
) -> None:
    release = released(tmp_path, key, "1.0.0")
    with StandInForge("gitlab", token=TOKEN, tls=tls, releases=[release]) as forge:
        config = str(write_registry(tmp_path, forge, tls))
        with forge.held():  # `list` shows what cache_dir holds: it never waits on a forge
            before = run_gitreg("list", "--config", config)
        assert forge.asked == []
        assert before.returncode == 0, before.stdout + before.stderr
        assert f"{forge.url} ({PROJECT}) not read yet" in before.stdout
        assert run_gitreg("check", "--config", config).returncode == 0  # fetches into cache_dir
        done = run_gitreg("list", "--config", config)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"releases of {PROJECT} on gitlab {forge.url}\n" in done.stdout
    assert "1.0.0" in done.stdout and "darwin_arm64, linux_amd64" in done.stdout
    assert TOKEN not in done.stdout + done.stderr


def test_the_release_list_is_read_once_an_interval_and_a_new_release_appears_after_it(
    tmp_path: Path, tls: TlsMaterial, key: pgpy.PGPKey
) -> None:
    with StandInForge(
        "gitea", token=TOKEN, tls=tls, releases=[released(tmp_path, key, "1.0.0")]
    ) as forge:
        catalog = load_catalog(write_registry(tmp_path, forge, tls))
        (spec,) = catalog.providers
        assert spec.releases is not None and spec.releases.interval == 300.0  # 5m, the default
        clock = Clock()
        fetcher = ReleaseFetcher(spec, catalog.credentials, clock)

        def readings() -> int:
            return sum(1 for a in forge.asked if a.target.split("?")[0].endswith("/releases"))

        assert fetcher.poll() == ()
        forge.releases = [*forge.releases, released(tmp_path, key, "1.1.0")]
        clock.now += 299
        fetcher.poll()
        assert readings() == 1
        assert sorted(p.name for p in spec.artifacts.iterdir()) == ["1.0.0"]
        clock.now += 1
        fetcher.poll()
        assert readings() == 2
        assert sorted(p.name for p in spec.artifacts.iterdir()) == ["1.0.0", "1.1.0"]
