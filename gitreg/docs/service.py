"""The documentation of module versions as handlers ask for it: built once per key, then kept.

A key is a clone, commit and folder; a build runs on threads of its own, never on the event
loop, and its result is kept on disk (`cache.py`) and, for the most recent, in memory. Every
description read is kept in memory too (a line of text, where whole docs are tens of kilobytes),
so that a list of 10,000 modules reads them without waiting. Concurrent asks for one key share
one build. A build runs on a small pool: parsing HCL is CPU-bound Python, and a burst of first
visits must not take every thread a sync needs. See docs/pages-and-api.md."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from gitreg.docs.cache import DocsCache
from gitreg.docs.extract import module_docs
from gitreg.docs.model import ModuleCall, ModuleDocs, ProviderRequirement
from gitreg.errors import SourceError
from gitreg.git.trees import commit_times, doc_files
from gitreg.modules.index import ModuleEntry
from gitreg.modules.resolve import Release

log = logging.getLogger(__name__)

BUILDERS = 3  # docs built at once (CPU-bound under the GIL: more threads would not go faster)
REMEMBERED = 2048  # whole ModuleDocs kept in memory: the pages just seen
TIMES_REMEMBERED = 100_000  # commit times kept in memory (a commit's time never changes)
DESCRIPTIONS_REMEMBERED = 200_000  # descriptions: every module's latest, with room to spare

# (clone path, commit, folder): what the docs of a version depend on, and nothing else.
Key = tuple[str, str, str]
Calls = tuple[tuple[str, ModuleCall], ...]  # (folder, `module` block): `ModuleDocs.calls`
Requirements = tuple[tuple[str, ProviderRequirement], ...]  # `ModuleDocs.requirements`


class DocsService:
    def __init__(
        self, cache_dir: Path, *, builders: int = BUILDERS, remembered: int = REMEMBERED
    ) -> None:
        self.disk = DocsCache(cache_dir)
        self.builds = 0  # built from the clone (not read from disk): tests and metrics count them
        self.spent = 0.0  # CPU seconds the builds and disk reads took on their threads, in all
        self._remembered = remembered
        self._pool = ThreadPoolExecutor(builders, thread_name_prefix="gitreg-docs")
        # Reentrant: a build done before its callback is added runs the callback at once.
        self._lock = threading.RLock()
        self._memory: OrderedDict[Key, ModuleDocs] = OrderedDict()
        self._building: dict[Key, Future[ModuleDocs]] = {}
        self._times: dict[tuple[str, str], int] = {}
        self._descriptions: dict[Key, str] = {}
        self._calls: dict[Key, Calls] = {}  # kept with the descriptions, forgotten with them
        self._requirements: dict[Key, Requirements] = {}  # kept and forgotten with the calls
        self.loads = 0  # docs read into memory, built or from disk: the dependents follow it
        self.forgotten = 0  # times the descriptions were forgotten (the warming then sees all)
        self._closed = False

    async def module_docs(self, entry: ModuleEntry, release: Release) -> ModuleDocs:
        """The docs of `release`: from memory, from disk, or built (once, however many ask).
        Raises SourceError when the clone lacks the commit or the module's folder."""
        known = self.known(entry, release)
        if known is not None:
            return known
        future = self.request(entry, release)
        # Shielded: a client that goes away must not cancel the build others wait for.
        return await asyncio.shield(asyncio.wrap_future(future))

    def known(self, entry: ModuleEntry, release: Release) -> ModuleDocs | None:
        """The docs of `release` if they are in memory; never waits."""
        key = _key(entry, release)
        with self._lock:
            docs = self._memory.get(key)
            if docs is not None:
                self._memory.move_to_end(key)
            return docs

    def description(self, entry: ModuleEntry, release: Release) -> str | None:
        """The description of `release` if its docs were read since start-up; never waits."""
        with self._lock:
            return self._descriptions.get(_key(entry, release))

    def module_calls(self, entry: ModuleEntry, release: Release) -> Calls | None:
        """The `module` blocks `release` makes elsewhere, if its docs were read since
        start-up (as its description); never waits."""
        with self._lock:
            return self._calls.get(_key(entry, release))

    def provider_requirements(self, entry: ModuleEntry, release: Release) -> Requirements | None:
        """The `required_providers` of `release`, if its docs were read since start-up (as its
        calls); never waits."""
        with self._lock:
            return self._requirements.get(_key(entry, release))

    def request(self, entry: ModuleEntry, release: Release) -> Future[ModuleDocs]:
        """The build (or disk read) of `release`'s docs, started unless one is under way."""
        key = _key(entry, release)
        with self._lock:
            docs = self._memory.get(key)
            if docs is not None:
                # Descriptions may have been forgotten since (bounded): the warming refills them.
                self._descriptions.setdefault(key, docs.root.description)
                if key not in self._calls:
                    self._calls[key] = docs.calls()
                    self._requirements[key] = docs.requirements()
                    self.loads += 1
                done: Future[ModuleDocs] = Future()
                done.set_result(docs)
                return done
            if self._closed:
                raise SourceError("the registry is stopping: no new docs are built")
            future = self._building.get(key)
            if future is None:
                future = self._pool.submit(self._timed, key)
                self._building[key] = future
                future.add_done_callback(lambda _: self._forget_build(key))
            return future

    async def commit_times(self, entry: ModuleEntry) -> Mapping[str, int]:
        """Commit → committer time (Unix seconds), for every release of `entry`."""
        return await self._times_of(entry.clone_path, {r.commit for r in entry.versions.releases})

    async def commit_time(self, entry: ModuleEntry, release: Release) -> int | None:
        """The committer time of one release: for lists, which show only the newest (known
        from memory once warmed, since docs carry their commit's time)."""
        return (await self._times_of(entry.clone_path, {release.commit})).get(release.commit)

    def known_commit_time(self, entry: ModuleEntry, release: Release) -> int | None:
        """The committer time of one release if it is in memory; never waits. A list of 100
        modules reads them so, rather than as 100 tasks."""
        with self._lock:
            return self._times.get((str(entry.clone_path), release.commit))

    async def _times_of(self, clone_path: Path, commits: set[str]) -> dict[str, int]:
        clone = str(clone_path)
        with self._lock:
            times = {c: t for c in commits if (t := self._times.get((clone, c))) is not None}
        missing = commits - times.keys()
        if missing:
            read = await asyncio.to_thread(commit_times, clone_path, missing)
            self._remember_times(clone, read)
            times.update(read)
        return times

    def _remember_times(self, clone: str, read: Mapping[str, int]) -> None:
        with self._lock:
            if len(self._times) + len(read) > TIMES_REMEMBERED:
                self._times.clear()
            self._times.update(((clone, c), t) for c, t in read.items())

    def close(self) -> None:
        """No new builds; those under way finish on their threads."""
        with self._lock:
            self._closed = True
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _timed(self, key: Key) -> ModuleDocs:
        """`_load_or_build`, its CPU added to `spent` (what the warming pays back)."""
        began = time.thread_time()
        try:
            return self._load_or_build(key)
        finally:
            took = time.thread_time() - began
            with self._lock:
                self.spent += took

    def _load_or_build(self, key: Key) -> ModuleDocs:
        clone_path, commit, folder = key
        clone = Path(clone_path).name.removesuffix(".git")
        docs = self.disk.load(clone, commit, folder)
        if docs is None:
            docs = self._build(Path(clone_path), commit, folder)
            try:
                self.disk.store(clone, folder, docs)
            except (OSError, ValueError) as exc:  # a full disk: served all the same, built again
                log.warning("cannot keep the docs of %s in the cache: %s", commit[:12], exc)
        if docs.commit_time:
            self._remember_times(clone_path, {commit: docs.commit_time})
        with self._lock:
            if len(self._descriptions) >= DESCRIPTIONS_REMEMBERED:
                self._descriptions.clear()  # bounded; the warming after the next swap refills it
                self._calls.clear()
                self._requirements.clear()
                self.forgotten += 1
            self._descriptions[key] = docs.root.description
            self._calls[key] = docs.calls()
            self._requirements[key] = docs.requirements()
            self.loads += 1
            self._memory[key] = docs
            self._memory.move_to_end(key)
            while len(self._memory) > self._remembered:
                self._memory.popitem(last=False)
        return docs

    def _build(self, clone_path: Path, commit: str, folder: str) -> ModuleDocs:
        try:
            files = doc_files(clone_path, commit, folder)
            when = commit_times(clone_path, [commit]).get(commit, 0)
        except SourceError:
            raise
        except Exception as exc:  # a corrupt clone is one repository's fault, and a 503
            raise SourceError(f"cannot read commit {commit[:12]} in the clone: {exc!r}") from exc
        with self._lock:
            self.builds += 1
        return module_docs(files, commit=commit, folder=folder, commit_time=when)

    def _forget_build(self, key: Key) -> None:
        with self._lock:
            self._building.pop(key, None)


def _key(entry: ModuleEntry, release: Release) -> Key:
    return (str(entry.clone_path), release.commit, entry.spec.path)
