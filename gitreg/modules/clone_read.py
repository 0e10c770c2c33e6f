"""What a clone's tags make: each module's entry, through its tag policies and the ledger.

Each version carries the `deprecated:` line of `.gitreg.yaml` at its commit (read once a commit:
a commit never changes). New tags are recorded in the ledger of published tags here, and held in
the clone once published (so a tag moved or deleted upstream keeps its commit). See
docs/how-it-works/internals.md."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass, replace
from functools import partial

from gitreg.catalog.declaration import DECLARATION, VERSION_FILE_MOST, version_deprecation
from gitreg.errors import SourceError, StateUnavailable
from gitreg.git.clone import BareClone, CloneView, TagRef
from gitreg.git.location import RepoLocation
from gitreg.git.trees import root_files, tagger_times
from gitreg.modules.cooldown import held, held_back
from gitreg.modules.index import ModuleEntry
from gitreg.modules.resolve import ModuleVersions, resolve_versions
from gitreg.modules.signed_tags import held_to_signers
from gitreg.modules.snapshot import RegistrySnapshot, unread_entry
from gitreg.modules.tag_policy import effective_tags
from gitreg.state.ledger import Published


@dataclass(frozen=True)
class CloneRead:
    tags: tuple[TagRef, ...]
    entries: list[ModuleEntry]
    # Why new tags are left out, when the ledger could not record them (published only once it
    # can); None when every tag read is served.
    pending: str | None = None
    ledger_version: object = None  # the ledger's, as read (a poll rereads on a change)
    # The whole ledger once this read recorded new tags in it (its entries were made from it);
    # None when it recorded none.
    published: Mapping[str, str] | None = None


def read_clone(
    snapshot: RegistrySnapshot, location: RepoLocation, clone: BareClone, now: float
) -> CloneRead:
    """The clone's tags and the entries they make for `snapshot`'s modules of `location`, with
    the versions `publish_when` holds back at `now` left pending. SourceError when it cannot be
    read: a corrupt clone is one repository's fault, and must not stop the others."""
    try:
        tags = clone.tags()
        ledger = snapshot.ledgers[location]
        in_ledger = ledger.read()
        published = {tag: p.commit for tag, p in in_ledger.items()}
        pending = None
        recorded: dict[str, str] | None = None
        hold_back = _held_at(snapshot, location, clone, tags, now)
        with clone.open() as view:
            entries = _entries(snapshot, location, clone, view, tags, published)
            entries = hold_back(entries, in_ledger)
            new = {
                r.tag: r.commit
                for e in entries
                for r in (*e.versions.releases, *(p.release for p in e.pending))
                if r.tag not in published
            }
            waiting = {p.release.tag for e in entries for p in e.pending}
            if new:
                try:
                    in_ledger = ledger.record(new, waiting, now)
                    agreed = recorded = {tag: p.commit for tag, p in in_ledger.items()}
                except StateUnavailable as exc:
                    pending = f"{exc}; {len(new)} new tags wait for it"
                    entries = [_without(e, new) for e in entries]
                else:
                    if any(agreed.get(tag) != commit for tag, commit in new.items()):
                        # Another replica saw these tags first, at other commits: its win.
                        entries = _entries(snapshot, location, clone, view, tags, agreed)
                        entries = hold_back(entries, in_ledger)
                    clone.keep(
                        {
                            tag: agreed[tag]
                            for tag in new
                            if tag in agreed and view.has_commit(agreed[tag])
                        }
                    )
            due = _due(entries, in_ledger) - waiting
            if due and pending is None:
                # Served now (its time came, or min_age was shortened): published for good.
                with suppress(StateUnavailable):
                    in_ledger = ledger.publish(due)
                    recorded = {tag: p.commit for tag, p in in_ledger.items()}
        return CloneRead(tuple(tags), entries, pending, ledger.version(), recorded)
    except SourceError:
        raise
    except Exception as exc:
        raise SourceError(f"cannot read the clone of {clone.location}: {exc!r}") from exc


Held = Callable[[list[ModuleEntry], Mapping[str, Published]], list[ModuleEntry]]


def _held_at(
    snapshot: RegistrySnapshot,
    location: RepoLocation,
    clone: BareClone,
    tags: list[TagRef],
    now: float,
) -> Held:
    """What holds back the entries of `location` at `now`: nothing without `publish_when`."""
    if not any(held(spec) for spec in snapshot.specs[location]):
        return lambda entries, ledger: entries
    objects = _tag_objects(clone, tags)
    annotated = tagger_times(clone.path, {o for o, _ in objects.values() if o})
    tagged = {name: float(annotated[o]) for name, (o, _) in objects.items() if o in annotated}

    def hold(entries: list[ModuleEntry], ledger: Mapping[str, Published]) -> list[ModuleEntry]:
        made = []
        for e in entries:
            versions, pending = held_back(e.spec, e.versions, ledger, tagged, now)
            made.append(ModuleEntry(e.spec, e.clone_path, versions, e.changes, pending))
        return made

    return hold


def _due(entries: list[ModuleEntry], ledger: Mapping[str, Published]) -> set[str]:
    """The tags served whose ledger entry still says pending."""
    return {
        r.tag
        for e in entries
        for r in e.versions.releases
        if (p := ledger.get(r.tag)) is not None and p.pending
    }


def unread(snapshot: RegistrySnapshot, location: RepoLocation, clone: BareClone) -> CloneRead:
    """The modules of a repository with no clone yet, or one that cannot be read: listed, with
    no versions, known to the registry and not read."""
    return CloneRead((), [unread_entry(spec, clone) for spec in snapshot.specs[location]])


def _entries(
    snapshot: RegistrySnapshot,
    location: RepoLocation,
    clone: BareClone,
    view: CloneView,
    tags: list[TagRef],
    published: dict[str, str],
) -> list[ModuleEntry]:
    specs = snapshot.specs[location]
    served = [
        r for s in specs if (e := snapshot.index.get(*s.address.key)) for r in e.versions.releases
    ]
    # Commit → its `deprecated:` line, as the entries served read it: only new commits are read.
    declared = {r.commit: r.deprecated for r in served}
    # The signer of each release served (signed_tags.py): only new tags are verified.
    signed = {(r.tag, r.commit): r.signer for r in served if r.signer}
    objects = _tag_objects(clone, tags) if any(s.signed_tags for s in specs) else {}
    resolved = []
    for spec in specs:
        effective, changes = effective_tags(spec, tags, published, view.has_commit)
        has_folder = partial(view.has_folder, folder=spec.path)
        versions = resolve_versions(spec, effective, has_folder)
        versions = held_to_signers(spec, versions, published, signed, objects, clone.path)
        resolved.append((spec, versions, tuple(changes)))
    unread = {r.commit for _, v, _ in resolved for r in v.releases} - declared.keys()
    if unread:  # at once: one git process for every commit of the repository not read yet
        files = root_files(clone.path, sorted(unread), DECLARATION, most=VERSION_FILE_MOST)
        declared.update((c, version_deprecation(files[c]) if c in files else "") for c in unread)
    return [
        ModuleEntry(spec, clone.path, _declared(versions, declared), changes)
        for spec, versions, changes in resolved
    ]


def _tag_objects(clone: BareClone, tags: list[TagRef]) -> dict[str, tuple[str, str | None]]:
    """Each tag's object and the commit it peels to, by name."""
    objects = {ref.removeprefix("refs/tags/"): sha for ref, sha in clone.local_tags().items()}
    return {t.name: (objects.get(t.name, ""), t.commit) for t in tags}


def _declared(versions: ModuleVersions, declared: dict[str, str]) -> ModuleVersions:
    """`versions`, each with the `deprecated:` line of `.gitreg.yaml` at its commit."""
    releases = tuple(
        r._replace(deprecated=reason) if (reason := declared.get(r.commit, "")) else r
        for r in versions.releases
    )
    return replace(versions, releases=releases)


def _without(entry: ModuleEntry, tags: dict[str, str]) -> ModuleEntry:
    """The entry without the releases of `tags` (not published yet)."""
    releases = tuple(r for r in entry.versions.releases if r.tag not in tags)
    pending = tuple(p for p in entry.pending if p.release.tag not in tags)
    versions = replace(entry.versions, releases=releases)
    return ModuleEntry(entry.spec, entry.clone_path, versions, entry.changes, pending)
