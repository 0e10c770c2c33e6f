"""What documentation and provenance read of a commit, bounded, through dulwich in-process.

It reads a module folder's `*.tf` files and README, and those of its submodules and examples;
commit times; a release's tree and tag object; and a file at the root of many commits at once
(each version's `.gitreg.yaml`). No subprocess per question, as for tags (`clone.py`); but the
files' sizes come first, from one `git cat-file --batch-check` per build, which reads only each
object's header: a file over the bound is never read (dulwich cannot tell an object's size
without inflating it whole)."""

from __future__ import annotations

import posixpath
import stat
import subprocess
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

from dulwich.errors import NotGitRepository
from dulwich.objects import Blob, Commit, ObjectID, Tag, Tree
from dulwich.refs import Ref
from dulwich.repo import Repo

from gitreg.errors import SourceError
from gitreg.git.clone import folder_tree, open_repo


class DocFile(NamedTuple):
    """A file documentation is computed from: `path` relative to the folder asked for, and its
    bytes, or None when a bound left it out (`why`: which, said where the docs show it)."""

    path: str
    data: bytes | None
    why: str = ""


DOC_SUBFOLDERS = (b"modules", b"examples")
DOC_FILE_MOST = 1 << 20  # bytes: a README larger than this is not read
# Parsing HCL takes about 300 times a file's size in memory, and seconds a MiB: a .tf over
# this is not read, nor any file once a module's docs have read DOC_BYTES_MOST in all.
TF_FILE_MOST = 256 << 10
DOC_BYTES_MOST = 1 << 20
DOC_FILES_MOST = 2000  # files of one module's docs: beyond, the rest is not read
_SIZES_TIMEOUT = 60.0  # seconds: headers of at most DOC_FILES_MOST local objects


def doc_files(
    clone_path: Path, commit: str, folder: str, *, most: int = DOC_FILE_MOST
) -> list[DocFile]:
    """The `*.tf` files and README.md of `folder` at `commit`, and of each folder one level
    under its `modules/` and `examples/`, in path order; for a module in a folder of its
    repository, then those of each folder under the repository's own `examples/`, by their path
    from `folder` (`../../examples/basic/main.tf`). Raises SourceError when the commit or the
    folder is not in the clone."""
    try:
        with open_repo(clone_path) as repo:
            return _doc_files(repo, commit, folder, most)
    except NotGitRepository as exc:
        raise SourceError(f"no clone at {clone_path.name}") from exc
    except KeyError as exc:  # an object the clone lacks: a fetch may bring it
        raise SourceError(f"commit {commit[:12]}: object {exc} missing from the clone") from exc


def _doc_files(repo: Repo, commit: str, folder: str, most: int) -> list[DocFile]:
    root = folder_tree(repo, commit, folder)
    if root is None:
        raise SourceError(f"commit {commit[:12]} has no folder {folder or '(root)'}")
    folders: list[tuple[str, Tree]] = [("", root)]
    for sub in DOC_SUBFOLDERS:
        parent = _subtree(repo, root, sub)
        for name, mode, sha in parent.iteritems(name_order=True) if parent else ():
            child = repo[sha] if stat.S_ISDIR(mode) else None
            if isinstance(child, Tree):
                folders.append((f"{sub.decode()}/{name.decode('utf-8', 'replace')}", child))
    folders += _repository_examples(repo, commit, folder)
    wanted: list[tuple[str, ObjectID]] = []
    for prefix, tree in folders:
        for name, mode, sha in tree.iteritems(name_order=True):
            text = name.decode("utf-8", "replace")
            if not stat.S_ISREG(mode) or not _documents(text):
                continue  # symbolic links and submodules lead outside the tree
            if len(wanted) >= DOC_FILES_MOST:
                break
            wanted.append((f"{prefix}/{text}" if prefix else text, sha))
    sizes = blob_sizes(Path(repo.controldir()), [sha for _, sha in wanted])
    files: list[DocFile] = []
    budget = DOC_BYTES_MOST
    for path, blob_id in wanted:
        # Named as left out, with the reason; the content of a file left out is never read.
        bound = min(most, TF_FILE_MOST) if path.endswith(".tf") else most
        if sizes[blob_id] > bound:
            files.append(DocFile(path, None, f"larger than {bound} bytes: not read"))
            continue
        if sizes[blob_id] > budget:
            why = f"not read: this module's docs read {DOC_BYTES_MOST} bytes in all, at most"
            files.append(DocFile(path, None, why))
            continue
        budget -= sizes[blob_id]
        blob = repo[blob_id]
        files.append(DocFile(path, blob.as_raw_string() if isinstance(blob, Blob) else b""))
    return files


def _repository_examples(repo: Repo, commit: str, folder: str) -> list[tuple[str, Tree]]:
    """The folders under the repository's root `examples/`, by their path from `folder`: a
    monorepo often keeps its examples there rather than beside each module."""
    if not folder or folder == "examples" or folder.startswith("examples/"):
        return []  # at the root, they are the module's own examples
    root = folder_tree(repo, commit, "")
    parent = _subtree(repo, root, b"examples") if root is not None else None
    found = []
    for name, mode, sha in parent.iteritems(name_order=True) if parent else ():
        child = repo[sha] if stat.S_ISDIR(mode) else None
        if isinstance(child, Tree):
            path = f"examples/{name.decode('utf-8', 'replace')}"
            found.append((posixpath.relpath(path, folder), child))
    return found


def blob_sizes(git_dir: Path, shas: Sequence[bytes]) -> dict[bytes, int]:
    """Each blob's size, read from its object header only (`git cat-file --batch-check`: no
    object is inflated whole, a packed delta's size is in the delta's first bytes). A missing
    object is a KeyError, as dulwich raises for one."""
    unique = list(dict.fromkeys(shas))
    if not unique:
        return {}
    try:
        done = subprocess.run(
            ["git", f"--git-dir={git_dir}", "cat-file", "--batch-check"],
            input=b"".join(sha + b"\n" for sha in unique),
            capture_output=True,
            timeout=_SIZES_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SourceError(f"cannot read file sizes in {git_dir.name}: {exc}") from exc
    sizes: dict[bytes, int] = {}
    for line in done.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2].isdigit():
            sizes[parts[0]] = int(parts[2])
    for sha in unique:
        if sha not in sizes:
            raise KeyError(sha.decode())
    return sizes


def root_files(git_dir: Path, commits: Sequence[str], name: str, *, most: int) -> dict[str, bytes]:
    """The file `name` at the root of each of `commits` that holds one of at most `most` bytes,
    by commit: one `git cat-file --batch-check` asks for them all, reading object headers only
    (a first read of a repository asks for every tag's commit; dulwich would inflate each
    commit and its root tree, much slower: bench/RESULTS.md, bench.scale), then the few found
    are read whole."""
    unique = list(dict.fromkeys(commits))
    if not unique:
        return {}
    try:
        done = subprocess.run(
            ["git", f"--git-dir={git_dir}", "cat-file", "--batch-check"],
            input=b"".join(f"{commit}:{name}\n".encode() for commit in unique),
            capture_output=True,
            timeout=_SIZES_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SourceError(f"cannot read {name} at the tags of {git_dir.name}: {exc}") from exc
    lines = done.stdout.splitlines()
    if done.returncode != 0 or len(lines) != len(unique):
        said = done.stderr.decode("utf-8", "replace").strip()[:200]
        raise SourceError(f"cannot read {name} at the tags of {git_dir.name}: {said}")
    found: dict[str, bytes] = {}
    for commit, line in zip(unique, lines, strict=True):
        parts = line.split()  # `<sha> blob <size>`, or `<commit>:<name> missing`
        blob = len(parts) == 3 and parts[1] == b"blob" and parts[2].isdigit()
        if blob and int(parts[2]) <= most:
            found[commit] = parts[0]
    if not found:
        return {}
    with open_repo(git_dir) as repo:
        blobs = {commit: repo[sha] for commit, sha in found.items()}
    return {c: blob.as_raw_string() for c, blob in blobs.items() if isinstance(blob, Blob)}


def _documents(name: str) -> bool:
    return name.endswith(".tf") or name.lower() == "readme.md"


def _subtree(repo: Repo, tree: Tree, name: bytes) -> Tree | None:
    try:
        mode, sha = tree[name]
    except KeyError:
        return None
    sub = repo[sha] if stat.S_ISDIR(mode) else None
    return sub if isinstance(sub, Tree) else None


def commit_times(clone_path: Path, commits: Iterable[str]) -> dict[str, int]:
    """Each commit's committer time (Unix seconds); commits not in the clone are left out."""
    return _times(clone_path, commits, tags=False)


def tagger_times(clone_path: Path, objects: Iterable[str]) -> dict[str, int]:
    """Each annotated tag object's tagger time (Unix seconds); other objects are left out."""
    return _times(clone_path, objects, tags=True)


def _times(clone_path: Path, objects: Iterable[str], *, tags: bool) -> dict[str, int]:
    times: dict[str, int] = {}
    try:
        with open_repo(clone_path) as repo:
            for sha in objects:
                try:
                    obj = repo[sha.encode()]
                except (KeyError, ValueError):
                    continue
                if tags and isinstance(obj, Tag):
                    times[sha] = int(obj.tag_time)
                elif not tags and isinstance(obj, Commit):
                    times[sha] = int(obj.commit_time)
    except NotGitRepository:
        pass  # no clone yet: no object is known
    return times


def branch_file(repository: Path, ref: str, name: str, *, most: int = 1 << 20) -> bytes | None:
    """The file `name` at the root of the commit `ref` (`refs/heads/main`) points at, in the
    Git directory or work tree `repository`; None when the ref or the file is not there.
    Raises SourceError when it is larger than `most` bytes, or the repository cannot be read."""
    try:
        with open_repo(repository) as repo:
            try:
                commit = repo[repo.refs[ref.encode()]]  # type: ignore[index]
            except KeyError:
                return None
            while not isinstance(commit, Commit) and hasattr(commit, "object"):
                commit = repo[commit.object[1]]  # an annotated tag's target
            if not isinstance(commit, Commit):
                return None
            tree = repo[commit.tree]
            if not isinstance(tree, Tree) or name.encode() not in tree:
                return None
            mode, sha = tree[name.encode()]
            if not stat.S_ISREG(mode):
                return None
            blob = repo[sha]
            if not isinstance(blob, Blob):
                return None
            if blob.raw_length() > most:
                raise SourceError(f"{name} is over {most} bytes: not read")
            return blob.as_raw_string()
    except NotGitRepository as exc:
        raise SourceError(f"{repository} is not a Git repository") from exc


def release_objects(clone_path: Path, tag: str, commit: str) -> tuple[str, str]:
    """The tree of `commit`, and the annotated tag object `tag` names in the clone when it
    points at `commit` ("" for a lightweight tag, or one moved since). Raises SourceError when
    the commit is not in the clone."""
    try:
        with open_repo(clone_path) as repo:
            found = repo[commit.encode()]
            if not isinstance(found, Commit):
                raise SourceError(f"{commit[:12]} is not a commit")
            try:
                named = repo[repo.refs[Ref(f"refs/tags/{tag}".encode())]]
            except KeyError:  # the tag deleted since (its commit pinned): no tag object to name
                named = None
            if isinstance(named, Tag) and named.object[1] == found.id:
                return found.tree.decode(), named.id.decode()
            return found.tree.decode(), ""
    except NotGitRepository as exc:
        raise SourceError(f"no clone at {clone_path.name}") from exc
    except (KeyError, ValueError) as exc:  # an object the clone lacks
        raise SourceError(f"commit {commit[:12]}: object {exc} missing from the clone") from exc


BRANCH_ENTRIES_MOST = 50_000  # tree entries a branch's walk looks at: beyond, the rest is not read


def branch_files(
    clone_path: Path,
    ref: str,
    wanted: Callable[[str], bool],
    *,
    files_most: int = DOC_FILES_MOST,
    file_most: int = TF_FILE_MOST,
    bytes_most: int = 4 * DOC_BYTES_MOST,
) -> tuple[str, list[DocFile]]:
    """The commit `ref` points at, and its files whose path `wanted` accepts, in path order,
    bounded as docs are: a file over `file_most` bytes, or past `bytes_most` in all, is named
    with `why` and never read; past `files_most` files, or BRANCH_ENTRIES_MOST entries walked,
    the rest is left out. Raises SourceError when the ref or the clone cannot be read."""
    try:
        with open_repo(clone_path) as repo:
            try:
                commit = repo[repo.refs[ref.encode()]]  # type: ignore[index]
            except KeyError as exc:
                raise SourceError(f"{ref} is not in the clone") from exc
            if not isinstance(commit, Commit):
                raise SourceError(f"{ref} is no commit")
            found = _walk(repo, commit.tree, wanted, files_most)
            sizes = blob_sizes(Path(repo.controldir()), [sha for _, sha in found])
            files, budget = [], bytes_most
            for path, sha in found:
                if sizes[sha] > file_most:
                    files.append(DocFile(path, None, f"larger than {file_most} bytes: not read"))
                elif sizes[sha] > budget:
                    files.append(DocFile(path, None, f"not read: {bytes_most} bytes read in all"))
                else:
                    budget -= sizes[sha]
                    blob = repo[sha]
                    files.append(
                        DocFile(path, blob.as_raw_string() if isinstance(blob, Blob) else b"")
                    )
            return commit.id.decode(), files
    except NotGitRepository as exc:
        raise SourceError(f"no clone at {clone_path.name}") from exc
    except KeyError as exc:
        raise SourceError(f"{ref}: object {exc} missing from the clone") from exc


def _walk(
    repo: Repo, root: ObjectID, wanted: Callable[[str], bool], most: int
) -> list[tuple[str, ObjectID]]:
    """Every regular file under the tree `root` whose path `wanted` accepts, breadth first."""
    found: list[tuple[str, ObjectID]] = []
    folders: list[tuple[str, ObjectID]] = [("", root)]
    walked = 0
    while folders and len(found) < most and walked < BRANCH_ENTRIES_MOST:
        prefix, sha = folders.pop(0)
        tree = repo[sha]
        if not isinstance(tree, Tree):
            continue
        for name, mode, child in tree.iteritems(name_order=True):
            walked += 1
            path = f"{prefix}{name.decode('utf-8', 'replace')}"
            if stat.S_ISDIR(mode):
                folders.append((f"{path}/", child))
            elif stat.S_ISREG(mode) and wanted(path) and len(found) < most:
                found.append((path, child))
    return sorted(found)
