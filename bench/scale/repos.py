"""The release trains `bench.scale` and `bench.polling` serve, their catalogs and warm clones,
kept under a workdir so that a rerun starts warm."""

from __future__ import annotations

import shutil
import socket
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from dulwich.objects import Blob, Commit, ObjectID, ShaFile, Tree
from dulwich.refs import Ref
from dulwich.repo import Repo

from bench.harness import free_port

ADDED = "added"  # the module a reload brings in


@dataclass(frozen=True)
class Shape:
    repos: int
    modules: int  # per repository
    versions: int  # per module

    @property
    def name(self) -> str:
        return f"{self.repos}x{self.modules}x{self.versions}"

    def version(self, n: int) -> str:
        return f"{1 + n // 10}.{n % 10}.0"

    def all_versions(self) -> frozenset[str]:
        """What every module's `versions` answer must list once its repository is read."""
        return frozenset(self.version(n) for n in range(self.versions))


def _monorepo(path: Path, number: int, shape: Shape) -> None:
    """A release train: one commit per version, each tagged for every module of the repository
    (`mod3/v1.2.0`), written by dulwich as one pack and one packed-refs file, so that the
    clones hold packs as real ones do, and no `git tag` runs per tag."""
    repo = Repo.init_bare(str(path), mkdir=True)
    objects: list[ShaFile] = []
    refs: dict[Ref, ObjectID | None] = {}
    parents: list[ObjectID] = []
    for v in range(shape.versions):
        version = shape.version(v)
        root = Tree()
        for m in range(shape.modules):
            text = f'output "x" {{ value = "r{number} mod{m} {version}" }}\n'
            blob = Blob.from_string(text.encode())
            folder = Tree()
            folder.add(b"main.tf", 0o100644, blob.id)
            root.add(f"mod{m}".encode(), 0o040000, folder.id)
            objects += [blob, folder]
        commit = Commit()
        commit.tree = root.id
        commit.parents = parents
        commit.author = commit.committer = b"bench <bench@example.com>"
        commit.author_time = commit.commit_time = 1_700_000_000 + v
        commit.author_timezone = commit.commit_timezone = 0
        commit.message = f"release {version}\n".encode()
        objects += [root, commit]
        parents = [commit.id]
        refs.update(
            (Ref(f"refs/tags/mod{m}/v{version}".encode()), commit.id) for m in range(shape.modules)
        )
    repo.object_store.add_objects([(o, None) for o in objects])
    refs[Ref(b"refs/heads/main")] = parents[0]
    repo.refs.add_packed_refs(refs)
    repo.refs.set_symbolic_ref(Ref(b"HEAD"), Ref(b"refs/heads/main"))
    repo.close()


def generate(served: Path, shape: Shape) -> float | None:
    """The served repositories, made once per shape; the seconds it took, None when cached."""
    done = served / ".complete"
    if done.exists():
        return None
    shutil.rmtree(served, ignore_errors=True)
    served.mkdir(parents=True)
    start = time.perf_counter()
    with ProcessPoolExecutor() as pool:
        list(
            pool.map(
                _monorepo,
                [served / f"r{n}.git" for n in range(shape.repos)],
                range(shape.repos),
                [shape] * shape.repos,
                chunksize=20,
            )
        )
    done.write_text(shape.name)
    return time.perf_counter() - start


def daemon_port(workdir: Path) -> int:
    """The port `git daemon` served this workdir on before: clone names derive from the
    repository URL, port included, so another port would make every clone cold (1,000 clones
    took 8 minutes here). A busy port is an error to fix by hand, never a reason to start over."""
    saved = workdir / "daemon-port"
    if saved.exists():
        port = int(saved.read_text())
        with socket.socket() as s:
            # As git daemon's --reuseaddr: the last run's connections in TIME_WAIT do not make
            # the port busy (without it, a rerun within a minute found it "in use").
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(("127.0.0.1", port))
            except OSError as exc:
                raise SystemExit(
                    f"port {port}, which the clones under {workdir} are named after, is busy "
                    f"({exc}; another bench on this workdir?): free it and run again"
                ) from exc
        return port
    if any(workdir.glob("cache-*")):
        raise SystemExit(
            f"{workdir} holds clones but no daemon-port: write the port they use there"
        )
    port = free_port()
    saved.write_text(str(port))
    return port


def write_catalog(path: Path, base: str, shape: Shape, repos: int, added: bool = False) -> Path:
    lines = [
        f"cache_dir: cache-{path.stem}",
        "refresh_interval: 1h",  # polling is measured on its own: keep it out of the serving figures
        "watch_catalog: false",  # reloads come from SIGHUP only, one at a time
        # A fresh read makes a `versions` request wait for `git ls-remote` (by design: about
        # 100 ms at this git daemon, once every 5 s per repository); the latency probes ask one
        # module, so it was their idle maximum. What is measured here is background work's toll.
        "fresh_reads: 0",
        "modules:",
    ]
    for r in range(repos):
        for m in range(shape.modules):
            lines.append(
                f"  - {{namespace: bench, name: r{r}m{m}, system: generic, "
                f"repo: '{base}/r{r}.git', path: mod{m}, tags: 'mod{m}/v{{version}}'}}"
            )
    if added:
        lines.append(
            f"  - {{namespace: bench, name: {ADDED}, system: generic, "
            f"repo: '{base}/r0.git', path: mod0, tags: 'mod0/v{{version}}'}}"
        )
    path.write_text("\n".join(lines) + "\n")
    return path


def warm(config: Path) -> float | None:
    """Clone every repository once (as a first start-up would); None when already done. gitreg
    is imported here, not above, so that `--tree` chooses which one first."""
    from gitreg.catalog.load import load_catalog
    from gitreg.modules.sync import ModuleSync

    done = config.parent / f"cache-{config.stem}" / ".warm"
    if done.exists():
        return None
    start = time.perf_counter()
    ModuleSync(load_catalog(config)).refresh()
    done.write_text("")
    return time.perf_counter() - start
