"""Real Git repositories for tests, written with the git command."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_AUTHOR_DATE": "1700000000 +0000",
    "GIT_COMMITTER_DATE": "1700000000 +0000",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **_ENV}
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


class GitRepo:
    """A work tree with helpers to write files, commit and tag."""

    def __init__(self, path: Path, init: bool = True) -> None:
        self.path = path
        if init:
            path.mkdir(parents=True, exist_ok=True)
            git(path, "init", "-q", "-b", "main")

    @classmethod
    def existing(cls, path: Path) -> GitRepo:
        return cls(path, init=False)

    def write(self, files: dict[str, str]) -> GitRepo:
        for name, content in files.items():
            target = self.path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)
        return self

    def commit(self, message: str = "change") -> str:
        git(self.path, "add", "--all")
        git(self.path, "commit", "-q", "--allow-empty", "-m", message)
        return git(self.path, "rev-parse", "HEAD")

    def tag(
        self, name: str, annotated: bool = False, target: str = "HEAD", force: bool = False
    ) -> None:
        flags = ["-f"] if force else []
        if annotated:
            flags += ["-a", "-m", f"release {name}"]
        git(self.path, "tag", *flags, name, target)

    def release(self, tag: str, files: dict[str, str], annotated: bool = False) -> str:
        """Write files, commit, tag: one release in one call. Returns the commit."""
        self.write(files)
        commit = self.commit(f"release {tag}")
        self.tag(tag, annotated)
        return commit


def module_files(version: str, folder: str = "", extra: str = "") -> dict[str, str]:
    """A provider-less module whose `version` output proves which code was installed."""
    prefix = f"{folder}/" if folder else ""
    return {f"{prefix}main.tf": f'output "version" {{\n  value = "{version}"\n}}\n{extra}'}
