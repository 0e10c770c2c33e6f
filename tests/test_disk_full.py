"""A full disk under cache_dir (a real tmpfs): what is served goes on being served, nothing half
written is left behind, and everything works again once there is room."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from gitreg.catalog.load import load_catalog
from gitreg.errors import SourceError
from tests.support.gitrepo import GitRepo, module_files
from tests.support.servers import RegistryServer


@contextlib.contextmanager
def small_tmpfs(path: Path, size: str) -> Iterator[Path]:
    path.mkdir(parents=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root and mount rights): {mounted.stderr}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def _fill(folder: Path) -> Path:
    """A file that takes every byte left."""
    filler = folder / "filler"
    with filler.open("wb") as out, contextlib.suppress(OSError):
        while True:
            out.write(b"\0" * 65536)
            out.flush()
            os.fsync(out.fileno())
    return filler


def _temporaries(cache: Path) -> list[Path]:
    """gitreg's own temporary files; a clone's are git's (a fetch that fails for want of room
    may leave an empty tmp_obj_ file, which git's own gc would prune)."""
    return [p for p in cache.rglob("*.tmp") if (cache / "git") not in p.parents]


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
def test_a_full_cache_disk_loses_nothing_served(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / "repo")
    repo.release("v1.0.0", module_files("1.0.0"))
    with small_tmpfs(tmp_path / "cache", "8m") as cache:
        (tmp_path / "registry.yaml").write_text(
            f"cache_dir: {cache}\nfresh_reads: 0\n"
            f"modules:\n  - {{namespace: a, name: b, system: c, repo: {repo.path}}}\n"
        )
        with RegistryServer(load_catalog(tmp_path / "registry.yaml")) as server:
            base = f"{server.url}/v1/modules/a/b/c"
            location = httpx.get(f"{base}/1.0.0/download").headers["x-terraform-get"]
            for built in (cache / "archives").rglob("*.tar.gz"):  # built for the download
                built.unlink()  # so that the archive request builds it, on a full disk
            filler = _fill(cache)
            repo.release("v1.1.0", module_files("1.1.0"))
            (location_of,) = list(server.sync.snapshot.clones)
            for _ in range(3):  # a poll each: the fetch or the status write fails for want of room
                with contextlib.suppress(SourceError):
                    server.sync.poll_repo(location_of)
            versions = httpx.get(f"{base}/versions")
            assert versions.status_code == 200
            listed = [v["version"] for v in versions.json()["modules"][0]["versions"]]
            assert "1.0.0" in listed
            archive = httpx.get(f"{server.url}{location}")
            assert archive.status_code == 503 and "retry-after" in archive.headers
            assert not _temporaries(cache)  # no half-written archive, status or ledger
            filler.unlink()
            server.sync.poll_repo(location_of)
            listed = httpx.get(f"{base}/versions").json()["modules"][0]["versions"]
            assert [v["version"] for v in listed] == ["1.1.0", "1.0.0"]
            assert httpx.get(f"{server.url}{location}").status_code == 200
            assert not _temporaries(cache)
