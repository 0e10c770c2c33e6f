"""What each MCP tool answers, for a request; `web/mcp.py` registers them.

A tool answers with the modules and providers its sender may read, as `/v1/modules` shows
them (the same gate, the same directory view), in Markdown for a person or a model to read and
as structured data beside it. One function a tool. See docs/mcp.md."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from gitreg.address import ModuleAddress, ProviderAddress
from gitreg.dependents.answers import dependent_line, dependents_json
from gitreg.directory.repository_url import web_url
from gitreg.directory.search import query_problem, search, search_providers
from gitreg.directory.view import DirectoryModule, newest
from gitreg.docs.model import FolderDocs, ModuleDocs
from gitreg.errors import ClientError, NotFound
from gitreg.modules.index import ModuleEntry
from gitreg.modules.resolve import Release
from gitreg.pages.provider_view import snippet as provider_snippet
from gitreg.pages.usage import constraint, latest_release, module_snippet
from gitreg.providers.hosted import ProviderEntry
from gitreg.web import access
from gitreg.web.directory import directory_for
from gitreg.web.modules import normalised, release_of
from gitreg.web.providers import deprecation_warnings
from gitreg.web.registry_json import Json, details_json, module_json, pending_json
from gitreg.web.revocations import listed
from gitreg.web.state import state_of, world_of
from gitreg.web.usage import module_counts

PAGE = 20  # results a search answers at once; `current_offset` pages on
_README_MOST = 20_000  # characters of a README a details answer carries


@dataclass(frozen=True)
class Answer:
    markdown: str
    data: Json


async def search_modules(request: Request, query: str, offset: int) -> Answer:
    # HashiCorp's tool wraps the query in single quotes; an assistant used to it may too.
    query = query.strip().strip("'\"").strip()
    if problem := query_problem(query):
        raise ClientError(problem)
    if offset < 0:
        raise ClientError(f"current_offset must be 0 or more, not {offset}")
    found = search(await directory_for(request), query)
    page = found[offset : offset + PAGE]
    lines = [f"{len(found)} module{'s' * (len(found) != 1)} match {query!r}" if query else ""]
    lines[0] = lines[0] or f"{len(found)} module{'s' * (len(found) != 1)}"
    lines[0] += f"; {offset + 1} to {offset + len(page)}:" if page else "."
    for m in page:
        deprecated = m.entry.deprecation(m.release)
        note = f" (deprecated: {deprecated})" if deprecated else ""
        lines.append(f"- `{m.address}/{m.version}`{note}: {m.description or 'no description'}")
    more = offset + len(page) < len(found)
    if more:
        lines.append(f"\nMore: call again with current_offset={offset + len(page)}.")
    data: Json = {
        "total": len(found),
        "offset": offset,
        "next_offset": offset + len(page) if more else None,
        "modules": [_module_json(m) for m in page],
    }
    return Answer("\n".join(lines), data)


def _module_json(m: DirectoryModule) -> Json:
    return {
        "module_id": f"{m.address}/{m.version}",
        "namespace": m.namespace,
        "name": m.name,
        "system": m.system,
        "version": m.version,
        "description": m.description,
        "source": m.repository_url or "",
        "deprecated": m.entry.deprecation(m.release),
    }


async def module_details(request: Request, module_id: str) -> Answer:
    entry, release = await _module_release(request, module_id)
    docs = await state_of(request).docs.module_docs(entry, release)
    reader = await access.reader_of(request)
    counts = await module_counts(request, entry, reader)
    total = counts.summary.total
    source = web_url(entry.spec.repo)
    summary = module_json(entry, release, docs.root.description, source, None, total)
    versions = [r.version for r in await listed(request, entry, reader)]
    data = details_json(summary, docs, [entry.spec.address.system], versions, counts)
    data |= pending_json(entry)
    data["root"]["readme"] = docs.root.readme[:_README_MOST]
    data["usage"] = _usage(request, entry, release, docs)
    markdown = _details_markdown(request, entry, release, docs)
    if world_of(request).catalog.downloads.enabled:
        this = counts.by_version.get(release.version, 0)
        line = f"Downloads: {total} in all, {this} of {release.version}.\n"
        markdown = markdown.replace("\n## Usage\n", f"\n{line}\n## Usage\n", 1)
    return Answer(markdown, data)


def _details_markdown(
    request: Request, entry: ModuleEntry, release: Release, docs: ModuleDocs
) -> str:
    a = entry.spec.address
    out = [f"# {a}/{release.version}", ""]
    reason = entry.deprecation(release)
    if reason:
        out += [f"**Deprecated**: {reason} (it still installs)", ""]
    if revoked := entry.revocation(release):
        out += [f"**Revoked**: {revoked} (it installs only where it was installed before)", ""]
    if release.signer:
        out += [f"Tag {release.tag} signed by {release.signer}.", ""]
    if docs.root.description:
        out += [docs.root.description, ""]
    latest = latest_release(entry.versions.releases)
    if latest and latest.version != release.version:
        out += [f"The latest version is {latest.version}.", ""]
    for held in pending_json(entry).get("pending", ()):
        at = held["publishes_at"]
        out += [f"Version {held['version']} is pending: it publishes at {at}.", ""]
    out += ["## Usage", "", "```hcl", _usage(request, entry, release, docs), "```", ""]
    out += _folder_markdown(docs.root, "##")
    for title, folders in (("Submodules", docs.submodules), ("Examples", docs.examples)):
        if folders:
            out += [f"## {title}", ""]
            for folder in folders:
                out += [f"### {folder.path}", ""]
                out += [folder.description, ""] if folder.description else []
                out += _folder_markdown(folder, "####", readme=False)
    if docs.root.readme:
        out += ["## README", "", docs.root.readme[:_README_MOST]]
    return "\n".join(out).rstrip() + "\n"


def _folder_markdown(folder: FolderDocs, level: str, readme: bool = True) -> list[str]:
    out: list[str] = []
    if folder.inputs:
        out += [f"{level} Inputs", "", "| name | type | default | required | description |"]
        out += ["| --- | --- | --- | --- | --- |"]
        for i in folder.inputs:
            text = i.description + (f" **Deprecated**: {i.deprecated}" if i.deprecated else "")
            default = "" if i.default is None else f"`{_cell(i.default)}`"
            out.append(
                f"| `{i.name}` | `{_cell(i.type or 'any')}` | {default} |"
                f" {'yes' if i.required else 'no'} | {_cell(text)} |"
            )
        out.append("")
    if folder.outputs:
        out += [f"{level} Outputs", "", "| name | description |", "| --- | --- |"]
        for o in folder.outputs:
            text = o.description + (f" **Deprecated**: {o.deprecated}" if o.deprecated else "")
            out.append(f"| `{o.name}` | {_cell(text)} |")
        out.append("")
    if folder.providers:
        out += [f"{level} Providers", ""]
        out += [
            f"- `{p.name}`: `{p.source or p.name}` {p.version}".rstrip() for p in folder.providers
        ]
        out.append("")
    if folder.resources:
        out += [f"{level} Resources", ""]
        out += [
            f"- {'data ' if r.mode == 'data' else ''}`{r.type}.{r.name}`" for r in folder.resources
        ]
        out.append("")
    return out


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


async def module_versions(request: Request, module_id: str) -> Answer:
    entry = await _module(request, _address(module_id, versioned=False)[0])
    releases = entry.versions.releases
    latest = latest_release(releases)
    rows = [
        {
            "version": r.version,
            "tag": r.tag,
            "commit": r.commit,
            "latest": latest is not None and r.version == latest.version,
            "deprecated": entry.deprecation(r),
            "revoked": entry.revocation(r),
        }
        for r in releases
    ]
    lines = [f"{entry.spec.address}: {len(rows)} version{'s' * (len(rows) != 1)}, newest first:"]
    for row in rows:
        notes = ["latest"] * bool(row["latest"])
        notes += [f"deprecated: {row['deprecated']}"] if row["deprecated"] else []
        notes += [f"revoked: {row['revoked']}"] if row["revoked"] else []
        lines.append(f"- {row['version']}" + (f" ({'; '.join(notes)})" if notes else ""))
    return Answer("\n".join(lines), {"module": str(entry.spec.address), "versions": rows})


async def latest_module_version(request: Request, namespace: str, name: str, system: str) -> Answer:
    try:
        address = ModuleAddress.parse(namespace, name, system.lower())
    except ValueError as exc:
        raise ClientError(str(exc)) from exc
    entry = await _module(request, address)
    release = newest(entry.versions.releases)
    if release is None:
        raise NotFound(f"{address} has no version yet")
    reason = entry.deprecation(release)
    text = f"The latest version of {address} is {release.version}."
    text += f" It is deprecated: {reason}" if reason else ""
    data = {"module_id": f"{address}/{release.version}", "version": release.version}
    return Answer(text, {**data, "deprecated": reason})


async def module_usage(request: Request, module_id: str) -> Answer:
    entry, release = await _module_release(request, module_id)
    docs = await state_of(request).docs.module_docs(entry, release)
    block = _usage(request, entry, release, docs)
    required = [i.name for i in docs.root.inputs if i.required]
    text = f"```hcl\n{block}\n```\n"
    text += f"\nRequired inputs: {', '.join(required)}." if required else "\nNo input is required."
    reason = entry.deprecation(release)
    text += f"\n\n**Deprecated**: {reason}" if reason else ""
    return Answer(text, {"module_block": block, "required_inputs": required, "deprecated": reason})


def _usage(request: Request, entry: ModuleEntry, release: Release, docs: ModuleDocs) -> str:
    a = entry.spec.address
    source = f"{world_of(request).catalog.server.hostname}/{a.namespace}/{a.name}/{a.system}"
    latest = latest_release(entry.versions.releases) or release
    version = constraint(release.version, newest=latest.version == release.version)
    return module_snippet(a.name, source, version, docs.root.inputs)


async def module_dependents(request: Request, module_id: str) -> Answer:
    """Who calls a module: callers the sender may read named, the others counted."""
    address, _ = _address(module_id, versioned=False)
    await _module(request, address)
    reader = await access.reader_of(request)  # an open namespace admits without asking who
    index = state_of(request).dependents.current
    seen = index.seen_by(address.key, access.may_read(request, reader))
    lines = [f"# Who calls {address}", ""]
    lines += [f"- {dependent_line(d)}" for d in seen.named] or ["No caller you may read."]
    if seen.hidden:
        lines.append(
            f"\n{seen.hidden} more in namespaces you may not read,"
            f" {seen.hidden_deprecated} of them on a deprecated version."
        )
    return Answer("\n".join(lines) + "\n", dependents_json(str(address), seen, index))


async def search_providers_answer(request: Request, query: str, offset: int) -> Answer:
    query = query.strip().strip("'\"").strip()
    if problem := query_problem(query):
        raise ClientError(problem)
    if offset < 0:
        raise ClientError(f"current_offset must be 0 or more, not {offset}")
    found = search_providers(await directory_for(request), query)
    page = found[offset : offset + PAGE]
    lines = [f"{len(found)} provider{'s' * (len(found) != 1)}" + (":" if page else ".")]
    rows = []
    for p in page:
        reason = p.entry.deprecation(p.version)
        note = f" (deprecated: {reason})" if reason else ""
        lines.append(f"- `{p.address}` {p.version}{note}")
        rows.append({"provider_id": p.address, "version": p.version, "deprecated": reason})
    more = offset + len(page) < len(found)
    if more:
        lines.append(f"\nMore: call again with current_offset={offset + len(page)}.")
    data = {"total": len(found), "offset": offset, "providers": rows}
    return Answer("\n".join(lines), {**data, "next_offset": offset + len(page) if more else None})


async def provider_details(request: Request, provider_id: str) -> Answer:
    parts = provider_id.strip().strip("/").split("/")
    if len(parts) not in (2, 3):
        raise ClientError(
            "provider_id must be NAMESPACE/TYPE or NAMESPACE/TYPE/VERSION,"
            f" not {provider_id[:80]!r}"
        )
    try:
        address = ProviderAddress.of(parts[0], parts[1])
    except ValueError as exc:
        raise ClientError(str(exc)) from exc
    git = access.provider_git(request, address)
    await access.admit(request, "read", f"provider {address}", address.namespace, git)
    entry = world_of(request).side.providers.get(address.namespace, address.type)
    if entry is None:
        raise NotFound(f"no provider {address.namespace}/{address.type}")
    return _provider_answer(request, entry, normalised(parts[2]) if len(parts) == 3 else None)


def _provider_answer(request: Request, entry: ProviderEntry, version: str | None) -> Answer:
    spec = entry.spec
    newest_release = latest_release(entry.releases)
    release = entry.release(version) if version else newest_release
    if release is None:
        raise NotFound(f"{spec} has no version {version}" if version else f"{spec} has none yet")
    is_newest = newest_release is not None and newest_release.version == release.version
    block = provider_snippet(
        world_of(request).catalog.server.hostname, entry, release.version, is_newest
    )
    versions = [r.version for r in entry.releases]
    warnings = deprecation_warnings(entry.deprecation, versions)
    warnings += deprecation_warnings(entry.revocation, versions, "revoked")
    reason = entry.deprecation(release.version)
    revoked = entry.revocation(release.version)
    platforms = [f"{p.os}_{p.arch}" for p in release.packages]
    out = [f"# {spec} {release.version}", ""]
    out += [f"**Deprecated**: {reason} (it still installs)", ""] if reason else []
    out += [f"**Revoked**: {revoked} (it installs only where it was before)", ""] if revoked else []
    out += ["```hcl", block, "```", ""]
    out += [f"Protocols: {', '.join(release.protocols)}. Platforms: {', '.join(platforms)}.", ""]
    out += [f"Versions, newest first: {', '.join(versions)}."]
    out += (
        ["", "Warnings terraform init prints:", *(f"- {w}" for w in warnings)] if warnings else []
    )
    data: dict[str, Any] = {
        "provider_id": f"{spec}/{release.version}",
        "version": release.version,
        "deprecated": reason,
        "revoked": revoked,
        "required_providers": block,
        "protocols": list(release.protocols),
        "platforms": platforms,
        "versions": versions,
        "warnings": warnings,
    }
    return Answer("\n".join(out) + "\n", data)


async def _module_release(request: Request, module_id: str) -> tuple[ModuleEntry, Release]:
    address, version = _address(module_id, versioned=True)
    entry = await _module(request, address)
    release = release_of(entry, version) if version else newest(entry.versions.releases)
    if release is None:
        raise NotFound(
            f"{address} has no version {normalised(version)}" if version else f"{address} has none"
        )
    return entry, release


async def _module(request: Request, address: ModuleAddress) -> ModuleEntry:
    """The module, once the gate admits the request to its namespace: as `/v1/modules` does,
    before anything is looked up, so that who may not read it learns nothing of it."""
    git = access.module_git(request, address)
    await access.admit(request, "read", f"module {address}", address.namespace, git)
    entry = world_of(request).snapshot.index.get(*address.key)
    if entry is None:
        raise NotFound(f"no module {address}")
    if not entry.versions.releases:
        reason = state_of(request).modules.unknown_versions(
            world_of(request).snapshot, entry.spec.repo
        )
        if reason is not None:
            raise NotFound(f"{address}: its versions are not known yet: {reason}")
    return entry


def _address(module_id: str, versioned: bool) -> tuple[ModuleAddress, str | None]:
    """`NAMESPACE/NAME/SYSTEM`, or with `versioned` `.../VERSION` too (HashiCorp's module_id)."""
    parts = module_id.strip().strip("/").split("/")
    shape = "NAMESPACE/NAME/SYSTEM" + ("[/VERSION]" if versioned else "")
    if len(parts) not in ((3, 4) if versioned else (3,)):
        raise ClientError(f"module_id must be {shape}, not {module_id[:80]!r}")
    try:
        address = ModuleAddress.parse(parts[0], parts[1], parts[2].lower())
    except ValueError as exc:
        raise ClientError(str(exc)) from exc
    return address, parts[3] if len(parts) == 4 else None
