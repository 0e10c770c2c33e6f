"""Providers surveyed on a forge (GitLab, Gitea/Forgejo, GitHub stand-ins over HTTPS on
127.0.0.1, the repositories served by a real Git server): a `terraform-provider-<TYPE>`
repository by its name, a repository's `.gitreg.yaml` `providers:`, their releases fetched from
the forge and served; two repositories claiming one provider serve neither; registry.yaml's own
entry wins; a repository gone from the source keeps serving what was fetched, its forge no
longer asked; a restart reads what was surveyed from cache_dir/sources.json."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import unquote

import httpx
import pgpy
import pytest

from gitreg.catalog.model import Catalog
from gitreg.process.tlscert import TlsMaterial
from gitreg.providers.hosted import Providers
from gitreg.sources.surveys import SourceSurveys
from gitreg.web.providers import deprecation_warnings
from tests.conftest import WriteCatalog
from tests.support.forge_providers import NoRepositories
from tests.support.forge_release_shapes import ForgeRelease
from tests.support.forge_shapes import ForgeKind, ForgeRepository
from tests.support.forges import StandInForge
from tests.support.gitrepo import GitRepo
from tests.support.provider_releases import new_key, write_key, write_release
from tests.support.servers import RegistryServer, bare_clone, git_daemon, run_gitreg, wait_until
from tests.support.site_snippets import claimed
from tests.support.webhook_payloads import RELEASE_FORGES

FORGES: tuple[ForgeKind, ...] = ("gitlab", "gitea", "github")
TOKEN = "forge-t0ken-pr0v"
SCOPE_KEY = {"gitlab": "group", "gitea": "org", "github": "org"}
VERSIONS = "/v1/providers/acme/widget/versions"


@dataclass
class Platform:
    """A stand-in forge listing the group `platform`, whose repositories a git daemon serves,
    and the signing key CI signs releases with."""

    forge: StandInForge
    base: str  # the git daemon's URL
    work: Path
    served: Path
    key: pgpy.PGPKey

    def repository(self, name: str, files: dict[str, str] | None = None) -> ForgeRepository:
        """A repository `platform/NAME` on the Git server, with a first commit on main."""
        repo = GitRepo(self.work / name)
        repo.write(files or {"main.go": "package main\n"}).commit()
        bare_clone(repo.path, self.served / f"{name}.git")
        return ForgeRepository(f"platform/{name}", clone_https=f"{self.base}/{name}.git")

    def release(self, project: str, kind: str, version: str) -> ForgeRelease:
        folder = self.work / "built" / project / version
        write_release(folder, kind, version, ("linux_amd64",), signer=self.key)
        return ForgeRelease.of_folder(project, f"v{version}", folder)

    def catalog(self, write_catalog: WriteCatalog, tls: TlsMaterial, extra: str = "") -> Catalog:
        kind = self.forge.kind
        where = "api_url" if kind == "github" else "url"
        return write_catalog(
            "signing: {verify_keys: [ci.asc]}\n"
            "mirror: {read_through: false}\n"
            f"credentials:\n  - {{url: '{self.forge.url}', ca_file: '{tls.ca_cert}'}}\n"
            "sources:\n"
            f"  - {kind}: {{{where}: '{self.forge.url}', {SCOPE_KEY[kind]}: platform,"
            " namespace: acme, token_env: FORGE_TOKEN}\n" + extra
        )


@contextmanager
def platform(
    kind: ForgeKind, tmp_path: Path, tls: TlsMaterial, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Platform]:
    monkeypatch.setenv("FORGE_TOKEN", TOKEN)
    key = new_key("ci")
    write_key(key, tmp_path / "ci.asc", public=True)
    served = tmp_path / "served"
    served.mkdir()
    with (
        git_daemon(served) as base,
        StandInForge(kind, token=TOKEN, tls=tls) as forge,
    ):
        yield Platform(forge, base, tmp_path / "work", served, key)


def served_versions(catalog: Catalog, previous: Providers | None = None) -> Providers:
    providers = Providers(catalog, NoRepositories(), previous=previous)
    providers.refresh(poll_forges=True)
    return providers


def versions(providers: Providers, namespace: str, kind: str) -> list[str]:
    entry = providers.get(namespace, kind)
    return [r.version for r in entry.releases] if entry else []


def release_lists(forge: StandInForge) -> int:
    return sum(1 for a in forge.asked if a.target.split("?")[0].endswith("/releases"))


@pytest.mark.parametrize("kind", FORGES)
def test_a_provider_repository_and_a_declared_one_are_served_from_their_releases(
    kind: ForgeKind,
    tmp_path: Path,
    tls: TlsMaterial,
    write_catalog: WriteCatalog,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with platform(kind, tmp_path, tls, monkeypatch) as p:
        test = "test_a_provider_repository_and_a_declared_one_are_served_from_their_releases"
        with claimed("sources.md", test) as page:
            declared = page.take("yaml", "type: gadget")
        p.forge.repositories = [
            p.repository("terraform-provider-widget"),
            p.repository("tools", {".gitreg.yaml": declared}),
            p.repository("terraform-provider-fresh"),  # no release yet
        ]
        gadget = p.release("platform/tools", "gadget", "0.3.0")
        p.forge.releases = [
            p.release("platform/terraform-provider-widget", "widget", "1.0.0"),
            ForgeRelease(gadget.project, "gadget-v0.3.0", gadget.files),
        ]
        catalog = p.catalog(write_catalog, tls)
        (source,) = catalog.sources
        sources = SourceSurveys(catalog)
        assert sources.survey(source)
        found = sources.last(source)
        assert found is not None and found.error == "" and found.problems == (), found
        assert sorted(str(d.spec) for d in found.providers) == [
            "acme/fresh",
            "acme/gadget",
            "acme/gizmo",
            "acme/widget",
        ]
        served = sources.served(catalog)
        widget = next(s for s in served.providers if s.type == "widget")
        assert widget.releases is not None
        assert (widget.releases.kind, widget.releases.project) == (
            kind,
            "platform/terraform-provider-widget",
        )
        assert widget.artifacts == catalog.cache_dir / "provider-releases" / "acme" / "widget"

        providers = served_versions(served)
        assert versions(providers, "acme", "widget") == ["1.0.0"]
        assert versions(providers, "acme", "gadget") == ["0.3.0"]
        fresh = providers.get("acme", "fresh")
        assert fresh is not None and fresh.releases == () and fresh.problems == ()
        assert (fresh.warning() or "").startswith(f"has no release on {p.forge.url}")
        assert not any(TOKEN in str(problem) for e in providers.entries() for problem in e.problems)

        # A restart reads them from cache_dir/sources.json, the forge not asked.
        again = SourceSurveys(catalog).served(catalog)
        assert sorted(map(str, again.providers)) == sorted(map(str, served.providers))
        assert {s.releases for s in again.providers} == {s.releases for s in served.providers}


@pytest.mark.parametrize("kind", FORGES)
def test_two_claims_serve_neither_and_registry_yaml_wins(
    kind: ForgeKind,
    tmp_path: Path,
    tls: TlsMaterial,
    write_catalog: WriteCatalog,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with platform(kind, tmp_path, tls, monkeypatch) as p:
        p.forge.repositories = [
            p.repository("terraform-provider-widget"),
            p.repository("widgets", {".gitreg.yaml": "providers: [{type: widget}]\n"}),
            p.repository("terraform-provider-gadget"),
        ]
        (tmp_path / "gadget").mkdir()
        own = "providers:\n  - {namespace: acme, type: gadget, artifacts: gadget}\n"
        catalog = p.catalog(write_catalog, tls, own)
        (source,) = catalog.sources
        sources = SourceSurveys(catalog)
        sources.survey(source, write=False)
        served = sources.served(catalog)
        assert [(str(s), s.artifacts) for s in served.providers] == [
            ("acme/gadget", tmp_path / "gadget")  # registry.yaml's own entry
        ]
        settled = sources.settlement
        assert settled.problems() == [
            "provider acme/widget is claimed by sources[0] platform/terraform-provider-widget"
            " and by sources[0] platform/widgets: neither is served until one of them stops"
            " claiming it"
        ]
        assert [str(p.spec) for p in settled.shadowed_providers] == ["acme/gadget"]
        if kind != "gitlab":
            return  # `gitreg check` says it alike for every forge: once is enough
        done = run_gitreg("check", "--config", str(catalog.source))
        assert done.returncode == 1, done.stdout + done.stderr
        lines = done.stdout.splitlines()
        assert f"sources: {settled.problems()[0]}" in lines
        assert (
            "warning: sources[0]: provider acme/gadget (platform/terraform-provider-gadget) set"
            " aside: registry.yaml's providers[0] lists it"
        ) in lines
        assert TOKEN not in done.stdout + done.stderr


@pytest.mark.parametrize("kind", FORGES)
def test_a_repository_gone_from_its_source_keeps_serving_what_was_fetched(
    kind: ForgeKind,
    tmp_path: Path,
    tls: TlsMaterial,
    write_catalog: WriteCatalog,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with platform(kind, tmp_path, tls, monkeypatch) as p:
        p.forge.repositories = [p.repository("terraform-provider-widget")]
        p.forge.releases = [p.release("platform/terraform-provider-widget", "widget", "1.0.0")]
        catalog = p.catalog(write_catalog, tls)
        (source,) = catalog.sources
        sources = SourceSurveys(catalog)
        sources.survey(source)
        providers = served_versions(sources.served(catalog))
        assert versions(providers, "acme", "widget") == ["1.0.0"]

        p.forge.groups.add("platform")  # the group stays, empty
        p.forge.repositories = []
        p.forge.releases = []
        assert sources.survey(source)
        found = sources.last(source)
        assert found is not None and found.removed == ("platform/terraform-provider-widget",)
        served = sources.served(catalog)
        (widget,) = served.providers
        assert widget.removed and not widget.hidden
        asked = release_lists(p.forge)
        providers = served_versions(served, previous=providers)
        assert versions(providers, "acme", "widget") == ["1.0.0"]
        entry = providers.get("acme", "widget")
        assert entry is not None and entry.problems == ()
        assert release_lists(p.forge) == asked  # its forge is no longer asked
        listed = run_gitreg("list", "--offline", "--config", str(catalog.source)).stdout
        lines = listed.splitlines()
        at = lines.index("  127.0.0.1:8443/acme/widget")
        assert lines[at + 2] == "    removed from its source: what was fetched still serves"
        assert lines[at + 3].startswith("    1.0.0 ")
        assert (
            "    removed platform/terraform-provider-widget: its published versions still serve"
            in lines
        )
        if kind != "gitlab":
            return  # the app shows it alike for every forge: once is enough
        # The app: its page says so, the status marks it, and its versions still serve.
        with RegistryServer(catalog) as server, httpx.Client(base_url=server.url) as client:
            wait_until(lambda: client.get(VERSIONS).status_code == 200, 30, "widget served")
            assert 'id="banner-removed"' in client.get("/providers/acme/widget").text
            status = client.get("/v1/status").json()
            assert [(p["provider"], p["removed"]) for p in status["providers"]] == [
                ("acme/widget", True)
            ]
            assert "/providers/acme/widget" in client.get("/").text
        # on_removed: hide leaves it out of lists; Terraform still finds its versions.
        hide = catalog.source.read_text().replace("token_env:", "on_removed: hide, token_env:")
        catalog = write_catalog(hide)
        with RegistryServer(catalog) as server, httpx.Client(base_url=server.url) as client:
            wait_until(lambda: client.get(VERSIONS).status_code == 200, 30, "widget served")
            assert "/providers/acme/widget" not in client.get("/").text


def test_a_new_provider_repository_is_served_within_the_interval(
    tmp_path: Path, tls: TlsMaterial, write_catalog: WriteCatalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    with platform("gitlab", tmp_path, tls, monkeypatch) as p:
        p.forge.repositories = [p.repository("terraform-provider-gadget")]
        catalog = p.catalog(write_catalog, tls)
        text = catalog.source.read_text().replace("token_env:", "interval: 1s, token_env:")
        catalog = write_catalog(text)
        with (
            RegistryServer(catalog, refresh=True) as server,
            httpx.Client(base_url=server.url) as client,
        ):
            wait_until(
                lambda: client.get("/providers/acme/gadget").status_code == 200, 30, "gadget"
            )
            assert client.get(VERSIONS).status_code == 404
            p.forge.repositories = [
                *p.forge.repositories,
                p.repository("terraform-provider-widget"),
            ]
            p.forge.releases = [p.release("platform/terraform-provider-widget", "widget", "1.0.0")]
            wait_until(lambda: client.get(VERSIONS).status_code == 200, 30, "widget served")
            assert [v["version"] for v in client.get(VERSIONS).json()["versions"]] == ["1.0.0"]


def test_a_release_event_signed_with_the_source_secret_reads_a_found_provider_at_once(
    tmp_path: Path, tls: TlsMaterial, write_catalog: WriteCatalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOURCE_HOOK_SECRET", "source-hook-s3cret")
    with platform("gitlab", tmp_path, tls, monkeypatch) as p:
        p.forge.repositories = [p.repository("terraform-provider-widget")]
        catalog = p.catalog(write_catalog, tls)
        text = catalog.source.read_text().replace(
            "token_env:", "interval: 1h, webhook: {secret_env: SOURCE_HOOK_SECRET}, token_env:"
        )
        catalog = write_catalog(text)
        with (
            RegistryServer(catalog, refresh=True) as server,
            httpx.Client(base_url=server.url) as client,
        ):
            wait_until(lambda: client.get("/providers/acme/widget").status_code == 200, 30, "page")
            p.forge.releases = [p.release("platform/terraform-provider-widget", "widget", "1.0.0")]
            host = p.forge.url.removeprefix("https://")
            project = "platform/terraform-provider-widget"
            body, headers = RELEASE_FORGES["gitlab"].request(host, project, "v1.0.0", "wrong")
            refused = client.post("/v1/webhooks/gitlab", content=body, headers=headers)
            assert refused.status_code == 401, refused.text
            body, headers = RELEASE_FORGES["gitlab"].request(
                host, project, "v1.0.0", "source-hook-s3cret"
            )
            delivered = client.post("/v1/webhooks/gitlab", content=body, headers=headers)
            assert delivered.status_code == 202, delivered.text
            assert delivered.json()["releases"] == ["acme/widget"]
            wait_until(lambda: client.get(VERSIONS).status_code == 200, 30, "widget 1.0.0")
            assert [v["version"] for v in client.get(VERSIONS).json()["versions"]] == ["1.0.0"]


@pytest.mark.parametrize("kind", FORGES)
def test_a_release_tag_s_own_line_deprecates_its_version(
    kind: ForgeKind,
    tmp_path: Path,
    tls: TlsMaterial,
    write_catalog: WriteCatalog,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`.gitreg.yaml` at a release's tag, asked of the forge once a release and kept in its
    folder: its `deprecated:` line deprecates that version; the default branch's list wins."""
    branch = (
        "providers:\n  - type: widget\n"
        "    deprecated: [{versions: '0.9.0', reason: 'The branch says.'}]\n"
    )
    with platform(kind, tmp_path, tls, monkeypatch) as p:
        p.forge.repositories = [p.repository("terraform-provider-widget", {".gitreg.yaml": branch})]
        project = "platform/terraform-provider-widget"
        said = {"0.9.0": b"deprecated: The tag says.\n", "1.0.0": b"deprecated: Use 1.1.0.\n"}
        p.forge.releases = [
            replace(p.release(project, "widget", v), tree=((".gitreg.yaml", said[v]),))
            for v in ("0.9.0", "1.0.0")
        ] + [p.release(project, "widget", "1.1.0")]  # its tag holds none
        catalog = p.catalog(write_catalog, tls)
        sources = SourceSurveys(catalog)
        sources.survey(catalog.sources[0])
        served = sources.served(catalog)
        beside = Providers(served, NoRepositories())  # a worker begun beside, before any fetch
        providers = served_versions(served)
        entry = providers.get("acme", "widget")
        assert entry is not None and versions(providers, "acme", "widget") == [
            "1.1.0",
            "1.0.0",
            "0.9.0",
        ]
        assert [entry.deprecation(v) for v in ("1.1.0", "1.0.0", "0.9.0")] == [
            None,
            "Use 1.1.0.",
            "The branch says.",
        ]
        assert deprecation_warnings(entry.deprecation, ["1.1.0", "1.0.0", "0.9.0"]) == [
            "Version 1.0.0 is deprecated: Use 1.1.0.",
            "Version 0.9.0 is deprecated: The branch says.",
        ]

        def files_asked() -> int:
            return sum(1 for a in p.forge.asked if ".gitreg.yaml" in unquote(a.target))

        assert files_asked() == 3  # one a release
        served_versions(served, previous=providers)
        assert files_asked() == 3  # kept in the releases' folders: not asked again
        # A restart knows them from cache_dir before it reads the forge.
        again = Providers(served, NoRepositories())
        again.refresh()
        kept = again.get("acme", "widget")
        assert kept is not None and kept.deprecation("1.0.0") == "Use 1.1.0."
        # The worker beside finds the releases fetched, and their files kept with them.
        beside.refresh(poll_forges=True)
        found = beside.get("acme", "widget")
        assert found is not None and found.deprecation("1.0.0") == "Use 1.1.0."
        assert files_asked() == 3
