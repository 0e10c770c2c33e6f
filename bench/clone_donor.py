"""Adding one repository to a cache of 1,000 and 10,000 clones: the search for another clone of
the same repository (a moved server's, to seed from), by the index of clones by identity
(`gitreg.git.seeding.donor`) against the marker scan it replaced (every clone's marker file
read), in the same run; a whole add (a clone made and fetched from a local repository of one
tag) with each; and the one-time entering of a cache made before the index.

    python -m bench.clone_donor [--clones 1000 10000] [--rounds 5]

The clone folders are folders with an `objects` folder and a marker file, as many as asked,
and one real clone for a moved repository to find; everything is in the page cache (warm), the
marker scan's best case.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from unittest import mock

from gitreg.git import seeding
from gitreg.git.clone import BareClone
from gitreg.git.location import RepoLocation
from tests.support.gitrepo import GitRepo, module_files


def _marker_scan(clones: Path, identity: str, new: Path) -> Path | None:
    """The search before the index, as gitreg.git.seeding had it: the baseline."""
    for path in sorted(clones.glob(f"*.git/{seeding.MARK}")):
        if path.parent == new:
            continue
        try:
            if path.read_text().strip() == identity:
                return path.parent
        except OSError:
            continue
    return None


def _timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def _fill(clones: Path, count: int, *, index: bool) -> None:
    for n in range(count):
        folder = clones / f"repo-{n:05}-{n:012x}.git"
        (folder / "objects").mkdir(parents=True)
        identity = f"git.example.org/org/repo-{n}"
        if index:
            seeding.enlist(folder, identity, newest=False)
        else:
            (folder / seeding.MARK).write_text(identity + "\n")


def _add(cache: Path, url: str) -> None:
    """One repository added, as a sync adds it; then removed, for the next round."""
    clone = BareClone(RepoLocation.parse(url, cache), cache, None, 30.0)
    clone.fetch()
    shutil.rmtree(clone.path)


def _measure(root: Path, count: int, rounds: int) -> None:
    cache = root / f"cache-{count}"
    clones = cache / "git"
    _fill(clones, count, index=True)
    work = GitRepo(root / f"work-{count}")
    work.release("v1.0.0", module_files("1"))
    BareClone(RepoLocation.parse(str(work.path), cache), cache, None, 30.0).fetch()
    fresh = GitRepo(root / f"fresh-{count}")
    fresh.release("v1.0.0", module_files("2"))
    moved, new = str(work.path), clones / "new.git"  # a moved repository's identity, a new one's
    absent = "git.example.org/org/absent"
    times: dict[str, list[float]] = {}
    for _ in range(rounds):
        for name, action in (
            ("search, new repository: marker scan", lambda: _marker_scan(clones, absent, new)),
            ("search, new repository: index", lambda: seeding.donor(clones, absent, new)),
            ("search, moved repository: marker scan", lambda: _marker_scan(clones, moved, new)),
            ("search, moved repository: index", lambda: seeding.donor(clones, moved, new)),
        ):
            times.setdefault(name, []).append(statistics.median(_timed(action) for _ in range(3)))
        with mock.patch.object(seeding, "donor", _marker_scan):  # the add as it was
            times.setdefault("add, new repository: marker scan", []).append(
                _timed(lambda: _add(cache, str(fresh.path)))
            )
        times.setdefault("add, new repository: index", []).append(
            _timed(lambda: _add(cache, str(fresh.path)))
        )
    legacy = root / f"legacy-{count}" / "git"
    _fill(legacy, count, index=False)
    once = _timed(lambda: seeding.donor(legacy, absent, legacy / "new.git"))
    print(f"\n{count:,} clone folders, median of {rounds} rounds")
    print(f"{'':<40} {'ms':>9}")
    for name, values in times.items():
        print(f"{name:<40} {statistics.median(values) * 1000:>9.3f}")
    print(f"{'entering a previous cache, once':<40} {once * 1000:>9.3f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clones", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for count in args.clones:
            _measure(Path(tmp), count, args.rounds)


if __name__ == "__main__":
    main()
