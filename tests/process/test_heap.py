"""The heap a server keeps frozen: a new tag is served at once, whatever the freezer is doing,
and reloads do not make the heap grow."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
import tracemalloc
import weakref
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from gitreg.modules.sync import ModuleSync
from gitreg.process.heap import Freezer, collector_paused, freeze_after_bursts
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import RegistryServer, wait_until
from tests.support.state import serving_state

VERSIONS = "/v1/modules/org/mod/x/versions"


@pytest.fixture(autouse=True)
def unfrozen() -> Iterator[None]:
    """These tests freeze the test process's heap: leave it as they found it."""
    yield
    gc.unfreeze()


def _catalog(root: Path, modules: int = 1) -> Path:
    lines = ["cache_dir: cache", "refresh_interval: 1h", "fresh_reads: 0", "modules:"]
    lines += ["  - {namespace: org, name: mod, system: x, repo: repo}"]
    lines += [
        f"  - {{namespace: org, name: m{n}, system: x, repo: repo}}" for n in range(modules - 1)
    ]
    path = root / "registry.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _listed(client: httpx.Client, path: str = VERSIONS) -> list[str]:
    response = client.get(path)
    response.raise_for_status()
    return [v["version"] for v in response.json()["modules"][0]["versions"]]


def test_a_new_tag_is_served_at_once_from_a_frozen_index(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.release("v1.0.0", module_files("1.0.0"))
    catalog = load_catalog(_catalog(tmp_path))
    freezer = Freezer(delay=0.0)
    with (
        RegistryServer(catalog, on_swap=freezer.swapped) as server,
        httpx.Client(base_url=server.url) as client,
    ):
        sync = server.sync
        freezer.freeze_now(full=True)  # as `gitreg serve` does once it has read its clones
        assert _listed(client) == ["1.0.0"]
        first = client.get("/v1/modules/org/mod/x/1.0.0/download")

        commit = repo.release("v1.1.0", module_files("1.1.0"))
        refreezes = freezer.refreezes
        sync.sync_repo(sync.snapshot.index.entries()[0].spec.repo, "webhook")
        # Served from the moment of the swap, whether the refreeze it asked for ran yet or not.
        assert _listed(client) == ["1.1.0", "1.0.0"]
        download = client.get("/v1/modules/org/mod/x/1.1.0/download")
        assert commit in download.headers["x-terraform-get"]
        assert download.json() == {"location": download.headers["x-terraform-get"]}

        wait_until(lambda: freezer.refreezes > refreezes, 10, "the refreeze after the swap")
        assert _listed(client) == ["1.1.0", "1.0.0"]
        assert client.get("/v1/modules/org/mod/x/1.0.0/download").json() == first.json()
        assert client.get("/v1/modules/org/mod/x/1.2.0/download").status_code == 404


def test_reloads_do_not_grow_the_heap(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.release("v1.0.0", module_files("1.0.0"))
    freezer = Freezer(delay=3600.0)  # refrozen below, after each reload, as the timer would
    sync = ModuleSync(load_catalog(_catalog(tmp_path, 20)), on_swap=freezer.swapped)
    sync.refresh()
    freezer.freeze_now(full=True)
    tracemalloc.start()
    try:
        sizes, objects = [], []
        for n in range(100):
            # A module added, then taken away again: every reload builds a new catalog.
            sync.apply_catalog(load_catalog(_catalog(tmp_path, 20 + n % 2)))
            freezer.freeze_now()
            sizes.append(tracemalloc.get_traced_memory()[0])
            objects.append(len(gc.get_objects()) + gc.get_freeze_count())
    finally:
        tracemalloc.stop()
    assert freezer.refreezes > 100
    # After the first few reloads (caches filled), the objects do not grow, and memory by less
    # than a kilobyte a reload (a catalog kept for good would cost ~20 KB each).
    assert max(objects[50:]) <= max(objects[10:50]) * 1.01, objects
    assert max(sizes[50:]) - max(sizes[10:50]) < 50_000, sizes


def test_start_up_keeps_the_collector_off_then_freezes_what_it_read_without_a_walk(
    tmp_path: Path,
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.release("v1.0.0", module_files("1.0.0"))
    freezer = Freezer(delay=0.0)
    assert gc.isenabled()
    freezer.start_up()  # as `gitreg serve` does before it opens its world
    try:
        assert not gc.isenabled()
        sync = ModuleSync(load_catalog(_catalog(tmp_path, 5)), on_swap=freezer.swapped)
        sync.refresh()  # swaps: `settled` freezes what they made, not a refreeze each
        assert freezer._timer is None and freezer.refreezes == 0
        walks = [generation["collections"] for generation in gc.get_stats()]
        frozen = gc.get_freeze_count()
        freezer.settled()
        assert gc.isenabled() and freezer.refreezes == 1
        assert gc.get_freeze_count() > frozen  # what start-up read is frozen...
        assert [generation["collections"] for generation in gc.get_stats()] == walks  # unwalked
        assert sync.snapshot.index.get("org", "mod", "x") is not None
    finally:
        gc.enable()


def test_a_start_up_that_fails_still_turns_the_collector_back_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    GitRepo(tmp_path / "repo").release("v1.0.0", module_files("1.0.0"))
    freezer = Freezer(delay=3600.0)
    freezer.start_up()
    try:
        state = serving_state(load_catalog(_catalog(tmp_path)), None, freezer.swapped)

        def broken(*_: object) -> int:
            raise RuntimeError("a defect while the clones are read")

        monkeypatch.setattr(state.background.sync, "read_clones", broken)
        with pytest.raises(RuntimeError, match="a defect"):
            asyncio.run(state.background._read_at_start(freezer.settled))
        assert gc.isenabled() and freezer.refreezes == 1
    finally:
        gc.enable()


class _Cycle:
    """Cyclic garbage once let go of: only a collection that walks it frees it."""

    def __init__(self) -> None:
        self.me = self


def _frozen_garbage() -> weakref.ref[_Cycle]:
    """A cycle alive at a freeze (as a request under way may be), garbage right after."""
    cycle = _Cycle()
    gc.freeze()
    return weakref.ref(cycle)


def test_a_refreeze_collects_the_young_and_leaves_the_old_generation_unwalked() -> None:
    freezer = Freezer(delay=3600.0, full_every=1000)
    young = weakref.ref(_Cycle())
    full_walks = gc.get_stats()[2]["collections"]
    freezer.freeze_now()
    assert young() is None  # short-lived garbage is not frozen for good
    assert gc.get_stats()[2]["collections"] == full_walks


def test_a_due_full_walk_waits_for_a_quiet_moment() -> None:
    quiet = threading.Event()
    freezer = Freezer(delay=3600.0, full_every=2, quiet=quiet.is_set, recheck=0.05)
    garbage = _frozen_garbage()
    for _ in range(3):  # due after two, but requests keep arriving
        freezer.freeze_now()
    assert garbage() is not None and freezer.full_walks == 0
    quiet.set()  # no request for a while: the next look walks everything
    wait_until(lambda: garbage() is None, 10, "the full walk once quiet")
    assert freezer.full_walks == 1


def test_a_full_walk_is_forced_on_a_server_that_is_never_quiet() -> None:
    freezer = Freezer(
        delay=3600.0, full_every=2, quiet=lambda: False, force_after=5, recheck=3600.0
    )
    garbage = _frozen_garbage()
    for _ in range(4):
        freezer.freeze_now()
    assert garbage() is not None
    freezer.freeze_now()
    assert garbage() is None and freezer.full_walks == 1


def test_the_collector_stays_off_until_the_last_of_overlapping_bursts_is_over() -> None:
    """A reload's burst and the docs warming's, in two threads, end in either order."""
    assert gc.isenabled()
    first, second = collector_paused(), collector_paused()
    started = threading.Event()
    ended = threading.Event()

    def other_burst() -> None:
        with second:
            started.set()
            ended.wait(10)

    thread = threading.Thread(target=other_burst)
    with first:
        thread.start()
        started.wait(10)
    assert not gc.isenabled()  # the first burst is over, the other one is not
    ended.set()
    thread.join(10)
    assert gc.isenabled()


def test_start_up_and_a_burst_share_one_pause() -> None:
    freezer = Freezer(delay=3600.0)
    burst = collector_paused()
    freezer.start_up()
    try:
        burst.__enter__()
        freezer.settled()  # the clones are read while the burst goes on: off still
        assert not gc.isenabled()
    finally:
        burst.__exit__(None, None, None)
    assert gc.isenabled()


def test_in_a_server_what_a_burst_made_is_frozen_as_it_ends() -> None:
    freeze_after_bursts()  # as `gitreg serve` does
    try:
        with collector_paused():
            kept = [{"version": str(n)} for n in range(1000)]  # tracked: lists of dicts
            made = gc.get_objects()
            assert any(entry is kept for entry in made)
            del made
    finally:
        freeze_after_bursts(False)
    assert not any(entry is kept for entry in gc.get_objects())  # frozen: no walk sees it
    assert gc.isenabled()


def test_a_refreeze_asked_for_during_a_burst_waits_for_its_end() -> None:
    freezer = Freezer(delay=0.01)
    with collector_paused():
        freezer.swapped()
        time.sleep(0.2)  # the timer fired, and put the refreeze off
        assert freezer.refreezes == 0
    wait_until(lambda: freezer.refreezes == 1, 10, "the refreeze once the burst is over")
