"""The sources' last surveys on disk, `cache_dir/sources.json`: so that a restart with a
forge down still serves what it surveyed. One JSON document, written whole (gitreg.atomic);
a survey is kept under its source's identity (kind, server, scope), so that reordering
`sources:` in registry.yaml loses nothing. Secrets are never in it: a module's webhook secret is
its source's, given again at load, as a provider's release location and token are. A file
written before providers were surveyed has no `providers`: it reads as none."""

from __future__ import annotations

import fcntl
import json
import logging
from pathlib import Path
from typing import Any, cast

from gitreg.address import ModuleAddress
from gitreg.atomic import write_atomically
from gitreg.catalog.providers import releases_folder
from gitreg.catalog.specs import (
    ArchiveScope,
    DeletedPolicy,
    Deprecation,
    ModuleSpec,
    MovedPolicy,
    ProviderSpec,
    SourceSpec,
)
from gitreg.git.location import RepoLocation, Transport
from gitreg.sources.clone_urls import ClonePlaces
from gitreg.sources.survey import (
    FoundModule,
    FoundProvider,
    Skipped,
    Survey,
    own_releases,
)
from gitreg.tags import TagTemplate
from gitreg.version_constraints import VersionConstraint

log = logging.getLogger(__name__)

FILE = "sources.json"
FORMAT = 1


def identity(spec: SourceSpec) -> str:
    return f"{spec.kind} {spec.where} {spec.scope}"


def save(cache_dir: Path, found: dict[str, Survey]) -> None:
    """Every source's last survey, by identity; OSError when it cannot be written. Workers of
    one host share the file (`serve --workers`): a source another worker surveyed since this
    one read it keeps that later survey, and writers take turns under a lock."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    with open(cache_dir / f"{FILE}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        stored = _stored(cache_dir / FILE)
        sources: dict[str, object] = {}
        for key, survey in sorted(found.items()):
            theirs = stored.get(key)
            later = isinstance(theirs, dict) and _at(theirs) > survey.at
            sources[key] = theirs if later else _survey(survey)
        document = {"format": FORMAT, "sources": sources}
        text = json.dumps(document, indent=1, sort_keys=True)
        write_atomically(cache_dir / FILE, text.encode())


def _stored(path: Path) -> dict[str, object]:
    """The file's surveys as written, by identity; none when it is absent or unreadable."""
    try:
        document = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        return {}
    stored = document.get("sources")
    return stored if isinstance(stored, dict) else {}


def _at(stored: dict[str, object]) -> float:
    at = stored.get("at")
    return float(at) if isinstance(at, int | float) and not isinstance(at, bool) else 0.0


def load(cache_dir: Path, specs: tuple[SourceSpec, ...]) -> dict[str, Survey]:
    """The last surveys of the sources `specs` names, by identity: none when the file is
    absent, unreadable or of another format (the next survey makes it again)."""
    path = cache_dir / FILE
    try:
        document = json.loads(path.read_bytes())
        if document.get("format") != FORMAT:
            return {}
        stored = document["sources"]
        result = {}
        for spec in specs:
            key = identity(spec)
            if key in stored:
                result[key] = _read(stored[key], spec, cache_dir)
        return result
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.warning("cannot read %s (%s): the sources are discovered again", path, exc)
        return {}


def _survey(found: Survey) -> dict[str, Any]:
    return {
        "source": found.source,
        "at": found.at,
        "repositories": list(found.repositories),
        "modules": [_module(m) for m in found.modules],
        "providers": [_provider(p) for p in found.providers],
        "skipped": [[s.repository, s.why, s.clone_refused] for s in found.skipped],
        "problems": list(found.problems),
        "notes": list(found.notes),
        "error": found.error,
        "refused": found.refused,
        "held": found.held,
        "held_seen": found.held_seen,
    }


def _module(module: FoundModule) -> dict[str, Any]:
    spec = module.spec
    return {
        "address": [spec.address.namespace, spec.address.name, spec.address.system],
        "repo": [spec.repo.url, spec.repo.transport],
        "path": spec.path,
        "tags": [str(t) for t in spec.tags],
        "archive": spec.archive,
        "moved_tags": spec.moved_tags,
        "deleted_tags": spec.deleted_tags,
        "repository": module.repository,
        "removed": module.removed,
        "hidden": module.hidden,
        "deprecated": _deprecated_json(spec.deprecated),
        "revoked": _deprecated_json(spec.revoked),
    }


def _provider(provider: FoundProvider) -> dict[str, Any]:
    spec = provider.spec
    return {
        "address": [spec.namespace, spec.type],
        "tags": [str(t) for t in spec.tags],
        "repository": provider.repository,
        "removed": provider.removed,
        "hidden": provider.hidden,
        "deprecated": _deprecated_json(spec.deprecated),
        "revoked": _deprecated_json(spec.revoked),
    }


def _deprecated_json(deprecated: tuple[Deprecation, ...]) -> list[list[str]]:
    return [[str(d.versions), d.reason] for d in deprecated]


def _read_deprecated(stored: list[list[str]]) -> tuple[Deprecation, ...]:
    return tuple(Deprecation(VersionConstraint.parse(v), str(r)) for v, r in stored)


def _read_provider(m: dict[str, Any], spec: SourceSpec, cache_dir: Path) -> FoundProvider:
    namespace, kind = str(m["address"][0]), str(m["address"][1])
    repository = str(m["repository"])
    # Where its releases are: the source's forge, as its survey found it there.
    releases = own_releases(spec, repository)
    if isinstance(releases, str):
        raise ValueError(f"{spec}: {releases}")  # a source of another kind under its identity
    provider = ProviderSpec(
        namespace,
        kind,
        releases_folder(cache_dir, namespace, kind),
        tags=tuple(TagTemplate.parse(t) for t in m["tags"]),
        releases=releases,
        deprecated=_read_deprecated(m.get("deprecated", [])),
        revoked=_read_deprecated(m.get("revoked", [])),
    )
    removed = bool(m["removed"])
    hidden = removed and spec.on_removed == "hide"
    return FoundProvider(provider, spec.key_path, repository, removed, hidden)


def _read(stored: dict[str, Any], spec: SourceSpec, cache_dir: Path) -> Survey:
    modules = []
    places = ClonePlaces.of(spec) if spec.kind != "folder" else None
    for m in stored["modules"]:
        repo = RepoLocation(str(m["repo"][0]), cast(Transport, m["repo"][1]))
        # Surveyed before clone URLs were held to the forge: one outside it is not served.
        if places and (refused := places.refusal(repo.url)):
            log.warning("%s: %s: %s: not served", spec.key_path, m["repository"], refused)
            continue
        module = ModuleSpec(
            address=ModuleAddress.parse(*m["address"]),
            repo=repo,
            path=str(m["path"]),
            tags=tuple(TagTemplate.parse(t) for t in m["tags"]),
            archive=cast(ArchiveScope, m["archive"]),
            moved_tags=cast(MovedPolicy, m["moved_tags"]),
            deleted_tags=cast(DeletedPolicy, m["deleted_tags"]),
            webhook_secret=spec.webhook_secret,
            signed_tags=spec.signed_tags,
            publish_when=spec.publish_when,
            deprecated=_read_deprecated(m.get("deprecated", [])),
            revoked=_read_deprecated(m.get("revoked", [])),
        )
        hidden = bool(m["removed"]) and spec.on_removed == "hide"
        modules.append(
            FoundModule(module, spec.key_path, str(m["repository"]), bool(m["removed"]), hidden)
        )
    return Survey(
        source=spec.key_path,
        at=float(stored["at"]),
        repositories=tuple(stored["repositories"]),
        modules=tuple(modules),
        skipped=tuple(
            Skipped(str(s[0]), str(s[1]), bool(s[2:3] == [True])) for s in stored["skipped"]
        ),
        problems=tuple(stored["problems"]),
        notes=tuple(stored["notes"]),
        error=str(stored["error"]),
        refused=bool(stored["refused"]),
        held=str(stored["held"]),
        held_seen=int(stored["held_seen"]),
        providers=tuple(_read_provider(p, spec, cache_dir) for p in stored.get("providers", [])),
    )
