"""A folder source: the Git repositories, bare or not, under a folder of this machine whose path
matches a glob. A symlink that leads out of the folder is never followed."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from gitreg.sources.found import FoundRepository, SourceRefused, SourceUnavailable


class FolderLister:
    def __init__(self, folder: Path, glob: str = "*") -> None:
        self.folder = folder
        self.glob = glob

    def repositories(self) -> list[FoundRepository]:
        try:
            root = self.folder.resolve(strict=True)
        except OSError as exc:
            raise SourceUnavailable(f"{self.folder} cannot be read: {exc.strerror}") from exc
        if not root.is_dir():
            raise SourceRefused(f"{self.folder} is not a folder")
        found = []
        try:
            candidates = sorted(root.glob(self.glob))
        except (OSError, ValueError) as exc:
            raise SourceUnavailable(f"{self.folder} cannot be listed: {exc}") from exc
        for candidate in candidates:
            real = candidate.resolve()
            if not real.is_relative_to(root) or not real.is_dir():
                continue  # a symlink out of the folder, or not a folder
            git_dir = _git_dir(real)
            if git_dir is None or not git_dir.resolve().is_relative_to(root):
                continue
            relative = PurePosixPath(candidate.relative_to(root).as_posix())
            found.append(
                FoundRepository(
                    name=relative.name.removesuffix(".git"),
                    path=str(relative),
                    clone_https="",
                    clone_ssh="",
                    default_branch=_default_branch(git_dir),
                    clone_local=str(real),
                )
            )
        return found


def _git_dir(folder: Path) -> Path | None:
    """The folder's Git directory: itself when bare, its `.git` folder for a work tree."""
    for git_dir in (folder, folder / ".git"):
        if (
            (git_dir / "HEAD").is_file()
            and (git_dir / "objects").is_dir()
            and (git_dir / "refs").is_dir()
        ):
            return git_dir
    return None


def _default_branch(git_dir: Path) -> str:
    """The branch HEAD names (`main`), or "" when HEAD is detached or unreadable."""
    try:
        head = (git_dir / "HEAD").read_text().strip()
    except OSError:
        return ""
    return head.removeprefix("ref: refs/heads/") if head.startswith("ref: refs/heads/") else ""
