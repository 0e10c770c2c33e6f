"""A moved repository's old clone is found by one look in the index of clones by identity:
adding a repository opens no file of another clone, however many there are."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from gitreg.git.clone import BareClone
from gitreg.git.location import RepoLocation
from gitreg.git.seeding import INDEX, INDEXED, MARK, donor, enlist, index_key
from tests.support.gitrepo import GitRepo, module_files

IDENTITY = "git.example.org/org/repo"

# One add after another, in a process of its own, so that strace sees it alone.
_ADD = """
import sys
from pathlib import Path
from gitreg.git.clone import BareClone
from gitreg.git.location import RepoLocation
cache = Path(sys.argv[1])
for text in sys.argv[2:]:
    BareClone(RepoLocation.parse(text, cache), cache, None, 30.0).fetch()
"""


def _folder(clones: Path, name: str, identity: str | None = None) -> Path:
    """A clone folder (no Git in it: the index only asks whether it has `objects`), with the
    marker file that names its identity when one is given, as every version wrote it."""
    folder = clones / f"{name}.git"
    (folder / "objects").mkdir(parents=True)
    if identity is not None:
        (folder / MARK).write_text(identity + "\n")
    return folder


def _strace_traces() -> bool:
    if shutil.which("strace") is None:
        return False
    tried = subprocess.run(["strace", "-qq", "-o", "/dev/null", "true"], capture_output=True)
    return tried.returncode == 0  # a container may forbid ptrace


@pytest.mark.skipif(not _strace_traces(), reason="strace is not installed, or may not trace")
def test_adding_a_repository_opens_no_file_of_another_clone(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    clones = cache / "git"
    others = [_folder(clones, f"other-{n:03}", f"git.example.org/org/repo-{n}") for n in range(50)]
    for n, other in enumerate(others):
        enlist(other, f"git.example.org/org/repo-{n}", newest=False)
    work = GitRepo(tmp_path / "work")
    work.release("v1.0.0", module_files("1"))
    fresh = GitRepo(tmp_path / "fresh")
    fresh.release("v1.0.0", module_files("2"))
    old = BareClone(RepoLocation.parse(str(work.path), cache), cache, None, 30.0)
    old.fetch()  # the one-time entering of older clones happened here
    assert (clones / INDEX / INDEXED).read_text() == "50\n"
    trace = tmp_path / "trace"
    # -y: each descriptor with its path, so that a listing of a folder names it, too.
    strace = ["strace", "-f", "-qq", "-y", "-o", str(trace), "-e", "trace=%file,getdents64"]
    adds = [str(cache), str(work.path / ".git"), str(fresh.path)]
    subprocess.run([*strace, sys.executable, "-c", _ADD, *adds], check=True, capture_output=True)
    calls = trace.read_text().splitlines()
    opened = [call for call in calls if any(other.name in call for other in others)]
    listed = [
        call for call in calls if re.search(rf"getdents64\(\d+<{re.escape(str(clones))}>", call)
    ]
    assert (opened, listed) == ([], [])
    # The measure sees what was read: the donor, by its link, for the one of the same identity.
    assert [call for call in calls if "readlink" in call and f"{INDEX}/" in call]
    assert [call for call in calls if f"{old.path.name}/objects" in call]
    assert (clones / INDEX / INDEXED).read_text() == "50\n"  # not entered again


def test_the_clones_made_before_the_index_are_entered_once(tmp_path: Path) -> None:
    clones = tmp_path / "git"
    old = _folder(clones, "old", IDENTITY)
    _folder(clones, "other", "git.example.org/org/other")
    new = _folder(clones, "new")
    assert donor(clones, IDENTITY, new) == old
    assert (clones / INDEX / INDEXED).read_text() == "2\n"
    # A clone an older gitreg makes after that (sharing the cache) is not searched for: it is
    # entered at its first fetch by this version.
    later = _folder(clones, "later", "git.example.org/org/later")
    assert donor(clones, "git.example.org/org/later", new) is None
    enlist(later, "git.example.org/org/later", newest=False)
    assert donor(clones, "git.example.org/org/later", new) == later


def test_a_removed_clone_leaves_an_entry_that_is_no_donor(tmp_path: Path) -> None:
    clones = tmp_path / "git"
    gone = _folder(clones, "gone", IDENTITY)
    enlist(gone, IDENTITY, newest=True)
    shutil.rmtree(gone)
    new = _folder(clones, "new")
    assert donor(clones, IDENTITY, new) is None
    kept = _folder(clones, "kept", IDENTITY)
    enlist(kept, IDENTITY, newest=False)  # fills the dangling entry
    assert donor(clones, IDENTITY, new) == kept


def test_two_urls_of_one_repository_served_at_once(tmp_path: Path) -> None:
    clones = tmp_path / "git"
    https, ssh = _folder(clones, "https"), _folder(clones, "ssh")
    enlist(https, IDENTITY, newest=True)
    enlist(ssh, IDENTITY, newest=False)  # a later fetch of the other: the entry stays
    assert donor(clones, IDENTITY, _folder(clones, "moved")) == https
    assert donor(clones, IDENTITY, https) is None  # a clone is not its own donor
    enlist(ssh, IDENTITY, newest=True)  # just made: the server's latest address
    assert donor(clones, IDENTITY, https) == ssh
    assert (ssh / MARK).read_text() == IDENTITY + "\n"  # the marker, for a downgrade


def test_clones_entered_at_once_leave_a_whole_link_at_every_moment(tmp_path: Path) -> None:
    clones = tmp_path / "git"
    made = [_folder(clones, f"url-{n}", IDENTITY) for n in range(4)]
    enlist(made[0], IDENTITY, newest=True)
    new, seen, stop = _folder(clones, "new"), set[Path | None](), threading.Event()

    def enter(clone: Path) -> None:
        for _ in range(200):
            enlist(clone, IDENTITY, newest=True)

    def look() -> None:
        while not stop.is_set():
            seen.add(donor(clones, IDENTITY, new))

    looking = threading.Thread(target=look)
    looking.start()
    entering = [threading.Thread(target=enter, args=(clone,)) for clone in made]
    for thread in entering:
        thread.start()
    for thread in entering:
        thread.join()
    stop.set()
    looking.join()
    assert seen <= set(made)  # never a missing or half-made link
    names = [entry.name for entry in (clones / INDEX).iterdir()]
    assert [name for name in names if not name.startswith(".")] == [index_key(IDENTITY)]  # one link
    assert not [name for name in names if name.endswith(".tmp")]  # and nothing left beside it
