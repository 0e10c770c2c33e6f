"""The registry API's JSON, in the shapes the public registry documents.

Module objects, a version's root, submodules and examples, `meta` paging; with gitreg's own
fields beside theirs: the tag and commit, a version's `deprecated` or `revoked` reason, inputs'
and outputs' `sensitive`, `nullable`, `deprecated`, and files that did not parse."""

from __future__ import annotations

import time
from collections.abc import Mapping
from posixpath import basename
from typing import Any
from urllib.parse import urlencode

from gitreg.catalog.approvals import approval_of
from gitreg.docs.model import FolderDocs, ModuleDocs, ProviderRequirement
from gitreg.modules.index import ModuleEntry
from gitreg.modules.resolve import Release
from gitreg.state.download_counts import principal_json
from gitreg.web.usage import NO_COUNTS, ModuleCounts

Json = dict[str, Any]


def module_json(
    entry: ModuleEntry,
    release: Release,
    description: str,
    source: str | None,
    published: int | None,
    downloads: int = 0,
) -> Json:
    """A module version as the public registry lists one. `downloads`: the module's, all its
    versions' (as the public registry counts); `verified` is always false: there is no one here
    to verify. A module whose repository left its source says `"removed": true`, one whose tag's
    signature was verified under `require_signed_tags` names its `signer`."""
    address = entry.spec.address
    answer: Json = {
        "id": f"{address}/{release.version}",
        "owner": "",
        "namespace": address.namespace,
        "name": address.name,
        "version": release.version,
        "provider": address.system,
        "description": description,
        "source": source or "",
        "published_at": _timestamp(published),
        "downloads": downloads,
        "verified": False,
        "tag": release.tag,
        "commit": release.commit,
    }
    if release.signer:  # verified under require_signed_tags
        answer["signer"] = release.signer
    if entry.spec.removed:  # found by a survey, and its repository left its source: no new version
        answer["removed"] = True
    reason = entry.deprecation(release)
    if reason is not None:  # still installable; said only of a version that is deprecated
        answer["deprecated"] = reason
    revoked = entry.revocation(release)
    if revoked is not None:  # installable only where it was installed before
        answer["revoked"] = revoked
    approval = approval_of(entry.spec.approvals, release.version)
    if approval is not None:  # published before its cooldown ended, by approvals.yaml
        answer["approved"] = {"by": approval.by, "at": approval.at, "reason": approval.reason}
    return answer


def details_json(
    summary: Json,
    docs: ModuleDocs,
    systems: list[str],
    versions: list[str],
    counts: ModuleCounts = NO_COUNTS,
) -> Json:
    """A module version with its documentation: the public registry's "get a specific module";
    with gitreg's `version_downloads` (each version's), and `downloaded_by` for a reader who may
    see who downloaded."""
    name = summary["name"]
    answer = {
        **summary,
        "root": folder_json(docs.root, name),
        "submodules": [folder_json(f) for f in docs.submodules],
        "examples": [folder_json(f) for f in docs.examples],
        "providers": systems,
        "versions": versions,
        "version_downloads": {v: counts.by_version.get(v, 0) for v in versions},
    }
    if counts.principals is not None:
        answer["downloaded_by"] = [principal_json(p) for p in counts.principals]
    return answer


def pending_json(entry: ModuleEntry) -> Json:
    """`{"pending": [...]}`: the versions `publish_when` holds back, each with when its age
    counts from and when it is published; {} when none is (the answer is as before)."""
    if not entry.pending:
        return {}
    return {
        "pending": [
            {
                "version": p.release.version,
                "tag": p.release.tag,
                "commit": p.release.commit,
                "since": _timestamp(int(p.since)),
                "publishes_at": _timestamp(int(p.due)),
            }
            for p in entry.pending
        ]
    }


def folder_json(folder: FolderDocs, name: str = "") -> Json:
    managed = [r for r in folder.resources if r.mode == "managed"]
    data = [r for r in folder.resources if r.mode != "managed"]
    return {
        "path": folder.path,
        "name": name or basename(folder.path),
        "readme": folder.readme,
        # The docs do not say whether a folder holds .tf files; one that declares nothing is
        # as good as empty to a reader.
        "empty": not (
            folder.inputs
            or folder.outputs
            or folder.resources
            or folder.module_calls
            or folder.providers
        ),
        "inputs": [
            {
                "name": i.name,
                "type": i.type,
                "description": i.description,
                "default": i.default,
                "required": i.required,
                "sensitive": i.sensitive,
                "nullable": i.nullable,
                "deprecated": i.deprecated,
            }
            for i in folder.inputs
        ],
        "outputs": [
            {
                "name": o.name,
                "description": o.description,
                "sensitive": o.sensitive,
                "deprecated": o.deprecated,
            }
            for o in folder.outputs
        ],
        "dependencies": [
            {"name": c.name, "source": c.source, "version": c.version} for c in folder.module_calls
        ],
        "provider_dependencies": [_provider(p) for p in folder.providers],
        "resources": [{"name": r.name, "type": r.type} for r in managed],
        "data_sources": [{"name": r.name, "type": r.type} for r in data],
        "problems": [{"path": p.path, "message": p.message} for p in folder.problems],
    }


def _provider(requirement: ProviderRequirement) -> Json:
    """`source` as written (`hashicorp/aws`, or with a host); `namespace` is its second-to-last
    part, empty when the source is not given."""
    parts = requirement.source.split("/") if requirement.source else []
    return {
        "name": requirement.name,
        "namespace": parts[-2] if len(parts) >= 2 else "",
        "source": requirement.source,
        "version": requirement.version,
    }


def _timestamp(published: int | None) -> str | None:
    if published is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(published))


def page_meta(path: str, params: Mapping[str, str], limit: int, offset: int, total: int) -> Json:
    """The public registry's `meta`: next_* only when there is more, prev_* only past the start;
    the URLs keep the request's (validated) filters."""
    meta: Json = {"limit": limit, "current_offset": offset}
    if offset + limit < total:
        meta["next_offset"] = offset + limit
        meta["next_url"] = _url(path, params, limit, offset + limit)
    if offset > 0:
        previous = max(0, min(offset, total) - limit)
        meta["prev_offset"] = previous
        meta["prev_url"] = _url(path, params, limit, previous)
    return meta


def _url(path: str, params: Mapping[str, str], limit: int, offset: int) -> str:
    return f"{path}?{urlencode({**params, 'limit': limit, 'offset': offset})}"
