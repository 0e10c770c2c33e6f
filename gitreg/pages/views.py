"""What a page shows, worked out from the registry's values, as plain data for the templates.

The module page's: its release, docs, usage snippet, requirements, versions with dates, what to
know of them. The provider page's is `pages/provider_view.py`."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass

from gitreg.catalog.approvals import approval_of
from gitreg.catalog.specs import ModuleSpec
from gitreg.dependents.index import NO_ONE, Seen
from gitreg.docs.model import FolderDocs, ModuleDocs, ParseProblem, ProviderRequirement
from gitreg.modules.index import ModuleEntry
from gitreg.modules.resolve import Release
from gitreg.pages.links import RepositoryLinks, web_url
from gitreg.pages.readme import render_readme
from gitreg.pages.related import Sibling, calling_examples, siblings
from gitreg.pages.usage import (
    cli_host_block,
    constraint,
    latest_release,
    module_snippet,
    prerelease,
)


@dataclass(frozen=True)
class ReleaseRow:
    version: str
    tag: str
    commit: str
    date: int | None  # the commit's committer time (unix), when known
    deprecated: str = ""  # why this version is deprecated; "" when it is not
    prerelease: bool = False  # 1.2.0-rc.1: a constraint never picks it, only its exact version
    revoked: str = ""  # why this version is revoked; "" when it is not
    approved: str = ""  # approvals.yaml's word, when published before its cooldown ended


@dataclass(frozen=True)
class Deprecation:
    kind: str  # input | output
    name: str
    message: str


@dataclass(frozen=True)
class ModuleSituation:
    """What the page knows of the module beyond its docs: the modules of its repository the
    reader may read, whether the repository's last read failed, where the browser reached the
    registry, and whether `terraform login` signs in there."""

    repository: tuple[ModuleSpec, ...] = ()
    unreadable: bool = False
    address: str = ""  # a Host header, or public_url's host; "" when unknown
    login: bool = False  # people sign in with the OpenID provider (login.v1 is offered)
    provenance: bool = False  # versions' provenance is signed (registry.yaml's provenance.key)
    used_by: Seen = NO_ONE  # the module's callers as the reader may see them


@dataclass(frozen=True)
class ModulePage:
    address: str
    namespace: str
    url: str  # the page of the module's latest version
    version: str
    tag: str
    commit: str
    signer: str  # who signed its tag, under require_signed_tags; "" when not verified
    provenance: bool  # a signed provenance is at the version's URL
    date: int | None
    latest: str
    is_latest: bool
    web: str | None  # the repository's page, when it has an https URL
    source: str  # what a configuration's `source` says
    snippet: str
    exact: bool  # the snippet asks for this very version
    host_block: str  # the CLI config block that leads `hostname` here; "" when not needed
    terraform_version: str
    providers: tuple[ProviderRequirement, ...]
    description: str
    readme_html: str  # sanitised
    docs: ModuleDocs | None  # None: not built (docs_error says why)
    problems: tuple[ParseProblem, ...]
    docs_error: str
    releases: tuple[ReleaseRow, ...]
    deprecations: tuple[Deprecation, ...]
    deprecated: str  # why this version is deprecated (registry.yaml, .gitreg.yaml); "" if not
    unreadable: bool  # the repository's last read failed: the versions are those read before
    removed: bool  # found by a survey, its repository since gone: its versions still serve
    kept_tag: str  # why this version is served from a commit its tag no longer names
    siblings: tuple[Sibling, ...]
    repository_examples: tuple[FolderDocs, ...]  # paths in the repository
    used_by: Seen  # who calls the module: named where the reader may read them, else counted
    revoked: str = ""  # why this version is revoked: it installs only where it was installed
    # Versions publish_when holds back: (version, tag, when it publishes), due soonest first.
    pending: tuple[tuple[str, str, int], ...] = ()


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
    situation: ModuleSituation | None = None,
) -> ModulePage:
    situation = situation or ModuleSituation()
    a = entry.spec.address
    source = f"{hostname}/{a.namespace}/{a.name}/{a.system}"
    latest = latest_release(entry.versions.releases) or release
    version = constraint(release.version, newest=latest.version == release.version)
    inputs = docs.root.inputs if docs is not None else ()
    snippet = module_snippet(a.name, source, version, inputs)
    web = web_url(entry.spec)
    readme_html = ""
    problems: tuple[ParseProblem, ...] = ()
    if docs is not None:
        readme_html = _readme_html(docs.root.readme, web, release.commit, entry.spec.path)
        folders = (docs.root, *docs.submodules, *docs.examples)
        problems = tuple(p for folder in folders for p in folder.problems)
    rows = tuple(
        ReleaseRow(
            r.version,
            r.tag,
            r.commit,
            times.get(r.commit),
            entry.deprecation(r) or "",
            prerelease(r.version),
            entry.revocation(r) or "",
            str(approval or ""),
        )
        for r in entry.versions.releases
        for approval in (approval_of(entry.spec.approvals, r.version),)
    )
    return ModulePage(
        address=f"{a.namespace}/{a.name}/{a.system}",
        namespace=a.namespace,
        url=module_url(entry),
        version=release.version,
        tag=release.tag,
        commit=release.commit,
        signer=release.signer,
        provenance=situation.provenance,
        date=times.get(release.commit),
        latest=latest.version,
        is_latest=latest.version == release.version,
        web=web,
        source=source,
        snippet=snippet,
        exact=version == release.version,
        host_block=cli_host_block(hostname, situation.address, situation.login),
        terraform_version=docs.root.terraform_version if docs is not None else "",
        providers=docs.root.providers if docs is not None else (),
        description=docs.root.description if docs is not None else "",
        readme_html=readme_html,
        docs=docs,
        problems=problems,
        docs_error=docs_error,
        releases=rows,
        deprecations=_deprecations(docs),
        deprecated=entry.deprecation(release) or "",
        unreadable=situation.unreadable,
        removed=entry.spec.removed,
        kept_tag=_kept_tag(entry, release),
        siblings=siblings(entry.spec, situation.repository),
        repository_examples=calling_examples(
            entry.spec, docs.repository_examples if docs is not None else ()
        ),
        used_by=situation.used_by,
        revoked=entry.revocation(release) or "",
        pending=tuple((p.release.version, p.release.tag, int(p.due)) for p in entry.pending),
    )


def _deprecations(docs: ModuleDocs | None) -> tuple[Deprecation, ...]:
    if docs is None:
        return ()
    found = [Deprecation("input", i.name, i.deprecated) for i in docs.root.inputs if i.deprecated]
    found += [
        Deprecation("output", o.name, o.deprecated) for o in docs.root.outputs if o.deprecated
    ]
    return tuple(found)


def _kept_tag(entry: ModuleEntry, release: Release) -> str:
    """Why `release` is served from its published commit though its tag moved or went (the
    module's moved_tags: pin, deleted_tags: keep); "" when its tag is as published."""
    for change in entry.changes:
        if change.tag != release.tag or change.published != release.commit:
            continue
        if change.action == "pinned" and change.current is not None:
            return (
                f"Tag {change.tag} now names commit {change.current[:12]} in the repository;"
                f" this registry serves {change.published[:12]}, the commit it first published,"
                " so that what was installed does not change."
            )
        if change.action == "kept":
            return (
                f"Tag {change.tag} was deleted from the repository; this registry still serves"
                f" {change.published[:12]}, the commit it first published."
            )
    return ""


@functools.lru_cache(maxsize=256)
def _readme_html(readme: str, web: str | None, commit: str, folder: str) -> str:
    """Rendered and sanitised once per README and place: a page is read far more often."""
    return render_readme(readme, RepositoryLinks(web, commit, folder)) if readme else ""
