"""An operator's decision (`gitreg accept`): a moved tag now publishes the commit it points at.
The ledger records it, the clone holds the commit, and the repository is read again."""

from __future__ import annotations

from typing import Protocol

from gitreg.errors import NotFound
from gitreg.git.location import RepoLocation
from gitreg.modules.snapshot import RegistrySnapshot
from gitreg.modules.status import Mechanism
from gitreg.tags import parse_version, released_version


class AcceptingSync(Protocol):
    """What an acceptance asks of the module sync: the snapshot served, and a repository read
    again from its clone (`ModuleSync.sync_repo`)."""

    @property
    def snapshot(self) -> RegistrySnapshot: ...

    def sync_repo(
        self, location: RepoLocation, mechanism: Mechanism, fetch: bool = True
    ) -> bool: ...


def accept(sync: AcceptingSync, namespace: str, name: str, system: str, version: str) -> str:
    """What was accepted, in one line; NotFound when the version has no moved tag."""
    snapshot = sync.snapshot
    entry = snapshot.index.get(namespace, name, system)
    if entry is None:
        raise NotFound(f"{namespace}/{name}/{system}: no such module")
    wanted = str(parse_version(version.removeprefix("v")))
    clone = snapshot.clones[entry.spec.repo]
    for change in entry.changes:
        released = released_version(entry.spec.tags, change.tag)
        if released is not None and change.current and str(released) == wanted:
            snapshot.ledgers[entry.spec.repo].accept(change.tag, change.current)
            clone.keep({change.tag: change.current})
            sync.sync_repo(entry.spec.repo, "cli", fetch=False)
            commit = change.current[:12]
            return f"{entry.spec.address} {wanted}: tag {change.tag} now publishes {commit}"
    raise NotFound(f"{entry.spec.address} {wanted}: no moved tag to accept")
