"""One discovery of one source: what its listing makes, beside what the last discovery made.

Each repository listed becomes its modules (its `.gitreg.yaml`, else its name), or is skipped
with a reason. A repository gone from the listing, or archived, keeps the modules it had, marked
removed: its published versions never vanish. A listing that fails keeps the last discovery,
with the failure said; one that would drop more than half of the source's repositories at once
is held, and applied only when HOLD_CONFIRMATIONS discoveries in a row see the same drop."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from pathlib import Path

from gitreg.address import ModuleAddress
from gitreg.catalog.declaration import EntryDefaults, read_declaration
from gitreg.catalog.model import AuthSettings, ModuleSpec, SourceSpec
from gitreg.catalog.namespace_scope import NamespaceScope
from gitreg.errors import ConfigError, SourceError
from gitreg.git.location import RepoLocation, redact
from gitreg.sources.found import FoundRepository, Lister, SourceRefused, SourceUnavailable
from gitreg.sources.naming import module_of

log = logging.getLogger(__name__)

HOLD_CONFIRMATIONS = 3

# A repository's modules, and what of its `.gitreg.yaml` was not read.
Made = tuple[tuple[ModuleSpec, ...], tuple[str, ...]]
# A repository's `.gitreg.yaml` at its default branch, or None when it holds none.
ReadDeclaration = Callable[[FoundRepository, RepoLocation], bytes | None]


@dataclass(frozen=True)
class DiscoveredModule:
    spec: ModuleSpec
    source: str  # the source's key path, `sources[0]`
    repository: str  # its path on the source
    removed: bool = False  # gone from the source, or archived: its published versions serve
    hidden: bool = False  # removed, and the source's on_removed is hide


@dataclass(frozen=True)
class Skipped:
    repository: str
    why: str


@dataclass(frozen=True)
class Discovery:
    """What a source's last applied discovery found; `error` and `held` say why a later one
    was not applied."""

    source: str
    at: float  # when it was applied (seconds since the epoch); 0: never
    repositories: tuple[str, ...] = ()  # listed and served (removed ones aside)
    modules: tuple[DiscoveredModule, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    problems: tuple[str, ...] = ()  # repositories whose .gitreg.yaml is refused, and why
    notes: tuple[str, ...] = ()  # what a .gitreg.yaml holds that this gitreg does not read
    error: str = ""  # the last listing's failure: unavailable, or refused
    refused: bool = False  # the failure is a refusal (a token without access, no such group)
    held: str = ""  # a drop of more than half, not applied
    held_seen: int = 0  # discoveries in a row that saw that drop
    retry_after: float = 0.0  # seconds the source asked to be left alone (not kept on disk)

    @property
    def removed(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(m.repository for m in self.modules if m.removed))


def discover(
    spec: SourceSpec,
    lister: Lister,
    read: ReadDeclaration,
    last: Discovery | None,
    now: float,
    auth: AuthSettings | None = None,
    workers: int = 1,
) -> Discovery:
    """The source's discovery now, given its last one (None at the first); `auth`: the
    catalog's, which decides what a monorepo's archives may hold; `workers`: repositories
    read at once."""
    last = last or Discovery(spec.key_path, 0.0)
    try:
        listed = lister.repositories()
    except SourceUnavailable as exc:
        why = f"unavailable: {redact(str(exc))}"
        return replace(last, error=why, refused=False, retry_after=exc.retry_after or 0.0)
    except SourceRefused as exc:
        return replace(last, error=f"refused: {redact(str(exc))}", refused=True, retry_after=0.0)
    fresh = _made(spec, listed, read, last, auth, workers)
    before = set(last.repositories)
    dropped = before - set(fresh.repositories)
    if len(before) >= 2 and len(dropped) * 2 > len(before):
        seen = last.held_seen + 1 if last.held else 1
        if seen < HOLD_CONFIRMATIONS:
            held = (
                f"would drop {len(dropped)} of its {len(before)} repositories at once: held"
                f" ({seen} of {HOLD_CONFIRMATIONS} discoveries in a row before it applies)"
            )
            return replace(last, error="", refused=False, held=held, held_seen=seen)
        log.warning(
            "%s: %d of its %d repositories are gone at %d discoveries in a row: applied",
            spec.key_path,
            len(dropped),
            len(before),
            seen,
        )
    return replace(fresh, at=now)


def _made(
    spec: SourceSpec,
    listed: Sequence[FoundRepository],
    read: ReadDeclaration,
    last: Discovery,
    auth: AuthSettings | None,
    workers: int,
) -> Discovery:
    before: dict[str, list[DiscoveredModule]] = {}
    for module in last.modules:
        before.setdefault(module.repository, []).append(module)
    repositories: list[str] = []
    modules: list[DiscoveredModule] = []
    skipped: list[Skipped] = []
    problems: list[str] = []
    notes: list[str] = []
    taken = []
    for found in listed:
        why = _filtered_out(spec, found) or ("archived" if found.archived else "")
        if why:
            skipped.append(Skipped(found.path, why))
        else:
            taken.append(found)

    def outcome(found: FoundRepository) -> Made | Exception:
        try:
            return _modules_of(spec, found, read, auth)
        except (ConfigError, SourceError, ValueError) as exc:
            return exc

    # Reading a forge's repository fetches its default branch: a few at a time, not one by one.
    with ThreadPoolExecutor(max(1, workers)) as pool:
        outcomes = list(pool.map(outcome, taken))
    for found, result in zip(taken, outcomes, strict=True):
        if isinstance(result, ValueError):  # a name that makes no module
            skipped.append(Skipped(found.path, redact(str(result))))
            continue
        if isinstance(result, Exception):  # a .gitreg.yaml refused, or not readable
            reason = redact(str(result))
            problems.append(f"{found.path}: {reason}")
            # A repository that served and now cannot be read keeps serving what it had.
            if found.path in before:
                repositories.append(found.path)
                modules += [replace(m, removed=False, hidden=False) for m in before[found.path]]
            else:
                skipped.append(Skipped(found.path, reason.splitlines()[0]))
            continue
        made, ignored = result
        repositories.append(found.path)
        modules += [DiscoveredModule(m, spec.key_path, found.path) for m in made]
        notes += [f"{found.path}/.gitreg.yaml: {note}" for note in ignored]
    # A module served before and not made now (its repository gone, archived, filtered out or
    # no longer declaring it) keeps its published versions, marked removed: never a silent drop.
    made_now = {(m.repository, m.spec.address.key) for m in modules}
    modules += [
        _removed(spec, m)
        for m in last.modules
        if (m.repository, m.spec.address.key) not in made_now
    ]
    return Discovery(
        spec.key_path,
        last.at,
        tuple(repositories),
        tuple(modules),
        tuple(skipped),
        tuple(problems),
        tuple(notes),
    )


def _removed(spec: SourceSpec, module: DiscoveredModule) -> DiscoveredModule:
    return replace(module, removed=True, hidden=spec.on_removed == "hide")


def _filtered_out(spec: SourceSpec, found: FoundRepository) -> str:
    """Why the source's filters leave the repository out, or ""."""
    if spec.include and not any(fnmatchcase(found.name, p) for p in spec.include):
        return f"its name matches none of include ({', '.join(spec.include)})"
    excluded = next((p for p in spec.exclude if fnmatchcase(found.name, p)), None)
    if excluded:
        return f"its name matches exclude {excluded!r}"
    carried = {t.lower() for t in found.topics}
    missing = [t for t in spec.topics if t not in carried]
    if missing:
        return f"it does not carry the topics {', '.join(missing)}"
    return ""


def location_of(spec: SourceSpec, found: FoundRepository) -> RepoLocation:
    """Where the repository is fetched from: its folder, or the clone URL the source asks for.
    ValueError when the source offers none."""
    if found.clone_local:
        return RepoLocation.parse(found.clone_local, Path("/"))
    url = found.clone_ssh if spec.clone == "ssh" else found.clone_https
    if not url:
        raise ValueError(f"the source gives no {spec.clone} clone URL for it")
    return RepoLocation.parse(url, Path("/"))


def _modules_of(
    spec: SourceSpec, found: FoundRepository, read: ReadDeclaration, auth: AuthSettings | None
) -> Made:
    """The repository's modules, and what of its `.gitreg.yaml` was not read."""
    location = location_of(spec, found)
    defaults = EntryDefaults(
        location,
        spec.namespace,
        NamespaceScope(spec.allow_namespaces).covers,
        spec.tags,
        spec.moved_tags,
        spec.deleted_tags,
        spec.webhook_secret,
        auth,
    )
    text = read(found, location)
    if text is not None:
        declared = read_declaration(text, found.path, defaults)
        return declared.modules, declared.ignored
    name, system = module_of(found.name)
    address = ModuleAddress.parse(spec.namespace, name, system)
    module = ModuleSpec(
        address=address,
        repo=location,
        tags=spec.tags,
        moved_tags=spec.moved_tags,
        deleted_tags=spec.deleted_tags,
        webhook_secret=spec.webhook_secret,
    )
    return (module,), ()
