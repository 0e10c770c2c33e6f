"""What a page shows, worked out from the registry's values: the module page (its release, docs,
usage snippet, versions with dates; the provider page's is `pages/provider_view.py`). Plain
data for the templates."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gitreg.docs.model import ModuleDocs, ParseProblem
from gitreg.modules.index import ModuleEntry
from gitreg.modules.resolve import Release
from gitreg.pages.links import RepositoryLinks, web_url
from gitreg.pages.readme import render_readme
from gitreg.tags import parse_version


@dataclass(frozen=True)
class ReleaseRow:
    version: str
    tag: str
    commit: str
    date: int | None  # the commit's committer time (unix), when known


@dataclass(frozen=True)
class ModulePage:
    address: str
    namespace: str
    url: str  # the page of the module's latest version
    version: str
    tag: str
    commit: str
    date: int | None
    latest: str
    is_latest: bool
    web: str | None  # the repository's page, when it has an https URL
    source: str  # what a configuration's `source` says
    snippet: str
    description: str
    readme_html: str  # sanitised
    docs: ModuleDocs | None  # None: not built (docs_error says why)
    problems: tuple[ParseProblem, ...]
    docs_error: str
    releases: tuple[ReleaseRow, ...]


def latest_release(releases: Sequence[Release]) -> Release | None:
    """The newest release that is no prerelease (what `~>` picks), else the newest."""
    for release in releases:
        if not _prerelease(release.version):
            return release
    return releases[0] if releases else None


def constraint(version: str) -> str:
    """`~> X.Y` for a release; a prerelease only ever matches exactly."""
    if _prerelease(version):
        return version
    parsed = parse_version(version)
    return f"~> {parsed.major}.{parsed.minor}"


def _prerelease(version: str) -> bool:
    try:
        return parse_version(version).prerelease is not None
    except ValueError:
        return False


def module_url(entry: ModuleEntry) -> str:
    a = entry.spec.address
    return f"/modules/{a.namespace}/{a.name}/{a.system}"


def module_page(
    hostname: str,
    entry: ModuleEntry,
    release: Release,
    docs: ModuleDocs | None,
    times: Mapping[str, int],
    docs_error: str = "",
) -> ModulePage:
    a = entry.spec.address
    source = f"{hostname}/{a.namespace}/{a.name}/{a.system}"
    snippet = (
        f'module "{a.name.replace("-", "_")}" {{\n'
        f'  source  = "{source}"\n'
        f'  version = "{constraint(release.version)}"\n'
        "}"
    )
    web = web_url(entry.spec)
    latest = latest_release(entry.versions.releases) or release
    readme_html = ""
    problems: tuple[ParseProblem, ...] = ()
    if docs is not None:
        readme_html = _readme_html(docs.root.readme, web, release.commit, entry.spec.path)
        folders = (docs.root, *docs.submodules, *docs.examples)
        problems = tuple(p for folder in folders for p in folder.problems)
    rows = tuple(
        ReleaseRow(r.version, r.tag, r.commit, times.get(r.commit)) for r in entry.versions.releases
    )
    return ModulePage(
        address=f"{a.namespace}/{a.name}/{a.system}",
        namespace=a.namespace,
        url=module_url(entry),
        version=release.version,
        tag=release.tag,
        commit=release.commit,
        date=times.get(release.commit),
        latest=latest.version,
        is_latest=latest.version == release.version,
        web=web,
        source=source,
        snippet=snippet,
        description=docs.root.description if docs is not None else "",
        readme_html=readme_html,
        docs=docs,
        problems=problems,
        docs_error=docs_error,
        releases=rows,
    )


@functools.lru_cache(maxsize=256)
def _readme_html(readme: str, web: str | None, commit: str, folder: str) -> str:
    """Rendered and sanitised once per README and place: a page is read far more often."""
    return render_readme(readme, RepositoryLinks(web, commit, folder)) if readme else ""
