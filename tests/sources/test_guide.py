"""docs/sources.md, run: its catalogs loaded, its folder source surveyed over real Git
repositories holding its `.gitreg.yaml`, and `gitreg list`'s sources section as the page shows
it."""

from __future__ import annotations

from pathlib import Path

from gitreg.catalog.load import load_catalog
from gitreg.catalog.model import Catalog
from gitreg.ops.source_reports import source_lines, source_reports
from gitreg.sources.surveys import SourceSurveys
from tests.support.gitrepo import GitRepo, git, module_files
from tests.support.site_snippets import block, claimed

PAGE = "sources.md"


def _load(root: Path, text: str) -> Catalog:
    (root / "registry.yaml").write_text(text.replace("/srv/git", str(root / "srv")))
    return load_catalog(root / "registry.yaml", secrets=())


def _bare(root: Path, path: str, files: dict[str, str], tag: str) -> None:
    work = GitRepo(root / "work" / path)
    work.release(tag, files)
    git(root, "clone", "-q", "--bare", str(work.path), str(root / "srv" / path))


def test_the_sources_guide_runs(tmp_path: Path) -> None:
    with claimed(PAGE, "test_the_sources_guide_runs") as page:
        folder_catalog = page.take("yaml", "glob:")
        declaration = page.take("yaml", "name: network")
        filters = page.take("yaml", "include:")
        forges = page.take("yaml", "gitlab:")

    _bare(tmp_path, "team-a/terraform-aws-vpc-peering.git", module_files("1.0.0"), "v1.0.0")
    _bare(tmp_path, "team-a/terraform-provider-widget.git", module_files("1.0.0"), "v1.0.0")
    monorepo = {
        ".gitreg.yaml": declaration,
        **module_files("1.0.0", "modules/network"),
        **module_files("1.0.0", "modules/dns"),
    }
    _bare(tmp_path, "team-b/terraform-platform-modules.git", monorepo, "network/v1.0.0")
    (tmp_path / "srv" / "notes").mkdir()

    catalog = _load(tmp_path, folder_catalog)
    sources = SourceSurveys(catalog)
    sources.survey(catalog.sources[0])
    served = sources.served(catalog)
    assert [str(m.address) for m in served.modules] == [
        "platform/vpc-peering/aws",
        "platform/network/aws",
        "platform/dns/aws",
    ]
    network = served.modules[1]
    assert (network.path, [str(t) for t in network.tags]) == (
        "modules/network",
        ["network/v{version}"],
    )

    # gitreg list's sources section, as the page shows it (its time and its folder aside).
    shown = block(PAGE, "text", "sources[0] (folder").replace("/srv/git", str(tmp_path / "srv"))
    printed = source_lines(source_reports(sources.surveys(), sources.settlement))
    expected = shown.splitlines()
    assert len(printed) == len(expected)
    for got, want in zip(printed, expected, strict=True):
        if want.strip().startswith("last discovery:"):
            assert got.startswith("    last discovery: 20")
        else:
            assert got == want

    (only,) = _load(tmp_path, filters).sources
    assert (only.include, only.exclude) == (("terraform-*",), ("*-deprecated", "*-sandbox"))

    catalog = _load(tmp_path, forges)
    assert [(s.kind, s.namespace) for s in catalog.sources] == [
        ("gitlab", "terraform"),
        ("gitea", "infra"),
        ("github", "acme"),
        ("bitbucket", "tf"),
    ]
    assert catalog.sources[2].topics == ("terraform-module",)
