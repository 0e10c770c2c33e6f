"""Rebuild the example repositories in examples/repos/ from the sources beside this file.

    python examples/build.py

They are committed, so that registry.yaml works out of the box; this script is how they are
made. Identities and dates are fixed, so the same sources always give the same commits (a
test checks that the committed repositories are what this script builds). Each release in
releases.yaml is one commit and one tag; in it, __VERSION__ in the files under `path` (the
whole repository when there is no path) becomes the release's version.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
_EPOCH = 1_767_225_600  # 2026-01-01T00:00:00Z
_IDENTITY = {
    "GIT_AUTHOR_NAME": "gitreg examples",
    "GIT_AUTHOR_EMAIL": "examples@gitreg.invalid",
    "GIT_COMMITTER_NAME": "gitreg examples",
    "GIT_COMMITTER_EMAIL": "examples@gitreg.invalid",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def build(target_dir: Path) -> list[Path]:
    """Write every repository of releases.yaml as a bare repository under target_dir."""
    plan: dict[str, Any] = yaml.safe_load((HERE / "releases.yaml").read_text())
    built = []
    for repository in plan["repositories"]:
        target = target_dir / f"{repository['name']}.git"
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            _git(work, 0, "init", "-q", "-b", "main")
            _copy(HERE / repository["name"], work, "", "0.0.0-unreleased")
            _commit(work, 0, "Initial layout")
            for n, release in enumerate(repository["releases"], start=1):
                _copy(HERE / repository["name"], work, release.get("path", ""), release["version"])
                _commit(work, n, f"Release {release['tag']}")
                annotated = (
                    ["-a", "-m", f"Release {release['version']}"]
                    if release.get("annotated")
                    else []
                )
                _git(work, n, "tag", *annotated, release["tag"])
            shutil.rmtree(target, ignore_errors=True)
            _git(work, 0, "init", "-q", "--bare", str(target))
            _git(
                work,
                0,
                "push",
                "-q",
                str(target),
                "refs/heads/*:refs/heads/*",
                "refs/tags/*:refs/tags/*",
            )
        _git(target, 0, "repack", "-a", "-d", "-q", "--no-write-bitmap-index")
        _git(target, 0, "prune-packed")
        for extra in ("hooks", "info", "description"):
            path = target / extra
            shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
        built.append(target)
    return built


def _copy(source: Path, work: Path, folder: str, version: str) -> None:
    for path in sorted((source / folder).rglob("*")):
        if path.is_file():
            destination = work / path.relative_to(source)
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_text(path.read_text().replace("__VERSION__", version))


def _commit(work: Path, n: int, message: str) -> None:
    _git(work, n, "add", "--all")
    _git(work, n, "commit", "-q", "--allow-empty", "-m", message)


def _git(cwd: Path, n: int, *args: str) -> None:
    date = f"{_EPOCH + n * 86400} +0000"
    env = {**os.environ, **_IDENTITY, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True)


if __name__ == "__main__":
    for path in build(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "repos"):
        print(path)
