"""Consumers read for the dependents: their `module` blocks at their default branch.

Each repository of `consumers:` is fetched into a bare clone of its own (`cache_dir/consumers/`),
then every `*.tf` file of every folder is read, and `.terraform/modules/modules.json` where one
is committed (the version each call was installed at: preferred to its constraint), and each
committed `.terraform.lock.hcl` (the providers locked: provider_uses.py). Bounded as
docs are; a file that does not parse is named, never the end of the read. A repository that
cannot be read now keeps the calls it had. See docs/dependents.md."""

from __future__ import annotations

import asyncio
import json
import logging
import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import PurePosixPath

from gitreg.catalog.consumers import ConsumerSpec
from gitreg.catalog.model import Catalog
from gitreg.dependents.index import Caller, CallSite, Problem
from gitreg.dependents.provider_uses import ProviderUse, hcl_of, is_lock_file, locked_in
from gitreg.docs import hcl
from gitreg.docs.extract import module_call
from gitreg.docs.model import ModuleCall
from gitreg.errors import SourceError
from gitreg.git.clone import BareClone
from gitreg.git.location import RepoLocation, redact
from gitreg.git.trees import DocFile, branch_files
from gitreg.pacing import breathe, paced
from gitreg.sources.clone_urls import ClonePlaces
from gitreg.sources.listers import opened_lister
from gitreg.sources.survey import filtered_out, location_of

log = logging.getLogger(__name__)

MODULES_JSON = ".terraform/modules/modules.json"


@dataclass(frozen=True)
class ConsumersRead:
    """What one reading of every consumer found: its call sites, the providers its lock files
    locked, and what could not be read."""

    sites: tuple[CallSite, ...] = ()
    problems: tuple[Problem, ...] = ()
    repositories: int = 0
    uses: tuple[ProviderUse, ...] = ()


Site = CallSite | ProviderUse  # what a consumer's read finds, by its caller


class ConsumerReads:
    """The consumers' last reading (`current`, replaced whole), and what reads them again."""

    def __init__(self) -> None:
        self.current = ConsumersRead()
        self.readings = 0
        self._entries: tuple[tuple[str, Site], ...] = ()  # each site with its entry's key path

    def read(self, catalog: Catalog) -> ConsumersRead:
        """Every consumer of `catalog` read now (paced work: fetches, then parsing). What
        cannot be listed or read now keeps the calls it had at the last reading."""
        last: dict[tuple[str, str], list[Site]] = {}
        for entry, site in self._entries:
            last.setdefault((entry, site.caller.name), []).append(site)
        taken: list[tuple[str, Site]] = []
        problems: list[Problem] = []
        count = 0
        for spec in catalog.consumers:
            kept = [
                (name, sites) for (entry, name), sites in last.items() if entry == spec.key_path
            ]
            listed = _repositories(catalog, spec, problems)
            if listed is None:  # the source cannot be listed now
                taken += [(spec.key_path, site) for _, sites in kept for site in sites]
                continue
            for location in listed:
                count += 1
                name = str(location)
                try:
                    found, trouble = read_repository(catalog, spec, location)
                except SourceError as exc:
                    why = redact(str(exc))
                    log.warning("consumer %s: cannot be read; its last calls kept: %s", name, why)
                    problems.append(Problem(spec.namespace, name, "", why))
                    found, trouble = last.get((spec.key_path, name), []), []
                taken += [(spec.key_path, site) for site in found]
                problems += trouble
        self._entries = tuple(taken)
        sites = tuple(s for _, s in taken if isinstance(s, CallSite))
        uses = tuple(s for _, s in taken if isinstance(s, ProviderUse))
        self.current = ConsumersRead(sites, tuple(problems), count, uses)
        self.readings += 1
        return self.current

    async def keep(self, catalog_of: Callable[[], Catalog]) -> None:
        """Read the consumers now, then at the shortest of their intervals; runs until
        cancelled. Nothing to do without `consumers:`."""
        while True:
            catalog = catalog_of()
            if catalog.consumers:
                try:
                    await paced(partial(self.read, catalog))
                except Exception:  # a bug must not end the reading for good
                    log.exception("reading the consumers failed; trying again")
            every = min((c.interval for c in catalog.consumers), default=60.0)
            await asyncio.sleep(every)


def _repositories(
    catalog: Catalog, spec: ConsumerSpec, problems: list[Problem]
) -> list[RepoLocation] | None:
    """The repositories of one `consumers:` entry; None when its source cannot list them now."""
    if spec.repo is not None:
        return [spec.repo]
    source = spec.source
    assert source is not None
    try:
        with opened_lister(source, catalog.credentials) as lister:
            listed = lister.repositories()
    except Exception as exc:  # SourceUnavailable, SourceRefused: the source's own words
        why = redact(str(exc))
        log.warning("consumers of %s: cannot be listed: %s", source, why)
        problems.append(Problem(spec.namespace, str(source), "", why))
        return None
    places = ClonePlaces.of(source) if source.kind != "folder" else None
    locations = []
    for found in listed:
        if found.archived or filtered_out(source, found):
            continue
        try:
            location = location_of(source, found)
        except ValueError as exc:
            problems.append(Problem(spec.namespace, found.path, "", str(exc)))
            continue
        if places is not None and (why := places.refusal(location.url)):
            problems.append(Problem(spec.namespace, found.path, "", why))
            continue
        locations.append(location)
    return locations


def read_repository(
    catalog: Catalog, spec: ConsumerSpec, location: RepoLocation
) -> tuple[list[Site], list[Problem]]:
    """One consumer's calls and locked providers at its default branch (or `branch:`), and its
    files not read. Raises SourceError when it cannot be fetched or read."""
    clone = BareClone(
        location,
        catalog.cache_dir / "consumers",
        catalog.credential_for(location.url),
        catalog.freshness.fetch_timeout,
    )
    ref = clone.fetch_branch(spec.branch)
    if ref is None:
        return [], []  # an empty repository
    commit, files = branch_files(clone.path, ref, _wanted)
    sites, problems = calls_in(files, spec.namespace, str(location), commit[:12])
    uses, trouble = locked_in(files, spec.namespace, str(location), commit[:12])
    return [*sites, *uses], [*problems, *trouble]


def calls_in(
    files: Sequence[DocFile], namespace: str, repository: str, version: str
) -> tuple[list[CallSite], list[Problem]]:
    """The `module` blocks of `files`, each with the version its folder's `modules.json`
    recorded; the files that could not be read, named."""
    recorded: dict[str, dict[str, str]] = {}
    problems: list[Problem] = []

    def problem(path: str, message: str) -> None:
        problems.append(Problem(namespace, repository, path, message))

    for file in files:
        if file.path == MODULES_JSON or file.path.endswith(f"/{MODULES_JSON}"):
            folder = file.path.removesuffix(MODULES_JSON).rstrip("/")
            try:
                recorded[folder] = _modules_json(file.data)
            except ValueError as exc:
                problem(file.path, str(exc))
    sites: list[CallSite] = []
    for file in files:
        if not file.path.endswith(".tf"):
            continue
        folder = posixpath.dirname(file.path)
        versions = recorded.get(folder, {})
        try:
            calls = _module_calls(file)
        except Exception as exc:  # a shape nobody foresaw is this file's fault, named
            problem(file.path, str(exc)[:300] if isinstance(exc, ValueError) else repr(exc)[:300])
            continue
        for call in calls:
            caller = Caller("consumer", namespace, repository, version, file.path)
            sites.append(CallSite(caller, call, versions.get(call.name, "")))
        breathe()
    return sites, problems


def _module_calls(file: DocFile) -> list[ModuleCall]:
    body = hcl_of(file)
    return [module_call(name, block) for name, block in hcl.labelled(body, "module")]


def _modules_json(data: bytes | None) -> dict[str, str]:
    """A root module's calls (`Key` without a dot) → the version `terraform init` installed."""
    if data is None:
        raise ValueError("too large: not read")
    try:
        document = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"not JSON: {exc}") from None
    modules = document.get("Modules") if isinstance(document, dict) else None
    if not isinstance(modules, list):
        raise ValueError('no "Modules" list')
    found = {}
    for item in modules:
        if isinstance(item, dict) and isinstance(item.get("Key"), str):
            key, version = item["Key"], item.get("Version")
            if key and "." not in key and isinstance(version, str) and version:
                found[key] = version
    return found


def _wanted(path: str) -> bool:
    """The `*.tf` files outside `.terraform/` (downloaded code), committed modules.json and
    lock files."""
    parts = PurePosixPath(path).parts
    if ".terraform" in parts:
        return path == MODULES_JSON or path.endswith(f"/{MODULES_JSON}")
    return path.endswith(".tf") or is_lock_file(path)
