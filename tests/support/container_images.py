"""Container images for the deploy tests, made here since none can be pulled: a Debian base
from mmdebstrap, a wheelhouse of gitreg's dependencies, deploy/Containerfile built on them, and
working containers to run commands in, all with buildah's chroot isolation.

The base image and the wheelhouse are kept between runs in ~/.cache/gitreg-test-images (and
the base in buildah's storage), keyed by what they are made of (the package list; gitreg's
dependencies): only the first run pays for them. A lock there keeps two test sessions from making the same thing at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tomllib
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SUITE = "bookworm"
IMAGE_PYTHON = (3, 11)  # bookworm's python3: the wheelhouse is built for it
# No python3-pip: the image's venv brings its own pip (python3-venv holds its wheel), and
# python3-pip would add setuptools and wheel, and the time to unpack and byte-compile them.
PACKAGES = ("python3", "python3-venv", "git", "openssh-client", "ca-certificates")
# Documentation is a fifth of the tarball, and nothing here reads it.
_EXCLUDES = ("/usr/share/doc/*", "/usr/share/man/*", "/usr/share/info/*", "/usr/share/locale/*")
# A throwaway root filesystem: dpkg need not sync every file it unpacks.
_DPKG_OPTIONS = ("force-unsafe-io", *(f"path-exclude={pattern}" for pattern in _EXCLUDES))
BASE_REPOSITORY = "localhost/gitreg-test-base"


def cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gitreg-test-images"


def unavailable() -> str | None:
    """Why images cannot be made and run here, or None."""
    if sys.platform != "linux" or os.geteuid() != 0:
        return "building and running images with buildah's chroot isolation needs root on Linux"
    for tool in ("mmdebstrap", "buildah"):
        if shutil.which(tool) is None:
            return f"{tool} is not on PATH (Debian package {tool}; .ci/run installs it)"
    if sys.version_info[:2] != IMAGE_PYTHON:
        wanted = ".".join(map(str, IMAGE_PYTHON))
        return (
            f"the wheelhouse is built by this Python {sys.version_info.major}."
            f"{sys.version_info.minor}, for the image's Python {wanted} ({SUITE})"
        )
    return None


def buildah(*args: str, timeout: float = 300) -> str:
    """`buildah ARGS` to its end; its standard output, stripped. Failure says what buildah said."""
    done = subprocess.run(
        ["buildah", *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"buildah {' '.join(args)} exited with {done.returncode}:\n{done.stdout}{done.stderr}"
        )
    return done.stdout.strip()


def _run(command: list[str], timeout: float) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(command)} exited with {done.returncode}:\n{done.stdout}{done.stderr}"
        )


def _key(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:16]


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


_OTHERS_KEPT = 2  # other keys' leftovers kept, the most recently used: other checkouts' suites


def _prune(root: Path, prefix: str, keep: Path) -> None:
    """Remove what older keys left (a changed package list, a changed pyproject.toml), but the
    most recently used few: a suite of another checkout beside this one may be building from
    one (each use touches it)."""
    others = sorted(
        (old for old in root.glob(f"{prefix}*") if old != keep),
        key=lambda old: old.stat().st_mtime,
        reverse=True,
    )
    for old in others[_OTHERS_KEPT:]:
        shutil.rmtree(old) if old.is_dir() else old.unlink()


def image_exists(name: str) -> bool:
    return (
        subprocess.run(
            ["buildah", "inspect", "--type", "image", name], capture_output=True, check=False
        ).returncode
        == 0
    )


def base_image() -> str:
    """A Debian base with Python, git and ssh, as `localhost/gitreg-test-base:KEY`: from buildah's
    storage, else imported from the cached tarball, else made by mmdebstrap first."""
    key = _key(SUITE, "minbase", PACKAGES, _DPKG_OPTIONS)
    name = f"{BASE_REPOSITORY}:{key}"
    root = cache_root()
    with _locked(root):
        if image_exists(name):
            return name
        tarball = root / f"base-{key}.tar"
        if not tarball.is_file():
            _prune(root, "base-", keep=tarball)
            partial = root / f"partial-{tarball.name}"
            partial.unlink(missing_ok=True)
            _run(
                [
                    "mmdebstrap",
                    "--quiet",
                    "--variant=minbase",
                    f"--include={','.join(PACKAGES)}",
                    *(f"--dpkgopt={option}" for option in _DPKG_OPTIONS),
                    SUITE,
                    str(partial),
                ],
                timeout=900,
            )
            partial.rename(tarball)  # whole, or not there: a cut-off run leaves no half tarball
        _import(tarball, name)
    return name


def _import(tarball: Path, name: str) -> None:
    """A tarball of a root filesystem as an image: what `podman import` does, with buildah."""
    container = buildah("from", "--quiet", "scratch")
    try:
        buildah("add", "--quiet", container, str(tarball), "/", timeout=600)
        buildah("commit", "--quiet", "--rm", container, name, timeout=600)
    except BaseException:
        subprocess.run(["buildah", "rm", container], capture_output=True, check=False)
        raise


def wheelhouse(repo: Path) -> Path:
    """Wheels of gitreg's dependencies and of its build backend, for an offline image build
    (`--no-index --find-links`); gitreg itself is built in the image, from its own files."""
    pyproject = tomllib.loads((repo / "pyproject.toml").read_text())
    build_requires = pyproject["build-system"]["requires"]
    dependencies = pyproject["project"]["dependencies"]
    root = cache_root()
    folder = root / f"wheels-{_key(dependencies, build_requires, IMAGE_PYTHON)}"
    with _locked(root):
        if folder.is_dir():
            os.utime(folder)  # used: among the last another key's suite prunes
            return folder
        _prune(root, "wheels-", keep=folder)
        partial = root / f"partial-{folder.name}"
        shutil.rmtree(partial, ignore_errors=True)
        pip = [sys.executable, "-m", "pip", "wheel", "--quiet", "--wheel-dir", str(partial)]
        _run([*pip, str(repo), *build_requires], timeout=600)
        for own in partial.glob("gitreg-*.whl"):
            own.unlink()
        partial.rename(folder)
    return folder


def build_image(repo: Path, base: str, wheels: Path) -> str:
    """deploy/Containerfile built on `base`, offline, in docker format (the OCI format has no
    HEALTHCHECK); the image's name."""
    name = f"localhost/gitreg-test:{uuid.uuid4().hex[:12]}"
    buildah(
        "bud",
        "--isolation=chroot",
        "--format=docker",
        "--file",
        str(repo / "deploy" / "Containerfile"),
        "--build-arg",
        f"BASE={base}",
        "--build-arg",
        "GITREG_PIP_OPTIONS=--no-index --find-links /wheels",
        "--volume",
        f"{wheels}:/wheels:ro",
        "--tag",
        name,
        str(repo),
        timeout=900,
    )
    return name


def image_config(name: str) -> dict[str, Any]:
    """The image's configuration, as Docker's format has it (with Healthcheck)."""
    config: dict[str, Any] = json.loads(buildah("inspect", "--type", "image", name))["Docker"][
        "config"
    ]
    return config


@contextlib.contextmanager
def working_container(image: str) -> Iterator[str]:
    """`buildah from IMAGE`: a container to run commands in; removed on exit."""
    container = buildah("from", "--quiet", "--pull=never", image)
    try:
        yield container
    finally:
        subprocess.run(["buildah", "rm", container], capture_output=True, check=False)


def bind_instead_of_volume(container: str, path: str) -> None:
    """Drop the image's VOLUME `path` from `container`, for a `--volume HOST:path` bind: buildah
    1.28 mounts both there, in an order that varies from run to run (a runtime's `-v` replaces
    the volume)."""
    buildah("config", "--volume", f"{path}-", container)


def run_command(
    container: str,
    command: list[str],
    volumes: tuple[str, ...] = (),
    env: tuple[str, ...] = (),
) -> list[str]:
    """The `buildah run` command line that runs `command` in `container`, as the image's user,
    on the host's network (chroot isolation), with `volumes` (HOST:CONTAINER[:ro])."""
    options = [*(f"--volume={volume}" for volume in volumes), *(f"--env={item}" for item in env)]
    return ["buildah", "run", "--isolation=chroot", *options, container, "--", *command]


def descendants(pid: int) -> list[int]:
    """Every process under `pid`, from /proc (chroot isolation shares the host's PID space)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            # The command name, in parentheses, may hold spaces: fields follow the last ')'.
            fields = stat.read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def command_line(pid: int) -> list[str]:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_text().rstrip("\0").split("\0")
    except OSError:
        return []


def real_uid(pid: int) -> int:
    for line in (Path("/proc") / str(pid) / "status").read_text().splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    raise ValueError(f"no Uid line for process {pid}")
