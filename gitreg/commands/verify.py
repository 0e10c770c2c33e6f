"""`gitreg verify`: every cached archive's bytes compared with the SHA-256 recorded for it.

Reads the digests recorded beside the ledgers (cache_dir/ledgers, or, under `state: postgres`,
the table every replica records them in), hashes each cached .tar.gz and .zip at background
priority (os.nice, chunked reads that yield to gitreg.pacing), and prints a line per file that
differs or has no record, then a summary. Exit 0: all match; 1: any do not; 2: the records
cannot be read. `--rebuild` also builds each recorded archive again from its clone (the
server's build code, into a temporary file, never the cache) and compares that with the record.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import sys
import tempfile
from pathlib import Path
from typing import BinaryIO

from gitreg import pacing
from gitreg.catalog.model import Catalog
from gitreg.errors import ArchiveError, NotReadYet, SourceError
from gitreg.modules.archive_cache import TARBALL, ZIP, ArchiveFormat, ArchiveKey
from gitreg.state.configured import open_state

_CHUNK = 1 << 20


def verify(catalog: Catalog, args: argparse.Namespace) -> int:
    """Compare every cached archive with its record; print what differs; 0, or 1 on any."""
    _background()
    state = open_state(catalog)
    try:
        records = state.archive_digests()
    except SourceError as exc:  # a file that is not JSON; PostgreSQL out of reach
        print(f"gitreg: verify: cannot read the recorded digests: {exc}", file=sys.stderr)
        return 2
    finally:
        state.close()
    recorded = {name: digest for ledger in records.values() for name, digest in ledger.items()}
    files: list[Path | tuple[Path, str]] = list(_cached(catalog.cache_dir))
    if args.rebuild:
        clones = catalog.cache_dir / "git"
        files += [(clones / f"{r}.git", n) for r, names in records.items() for n in names]
    progress = sys.stdout.isatty() and sys.stderr.isatty()
    bad = 0
    for done, path in enumerate(files, 1):
        if progress:
            print(f"\rgitreg verify: {done}/{len(files)}", end="", file=sys.stderr, flush=True)
        if isinstance(path, tuple):
            clone, name = path
            problem = _rebuilt_problem(catalog, clone, name, recorded[name])
            where = f"{name} rebuilt from {clone}"
        else:
            problem, where = _problem(path, recorded.get(path.name)), str(path)
        if problem:
            bad += 1
            if progress:
                print("\r\033[K", end="", file=sys.stderr, flush=True)
            print(f"{where}: {problem}", flush=True)
    if progress:
        print("\r\033[K", end="", file=sys.stderr, flush=True)
    print(f"{len(files)} archives checked, {len(files) - bad} match, {bad} do not")
    return 1 if bad else 0


def _problem(path: Path, digest: str | None) -> str | None:
    if digest is None:
        return "no digest is recorded for it"
    try:
        actual = _sha256(path)
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    if actual != digest:
        return f"sha256:{actual}, but sha256:{digest} is recorded (replaced or corrupted)"
    return None


def _rebuilt_problem(catalog: Catalog, clone: Path, name: str, digest: str) -> str | None:
    """How the archive `name` built again from `clone` differs from `digest`, or None."""
    form, key = _key_of(catalog, name)
    if form is None or key is None:
        return "cannot be rebuilt: no module in the catalog archives its folder"
    if not (clone / "objects").is_dir():
        return f"cannot be rebuilt: no clone at {clone}"
    limits = catalog.archives.limits
    try:
        with tempfile.TemporaryFile() as out:
            form.write(clone, key.commit, key.folder, out, limits)
            out.flush()
            out.seek(0)
            actual = _sha256_of(out)
    except (ArchiveError, NotReadYet, OSError, ValueError, KeyError) as exc:
        return f"cannot be rebuilt: {exc}"
    if actual != digest:
        return f"builds sha256:{actual}, but sha256:{digest} is recorded"
    return None


def _key_of(catalog: Catalog, name: str) -> tuple[ArchiveFormat | None, ArchiveKey | None]:
    """The format and key of the archive file `name`, its folder among the catalog's modules'."""
    form = next((f for f in (TARBALL, ZIP) if name.endswith(f.suffix)), None)
    if form is None:
        return None, None
    commit, _, _ = name.removesuffix(form.suffix).partition("-")
    folders = {"", *(spec.path for spec in catalog.modules)}
    keys = (ArchiveKey(commit, folder) for folder in folders)
    return form, next((k for k in keys if f"{k.name}{form.suffix}" == name), None)


def _cached(cache_dir: Path) -> list[Path]:
    forms = ((cache_dir / f.folder, f"*{f.suffix}") for f in (TARBALL, ZIP))
    return sorted(path for folder, pattern in forms for path in folder.rglob(pattern))


def _sha256(path: Path) -> str:
    with path.open("rb") as file:
        return _sha256_of(file)


def _sha256_of(file: BinaryIO) -> str:
    """The SHA-256 (hex) of what is left to read of `file`, a chunk at a time, paced."""
    sha = hashlib.sha256()
    while chunk := file.read(_CHUNK):
        sha.update(chunk)
        pacing.breathe()
    return sha.hexdigest()


def _background() -> None:
    """Run at the lowest CPU priority: a server on this host keeps its share."""
    with contextlib.suppress(OSError):
        os.nice(19 - os.nice(0))
