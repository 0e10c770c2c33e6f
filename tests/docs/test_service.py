"""DocsService against real Git repositories: docs of a tag's tree (a monorepo folder too),
built once per commit and kept on disk, rebuilt when the cache file is gone or corrupt, shared by
concurrent asks, and warmed after a swap for the lists that read `known`."""

from __future__ import annotations

import asyncio
import gc
import shutil
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from gitreg.docs.cache import FORMAT
from gitreg.docs.model import ModuleDocs
from gitreg.docs.service import DocsService
from gitreg.docs.warming import COLLECTOR_LOOK, keep_warm, warm
from gitreg.errors import SourceError
from gitreg.modules.index import ModuleEntry
from gitreg.modules.resolve import Release
from gitreg.modules.sync import ModuleSync
from tests.conftest import WriteCatalog
from tests.support.gitrepo import GitRepo

VPC = {
    "README.md": "# VPC\n\n[![ci](https://ci/badge.svg)](https://ci)\n\nMakes a **VPC**.\n",
    "variables.tf": 'variable "cidr" {\n  type = string\n  description = "The block"\n}\n',
    "outputs.tf": 'output "id" {\n  value = "x"\n}\n',
    "modules/subnet/main.tf": 'variable "zone" {\n  default = "a"\n}\n',
    "examples/basic/main.tf": 'module "vpc" {\n  source = "../.."\n  cidr = "10.0.0.0/16"\n}\n',
}


def _entry(sync: ModuleSync, name: str = "vpc") -> ModuleEntry:
    entry = sync.snapshot.index.get("a", name, "aws")
    assert entry is not None and entry.versions.releases
    return entry


def _synced(write_catalog: WriteCatalog, repo: GitRepo, extra: str = "") -> ModuleSync:
    sync = ModuleSync(
        write_catalog(
            f"modules:\n  - {{namespace: a, name: vpc, system: aws, repo: {repo.path}{extra}}}\n"
        )
    )
    sync.refresh()
    return sync


def test_docs_of_a_tag_with_its_submodules_examples_and_commit_time(
    tmp_path: Path, write_catalog: WriteCatalog
) -> None:
    repo = GitRepo(tmp_path / "repo")
    commit = repo.release("v1.0.0", VPC)
    sync = _synced(write_catalog, repo)
    entry = _entry(sync)
    service = DocsService(tmp_path / "cache")
    docs = asyncio.run(service.module_docs(entry, entry.versions.releases[0]))
    assert docs.commit == commit
    assert docs.commit_time == 1700000000  # tests/support/gitrepo.py's fixed date
    assert docs.root.description == "Makes a VPC."
    assert [(i.name, i.type, i.description, i.required) for i in docs.root.inputs] == [
        ("cidr", "string", "The block", True)
    ]
    assert [o.name for o in docs.root.outputs] == ["id"]
    assert [(s.path, [i.name for i in s.inputs]) for s in docs.submodules] == [
        ("modules/subnet", ["zone"])
    ]
    assert [(e.path, [c.source for c in e.module_calls]) for e in docs.examples] == [
        ("examples/basic", ["../.."])
    ]
    assert asyncio.run(service.commit_times(entry)) == {commit: 1700000000}


def test_a_monorepo_module_is_documented_from_its_folder(
    tmp_path: Path, write_catalog: WriteCatalog
) -> None:
    repo = GitRepo(tmp_path / "repo")
    files = {f"net/vpc/{name}": text for name, text in VPC.items()}
    files["net/other/main.tf"] = 'variable "unrelated" {}\n'
    files["net/vpc/broken.tf"] = 'variable "x" {\n'
    repo.release("vpc/v2.0.0", files)
    sync = _synced(write_catalog, repo, ', path: net/vpc, tags: "vpc/v{version}"')
    entry = _entry(sync)
    docs = asyncio.run(
        DocsService(tmp_path / "cache").module_docs(entry, entry.versions.releases[0])
    )
    assert [i.name for i in docs.root.inputs] == ["cidr"]
    assert [(p.path, p.message) for p in docs.root.problems] == [
        ("net/vpc/broken.tf", "syntax error at line 2, column 1: unexpected end of file")
    ]
    assert [s.path for s in docs.submodules] == ["modules/subnet"]


def test_the_disk_cache_serves_a_second_service_and_a_corrupt_file_is_rebuilt(
    tmp_path: Path, write_catalog: WriteCatalog
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.release("v1.0.0", VPC)
    entry = _entry(_synced(write_catalog, repo))
    release = entry.versions.releases[0]
    first = DocsService(tmp_path / "cache")
    built = asyncio.run(first.module_docs(entry, release))
    assert first.builds == 1
    assert asyncio.run(first.module_docs(entry, release)) is built  # from memory

    files = list((tmp_path / "cache" / "docs").rglob("*.json"))
    assert len(files) == 1
    second = DocsService(tmp_path / "cache")
    assert second.known(entry, release) is None  # memory only: nothing read yet
    assert asyncio.run(second.module_docs(entry, release)) == built
    assert second.builds == 0  # read from disk
    assert second.known(entry, release) == built

    for corrupt in (b"", b'{"format": 1, "folder": "", "docs": {"commit": 3}}', b"\xff{"):
        files[0].write_bytes(corrupt)
        third = DocsService(tmp_path / "cache")
        assert asyncio.run(third.module_docs(entry, release)) == built
        assert third.builds == 1
    files[0].write_text(files[0].read_text().replace(f'"format":{FORMAT}', '"format":0'))
    assert (
        DocsService(tmp_path / "cache").disk.load(files[0].parent.name, release.commit, "") is None
    )  # another format: rebuilt


def test_concurrent_asks_share_one_build(tmp_path: Path, write_catalog: WriteCatalog) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.release("v1.0.0", VPC)
    entry = _entry(_synced(write_catalog, repo))
    release = entry.versions.releases[0]
    service = DocsService(tmp_path / "cache")
    gate = threading.Event()
    original = service._build

    def held(*args: object) -> object:
        assert gate.wait(30)  # every ask arrives while the first build is under way
        return original(*args)  # type: ignore[arg-type]

    service._build = held  # type: ignore[method-assign,assignment]

    async def asks() -> list[object]:
        tasks = [asyncio.create_task(service.module_docs(entry, release)) for _ in range(20)]
        await asyncio.sleep(0)
        gate.set()
        return list(await asyncio.gather(*tasks))

    answers = asyncio.run(asks())
    assert service.builds == 1
    assert all(a is answers[0] for a in answers)


def test_a_commit_the_clone_lacks_is_a_source_error_and_not_cached(
    tmp_path: Path, write_catalog: WriteCatalog
) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.release("v1.0.0", VPC)
    entry = _entry(_synced(write_catalog, repo))
    service = DocsService(tmp_path / "cache")
    missing = Release("9.9.9", "v9.9.9", "0" * 40)
    with pytest.raises(SourceError):
        asyncio.run(service.module_docs(entry, missing))
    assert service.known(entry, missing) is None
    assert not list((tmp_path / "cache" / "docs").rglob("*.json"))


def _synced_modules(
    tmp_path: Path, write_catalog: WriteCatalog, names: tuple[str, ...]
) -> ModuleSync:
    """A module of each name, a repository each, its one release's README "Module NAME.",
    read."""
    lines = []
    for name in names:
        repo = GitRepo(tmp_path / name)
        repo.release("v1.0.0", {"README.md": f"Module {name}.\n"})
        lines.append(f"  - {{namespace: a, name: {name}, system: aws, repo: {repo.path}}}\n")
    sync = ModuleSync(write_catalog("modules:\n" + "".join(lines)))
    sync.refresh()
    return sync


def test_warming_puts_each_latest_version_in_memory(
    tmp_path: Path, write_catalog: WriteCatalog
) -> None:
    repos = []
    for name in ("one", "two", "three"):
        repo = GitRepo(tmp_path / name)
        repo.release("v1.0.0", {"README.md": f"Module {name}.\n", "main.tf": ""})
        repo.release("v1.1.0", {"README.md": f"Module {name}, newer.\n"})
        repos.append(f"  - {{namespace: a, name: {name}, system: aws, repo: {repo.path}}}\n")
    sync = ModuleSync(write_catalog("modules:\n" + "".join(repos)))
    sync.refresh()
    service = DocsService(tmp_path / "cache")
    entries = sync.snapshot.index.entries()
    assert asyncio.run(warm(service, entries)) == 3
    for entry in entries:
        latest = service.description(entry, entry.versions.releases[0])
        assert latest == f"Module {entry.spec.address.name}, newer."
        assert service.description(entry, entry.versions.releases[1]) is None  # only the latest
    assert asyncio.run(warm(service, entries)) == 0  # all known: nothing to do


def test_warming_rests_for_what_its_cpu_costs_in_the_background_budget(
    tmp_path: Path, write_catalog: WriteCatalog
) -> None:
    """At 10,000 modules, warming would hold the GIL for minutes on end: after each module, the
    CPU it took on the docs' thread is counted in the background's budget (`owe`), and the
    warming rests for what that says is due."""
    sync = _synced_modules(tmp_path, write_catalog, ("one", "two", "three"))
    service = DocsService(tmp_path / "cache")
    owed: list[float] = []
    rests: list[float] = []

    def owe(spent: float) -> float:
        owed.append(spent)
        return 3 * spent

    async def sleep(seconds: float) -> None:
        rests.append(seconds)

    entries = sync.snapshot.index.entries()
    loaded = asyncio.run(warm(service, entries, owe=owe, sleep=sleep))
    assert loaded == 3
    assert len(owed) == 3 and all(spent > 0 for spent in owed)  # each build's CPU, counted
    assert sum(owed) == pytest.approx(service.spent)
    assert rests == pytest.approx([3 * spent for spent in owed])
    assert asyncio.run(warm(service, entries, owe=owe, sleep=sleep)) == 0
    assert len(owed) == 3 and len(rests) == 3  # nothing to warm: nothing owed, no rest


def test_warming_builds_nothing_while_the_collector_is_off(
    tmp_path: Path, write_catalog: WriteCatalog
) -> None:
    """A build leaves reference cycles (dulwich's) that only the collector frees; while the
    start-up or paced work holds it off, the heap is frozen with them at its end. So the
    warming waits, looking again every COLLECTOR_LOOK seconds, and builds once it is on."""
    sync = _synced_modules(tmp_path, write_catalog, ("one", "two"))
    service = DocsService(tmp_path / "cache")
    builds_at_each_look: list[int] = []

    async def sleep(seconds: float) -> None:
        assert seconds == COLLECTOR_LOOK
        builds_at_each_look.append(service.builds)
        if len(builds_at_each_look) == 3:
            gc.enable()  # the paced work is over

    gc.disable()
    try:
        loaded = asyncio.run(warm(service, sync.snapshot.index.entries(), sleep=sleep))
    finally:
        gc.enable()
    assert loaded == 2 and service.builds == 2
    assert builds_at_each_look == [0, 0, 0]  # nothing built while it was off


def test_keep_warm_keeps_every_description_and_only_some_whole_docs(
    tmp_path: Path, write_catalog: WriteCatalog
) -> None:
    """Whole docs are tens of kilobytes: memory keeps the last few (`remembered`), and a
    description, a line of text, for every module, so 10,000 modules cost megabytes, not
    hundreds of them."""
    sync = _synced_modules(tmp_path, write_catalog, ("one", "two", "three"))
    service = DocsService(tmp_path / "cache", remembered=1)  # whole docs: room for one
    entries = sync.snapshot.index.entries()

    async def warmed() -> None:
        task = asyncio.create_task(keep_warm(service, sync, every=0.01))
        for _ in range(3000):  # bounded: a deadline, not a measurement
            if all(service.description(e, e.versions.releases[0]) for e in entries):
                break
            await asyncio.sleep(0.01)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(warmed())
    descriptions = {service.description(e, e.versions.releases[0]) for e in entries}
    assert descriptions == {"Module one.", "Module two.", "Module three."}
    assert sum(service.known(e, e.versions.releases[0]) is not None for e in entries) == 1


def test_a_warming_round_that_loaded_docs_tells_on_swap(
    tmp_path: Path, write_catalog: WriteCatalog
) -> None:
    """Warmed docs live as long as the snapshot: after a round that loaded some, `on_swap` is
    told, as after a swap, so that a server refreezes its heap (gitreg.process.heap) and full
    collections stop walking them; a round that loaded nothing tells no one."""
    repo = GitRepo(tmp_path / "repo")
    repo.release("v1.0.0", VPC)
    told: list[bool] = []  # per call: were the latest version's docs known by then?
    sync = ModuleSync(
        write_catalog(
            f"modules:\n  - {{namespace: a, name: vpc, system: aws, repo: {repo.path}}}\n"
        ),
        on_swap=lambda: told.append(bool(_warmed(sync, service))),
    )
    service = DocsService(tmp_path / "cache")
    sync.refresh()
    swaps = len(told)
    assert swaps and not any(told)  # the swaps came before any docs

    async def warming() -> None:
        task = asyncio.create_task(keep_warm(service, sync, every=0.01))
        for _ in range(3000):  # bounded: a deadline, not a measurement
            if len(told) > swaps:
                break
            await asyncio.sleep(0.01)
        for _ in range(10):  # more looks at the same snapshot: nothing new to tell
            await asyncio.sleep(0.01)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(warming())
    assert told[swaps:] == [True]


def _warmed(sync: ModuleSync, service: DocsService) -> ModuleDocs | None:
    entry = sync.snapshot.index.get("a", "vpc", "aws")
    if entry is None or not entry.versions.releases:
        return None
    return service.known(entry, entry.versions.releases[0])


def test_a_release_time_is_known_from_its_docs_without_reading_the_clone(
    tmp_path: Path, write_catalog: WriteCatalog
) -> None:
    """A list shows each module's newest release with its time: once the warming has read
    that release's docs, the time comes from memory, not from Git on the request's path."""
    repo = GitRepo(tmp_path / "repo")
    repo.release("v1.0.0", VPC)
    sync = _synced(write_catalog, repo)
    entry = _entry(sync)
    release = entry.versions.releases[0]
    service = DocsService(tmp_path / "cache")
    asyncio.run(service.module_docs(entry, release))
    shutil.rmtree(entry.clone_path)  # any read of the clone now fails
    assert asyncio.run(service.commit_time(entry, release)) == 1700000000


def test_keep_warm_looks_again_only_at_what_changed_until_descriptions_are_forgotten(
    tmp_path: Path, write_catalog: WriteCatalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a swap, the warming looks at the entries that are new since it last warmed them
    all (at 10,000 modules, looking at every one held the event loop for 40 to 70 ms), and at
    every one again once the bounded descriptions were forgotten."""
    repos, lines = {}, []
    for name in ("one", "two", "three"):
        repos[name] = GitRepo(tmp_path / name)
        repos[name].release("v1.0.0", {"README.md": f"Module {name}.\n"})
        lines.append(f"  - {{namespace: a, name: {name}, system: aws, repo: {tmp_path / name}}}\n")
    sync = ModuleSync(write_catalog("modules:\n" + "".join(lines)))
    sync.refresh()
    service = DocsService(tmp_path / "cache")
    looked: list[str] = []
    description = service.description

    def recorded(entry: ModuleEntry, release: Release) -> str | None:
        looked.append(entry.spec.address.name)
        return description(entry, release)

    monkeypatch.setattr(service, "description", recorded)

    def latest(name: str) -> str | None:
        entry = sync.snapshot.index.get("a", name, "aws")
        assert entry is not None
        return description(entry, entry.versions.releases[0])

    async def until(done: Callable[[], bool]) -> None:
        for _ in range(3000):  # bounded: a deadline, not a measurement
            if done():
                return
            await asyncio.sleep(0.01)
        raise AssertionError("not warmed")

    async def warming() -> None:
        task = asyncio.create_task(keep_warm(service, sync, every=0.01))
        await until(lambda: all(latest(n) for n in repos))
        looked.clear()
        repos["two"].release("v1.1.0", {"README.md": "Module two, again.\n"})
        await asyncio.to_thread(sync.refresh)
        await until(lambda: latest("two") == "Module two, again.")
        assert set(looked) == {"two"}
        with service._lock:  # as when DESCRIPTIONS_REMEMBERED is reached
            service._descriptions.clear()
            service.forgotten += 1
        repos["three"].release("v1.1.0", {"README.md": "Module three, again.\n"})
        await asyncio.to_thread(sync.refresh)
        await until(lambda: all(latest(n) for n in repos))
        assert {"one", "two", "three"} <= set(looked)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(warming())
