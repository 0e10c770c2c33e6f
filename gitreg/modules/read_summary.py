"""What a start or a reload read, said in one line.

The line gives the modules and versions served, what changed (modules added, removed or with
other versions, versions new), the repositories read and how many failed, and the time it took.
A line per module (or per version) is for DEBUG: at 2,000 modules it was 2,000 INFO lines at
every start."""

from __future__ import annotations

from dataclasses import dataclass

from gitreg.modules.index import VersionIndex
from gitreg.pacing import breathe


@dataclass(frozen=True)
class ReadSummary:
    repositories: int  # read (or fetched)
    failed: int  # of those, the ones that could not be
    modules: int
    versions: int
    added: int  # modules new to the index
    removed: int  # modules no longer in it
    changed: int  # modules in both, with other versions
    new_versions: int
    ignored: int  # tags left out, for every module (DEBUG says which, and why)
    seconds: float

    def totals(self) -> str:
        """What is served now, and the repositories read for it, in how long."""
        failed = f", {self.failed} failed" if self.failed else ""
        return (
            f"{_count(self.modules, 'module')}, {_count(self.versions, 'version')};"
            f" {_count(self.repositories, 'repository', 'repositories')} read{failed}"
            f" in {self.seconds:.1f} s"
        )

    def __str__(self) -> str:
        """The totals, and what changed."""
        modules = ", ".join(
            f"{n:,} {what}"
            for what, n in (
                ("added", self.added),
                ("removed", self.removed),
                ("changed", self.changed),
            )
            if n
        )
        parts = [
            self.totals(),
            f"modules {modules}" if modules else "",
            _count(self.new_versions, "new version") if self.new_versions else "",
            _count(self.ignored, "tag") + " ignored" if self.ignored else "",
        ]
        return "; ".join(p for p in parts if p)


def summarize(
    before: VersionIndex, after: VersionIndex, repositories: int, failed: int, seconds: float
) -> ReadSummary:
    """The summary of a read that turned `before` into `after`."""
    old = dict(before.items())
    new = dict(after.items())
    changed = new_versions = 0
    for key, entry in new.items():
        previous = old.get(key)
        if previous is not None and previous.versions is entry.versions:
            continue  # kept as it was (a reload keeps every entry it did not read again)
        breathe()
        releases = set(entry.versions.releases)
        known = set(previous.versions.releases) if previous is not None else set()
        new_versions += len(releases - known)
        if previous is not None and releases != known:
            changed += 1
    return ReadSummary(
        repositories=repositories,
        failed=failed,
        modules=len(new),
        versions=sum(len(e.versions.releases) for e in new.values()),
        added=len(new.keys() - old.keys()),
        removed=len(old.keys() - new.keys()),
        changed=changed,
        new_versions=new_versions,
        ignored=sum(len(e.versions.ignored) for e in new.values()),
        seconds=seconds,
    )


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else many or one + 's'}"
