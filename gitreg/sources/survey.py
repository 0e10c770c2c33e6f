"""One survey of one source: what its listing makes, beside what the last survey made.

Each repository listed becomes its modules and providers (its `.gitreg.yaml`, else its name),
or is skipped with a reason; a provider's releases are the repository's own, on the forge that
listed it. A repository gone from the listing, or archived, keeps the modules and providers it
had, marked removed: its published versions never vanish. A listing that fails keeps the last
survey, with the failure said; one that would drop more than half of the source's
repositories at once is held, and applied only when HOLD_CONFIRMATIONS surveys in a row see
the same drop."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from pathlib import Path

from gitreg.address import ModuleAddress, provider_problem
from gitreg.catalog.auth_settings import AuthSettings
from gitreg.catalog.declaration import EntryDefaults, read_declaration
from gitreg.catalog.namespace_scope import NamespaceScope
from gitreg.catalog.providers import releases_folder
from gitreg.catalog.specs import ForgeReleases, ModuleSpec, ProviderSpec, SourceSpec
from gitreg.errors import ConfigError, SourceError
from gitreg.git.location import RepoLocation, redact
from gitreg.sources.clone_urls import ClonePlaces
from gitreg.sources.found import FoundRepository, Lister, SourceRefused, SourceUnavailable
from gitreg.sources.naming import module_of, provider_of

log = logging.getLogger(__name__)

HOLD_CONFIRMATIONS = 3

# A repository's modules, what of its `.gitreg.yaml` was not read, and its providers.
Made = tuple[tuple[ModuleSpec, ...], tuple[str, ...], tuple[ProviderSpec, ...]]
# A repository's `.gitreg.yaml` at its default branch, or None when it holds none.
ReadDeclaration = Callable[[FoundRepository, RepoLocation], bytes | None]


@dataclass(frozen=True)
class FoundModule:
    spec: ModuleSpec
    source: str  # the source's key path, `sources[0]`
    repository: str  # its path on the source
    removed: bool = False  # gone from the source, or archived: its published versions serve
    hidden: bool = False  # removed, and the source's on_removed is hide


@dataclass(frozen=True)
class FoundProvider:
    spec: ProviderSpec  # its releases: the repository's, on the source's forge
    source: str
    repository: str
    removed: bool = False  # gone from the source, or archived: what was fetched serves
    hidden: bool = False


@dataclass(frozen=True)
class Skipped:
    repository: str
    why: str
    clone_refused: bool = False  # its clone URL is no place on its forge (sources/clone_urls.py)


@dataclass(frozen=True)
class Survey:
    """What a source's last applied survey found; `error` and `held` say why a later one
    was not applied."""

    source: str
    at: float  # when it was applied (seconds since the epoch); 0: never
    repositories: tuple[str, ...] = ()  # listed and served (removed ones aside)
    modules: tuple[FoundModule, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    problems: tuple[str, ...] = ()  # repositories whose .gitreg.yaml is refused, and why
    notes: tuple[str, ...] = ()  # what a .gitreg.yaml holds that this gitreg does not read
    error: str = ""  # the last listing's failure: unavailable, or refused
    refused: bool = False  # the failure is a refusal (a token without access, no such group)
    held: str = ""  # a drop of more than half, not applied
    held_seen: int = 0  # surveys in a row that saw that drop
    retry_after: float = 0.0  # seconds the source asked to be left alone (not kept on disk)
    providers: tuple[FoundProvider, ...] = ()

    @property
    def removed(self) -> tuple[str, ...]:
        """Repositories gone from the source, or archived, whose versions still serve."""
        return tuple(dict.fromkeys(r for r, removed, _ in self._served_from() if removed))

    @property
    def hidden(self) -> tuple[str, ...]:
        """Of those, the ones left out of lists (on_removed: hide)."""
        return tuple(sorted({r for r, _, hidden in self._served_from() if hidden}))

    def _served_from(self) -> list[tuple[str, bool, bool]]:
        found: list[FoundModule | FoundProvider] = [*self.modules, *self.providers]
        return [(f.repository, f.removed, f.hidden) for f in found]


def survey(
    spec: SourceSpec,
    lister: Lister,
    read: ReadDeclaration,
    last: Survey | None,
    now: float,
    auth: AuthSettings | None = None,
    workers: int = 1,
    *,
    cache_dir: Path,
) -> Survey:
    """The source's survey now, given its last one (None at the first); `auth`: the
    catalog's, which decides what a monorepo's archives may hold; `workers`: repositories
    read at once; `cache_dir`: the catalog's, which its providers' releases are fetched
    into."""
    last = last or Survey(spec.key_path, 0.0)
    try:
        listed = lister.repositories()
    except SourceUnavailable as exc:
        why = f"unavailable: {redact(str(exc))}"
        return replace(last, error=why, refused=False, retry_after=exc.retry_after or 0.0)
    except SourceRefused as exc:
        return replace(last, error=f"refused: {redact(str(exc))}", refused=True, retry_after=0.0)
    fresh = _made(spec, listed, read, last, auth, workers, cache_dir)
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
    last: Survey,
    auth: AuthSettings | None,
    workers: int,
    cache_dir: Path,
) -> Survey:
    before: dict[str, list[FoundModule]] = {}
    for module in last.modules:
        before.setdefault(module.repository, []).append(module)
    before_providers: dict[str, list[FoundProvider]] = {}
    for provider in last.providers:
        before_providers.setdefault(provider.repository, []).append(provider)
    repositories: list[str] = []
    modules: list[FoundModule] = []
    providers: list[FoundProvider] = []
    skipped: list[Skipped] = []
    problems: list[str] = []
    notes: list[str] = []
    taken = []
    places = ClonePlaces.of(spec) if spec.kind != "folder" else None
    for found in listed:
        why = filtered_out(spec, found) or ("archived" if found.archived else "")
        url = clone_url_of(spec, found)
        # A clone URL outside the forge is never fetched, nor a folder made for it. (A folder
        # source's repositories are this machine's by design; no URL is location_of's to say.)
        refused = places.refusal(url) if places and url and not why else ""
        if why or refused:
            skipped.append(Skipped(found.path, why or refused, clone_refused=bool(refused)))
        else:
            taken.append(found)

    def outcome(found: FoundRepository) -> Made | Exception:
        try:
            return _made_of(spec, found, read, auth, cache_dir)
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
            if found.path in before or found.path in before_providers:
                repositories.append(found.path)
                modules += [
                    replace(m, removed=False, hidden=False) for m in before.get(found.path, [])
                ]
                providers += [
                    replace(p, removed=False, hidden=False)
                    for p in before_providers.get(found.path, [])
                ]
            else:
                skipped.append(Skipped(found.path, reason.splitlines()[0]))
            continue
        made, ignored, provided = result
        repositories.append(found.path)
        modules += [FoundModule(m, spec.key_path, found.path) for m in made]
        providers += [FoundProvider(p, spec.key_path, found.path) for p in provided]
        notes += [f"{found.path}/.gitreg.yaml: {note}" for note in ignored]
    # A module served before and not made now (its repository gone, archived, filtered out or
    # no longer declaring it) keeps its published versions, marked removed: never a silent drop.
    made_now = {(m.repository, m.spec.address.key) for m in modules}
    modules += [
        _removed(spec, m)
        for m in last.modules
        if (m.repository, m.spec.address.key) not in made_now
    ]
    provided_now = {(p.repository, p.spec.key) for p in providers}
    providers += [
        replace(p, removed=True, hidden=spec.on_removed == "hide")
        for p in last.providers
        if (p.repository, p.spec.key) not in provided_now
    ]
    return Survey(
        spec.key_path,
        last.at,
        tuple(repositories),
        tuple(modules),
        tuple(skipped),
        tuple(problems),
        tuple(notes),
        providers=tuple(providers),
    )


def _removed(spec: SourceSpec, module: FoundModule) -> FoundModule:
    return replace(module, removed=True, hidden=spec.on_removed == "hide")


def filtered_out(spec: SourceSpec, found: FoundRepository) -> str:
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


def clone_url_of(spec: SourceSpec, found: FoundRepository) -> str:
    """The clone URL the source asks for (`clone:`), as the forge wrote it; "" where none."""
    return found.clone_ssh if spec.clone == "ssh" else found.clone_https


def location_of(spec: SourceSpec, found: FoundRepository) -> RepoLocation:
    """Where the repository is fetched from: its folder, or the clone URL the source asks for.
    ValueError when the source offers none."""
    if found.clone_local:
        return RepoLocation.parse(found.clone_local, Path("/"))
    url = clone_url_of(spec, found)
    if not url:
        raise ValueError(f"the source gives no {spec.clone} clone URL for it")
    return RepoLocation.parse(url, Path("/"))


def own_releases(spec: SourceSpec, repository: str) -> ForgeReleases | str:
    """Where the releases of `repository` (its path on the source) are read from: the source's
    forge, with its token; or why they cannot be (a source with no releases API)."""
    if spec.kind == "folder":
        return "a folder source has no releases API: list it under providers: with artifacts"
    if spec.kind == "bitbucket":
        return "Bitbucket Data Center has no releases API: list it under providers: with artifacts"
    return ForgeReleases(
        spec.kind,
        spec.where,
        repository,
        spec.token,
        spec.interval,
        webhook_secret=spec.webhook_secret,  # its release deliveries are signed as the source's
    )


def _made_of(
    spec: SourceSpec,
    found: FoundRepository,
    read: ReadDeclaration,
    auth: AuthSettings | None,
    cache_dir: Path,
) -> Made:
    """The repository's modules, what of its `.gitreg.yaml` was not read, and its providers."""
    location = location_of(spec, found)
    releases = own_releases(spec, found.path)
    defaults = EntryDefaults(
        location,
        spec.namespace,
        NamespaceScope(spec.allow_namespaces).covers,
        spec.tags,
        spec.moved_tags,
        spec.deleted_tags,
        spec.webhook_secret,
        auth,
        releases=releases if isinstance(releases, ForgeReleases) else None,
        no_releases=releases if isinstance(releases, str) else "",
        cache_dir=cache_dir,
        signed_tags=spec.signed_tags,
        publish_when=spec.publish_when,
    )
    text = read(found, location)
    if text is not None:
        declared = read_declaration(text, found.path, defaults)
        return declared.modules, declared.ignored, declared.providers
    kind = provider_of(found.name)
    if kind is not None:
        problem = provider_problem(spec.namespace, "namespace")
        if isinstance(releases, str) or problem:
            why = releases if isinstance(releases, str) else f"the source's {problem}"
            raise ValueError(f"terraform-provider-<TYPE> is a provider's repository, but {why}")
        folder = releases_folder(cache_dir, spec.namespace, kind)
        return (), (), (ProviderSpec(spec.namespace, kind, folder, releases=releases),)
    name, system = module_of(found.name)
    address = ModuleAddress.parse(spec.namespace, name, system)
    module = ModuleSpec(
        address=address,
        repo=location,
        tags=spec.tags,
        moved_tags=spec.moved_tags,
        deleted_tags=spec.deleted_tags,
        webhook_secret=spec.webhook_secret,
        signed_tags=spec.signed_tags,
        publish_when=spec.publish_when,
    )
    return (module,), (), ()
