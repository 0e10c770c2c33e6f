"""Provider releases from a folder of release files, as goreleaser writes them.

The folder is flat or holds one folder per version, of files named as `filenames.py` parses them;
a release's `_manifest.json` gives its `protocols`. gitreg serves a SHA256SUMS that lists the zips
only (Terraform records a hash for every line), signed: by the release's own signature when it
covers exactly that file and a configured key verifies it, else by gitreg's signing key. A
release that fails a check is reported, not served; a release is checked again only when one of
its files changes name, size or mtime. See docs/providers.md."""

from __future__ import annotations

import hashlib
import json
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from gitreg.atomic import write_atomically
from gitreg.providers.filenames import PackageFile, ReleaseFile
from gitreg.providers.hashes import HashCache
from gitreg.signing import Keyring, PublicKey
from gitreg.tags import parse_version, version_sort_key

_DEFAULT_PROTOCOLS = ("5.0",)


@dataclass(frozen=True)
class ProviderPackage:
    os: str
    arch: str
    filename: str
    path: Path
    shasum: str  # hex sha256 of the zip
    size: int  # the zip's bytes
    h1: str | None  # its `h1:` hash (hashes.py); None for a file zipfile cannot read


@dataclass(frozen=True)
class ProviderRelease:
    version: str
    protocols: tuple[str, ...]
    packages: tuple[ProviderPackage, ...]  # sorted by os, arch
    shasums_name: str
    shasums: bytes  # what is served: the zips' lines only
    signature: bytes  # binary detached signature of `shasums`
    signer: PublicKey

    def package(self, os: str, arch: str) -> ProviderPackage | None:
        return next((p for p in self.packages if (p.os, p.arch) == (os, arch)), None)


@dataclass(frozen=True)
class ReleaseProblem:
    version: str
    reason: str

    def __str__(self) -> str:
        return f"{self.version}: {self.reason}"


_Stamp = tuple[tuple[str, int, int], ...]  # each file's path, size and mtime_ns


@dataclass(frozen=True)
class _Checked:
    files: _Stamp  # as they were before they were read
    keyring: Keyring
    outcome: ProviderRelease | ReleaseProblem


class ArtifactFolder:
    """Reads one provider's release files; remembers each release's outcome, and each zip's hash,
    while its files do not change (by name, size and mtime: a file rewritten with the same size
    and mtime goes unnoticed)."""

    def __init__(
        self,
        folder: Path,
        provider_type: str,
        keyring: Keyring,
        signatures: Path,
        hashes: HashCache | None = None,
    ) -> None:
        self.folder = folder
        self.type = provider_type
        self.keyring = keyring
        self.signatures = signatures  # cache_dir folder: gitreg's own signatures, kept stable
        # Each zip's zh, h1 and size: shared with the network mirror, which lists the same.
        self.hashes = hashes if hashes is not None else HashCache()
        # The sha256 and size of files zipfile cannot read (SHA256SUMS still decides on them).
        self._sums: dict[tuple[Path, int, int], tuple[str, int]] = {}
        self._checked: dict[str, _Checked] = {}  # by version, from the last scan

    def scan(self) -> tuple[list[ProviderRelease], list[ReleaseProblem]]:
        """Every release in the folder, newest first, and the problems of those refused."""
        files: dict[str, dict[str, Path]] = {}
        zips: dict[str, list[tuple[str, str, Path]]] = {}
        if not self.folder.is_dir():
            return [], [ReleaseProblem("*", f"{self.folder} is not a folder")]
        stamps: dict[Path, tuple[str, int, int]] = {}
        for path in sorted([*self.folder.glob("*"), *self.folder.glob("*/*")]):
            try:
                status = path.stat()  # one stat per file: the floor of a rescan
            except OSError:
                continue  # gone since it was listed (Path.is_file() says False too)
            if not stat.S_ISREG(status.st_mode):
                continue
            stamps[path] = (str(path), status.st_size, status.st_mtime_ns)
            if package := PackageFile.find(path.name, self.type):
                zips.setdefault(package.version, []).append((package.os, package.arch, path))
            elif release_file := ReleaseFile.find(path.name, self.type):
                files.setdefault(release_file.version, {})[release_file.kind] = path
        checked = {}
        for version in sorted(set(zips) | set(files)):
            paths = [p for *_, p in zips.get(version, [])] + list(files.get(version, {}).values())
            stamp = tuple(sorted(stamps[p] for p in paths))
            known = self._checked.get(version)
            if known is None or known.files != stamp or known.keyring is not self.keyring:
                outcome = self._check(version, zips.get(version, []), files.get(version, {}))
                known = _Checked(stamp, self.keyring, outcome)
            checked[version] = known
        self._checked = checked
        outcomes = [c.outcome for c in checked.values()]
        releases = [o for o in outcomes if isinstance(o, ProviderRelease)]
        problems = [o for o in outcomes if isinstance(o, ReleaseProblem)]
        releases.sort(key=lambda r: version_sort_key(parse_version(r.version)), reverse=True)
        return releases, problems

    def _check(
        self, version: str, zips: list[tuple[str, str, Path]], files: dict[str, Path]
    ) -> ProviderRelease | ReleaseProblem:
        try:
            return self._release(version, zips, files)
        except ValueError as exc:
            return ReleaseProblem(version, str(exc))
        except OSError as exc:  # a file went or changed while being read: seen again next scan
            return ReleaseProblem(version, f"could not be read: {exc}")

    def _release(
        self, version: str, zips: list[tuple[str, str, Path]], files: dict[str, Path]
    ) -> ProviderRelease:
        parse_version(version)  # raises ValueError: not a version
        if not zips:
            raise ValueError("no zip for any platform")
        if "SHA256SUMS" not in files:
            raise ValueError(f"{ReleaseFile(self.type, version, 'SHA256SUMS')} is missing")
        original = files["SHA256SUMS"].read_bytes()
        listed = _parse_sums(original)
        packages = []
        for os_name, arch, path in zips:
            shasum, size, h1 = self._hashed(path)
            if path.name not in listed:
                raise ValueError(f"{path.name} is not in SHA256SUMS")
            if listed[path.name] != shasum:
                raise ValueError(
                    f"{path.name} does not match its SHA256SUMS line (corrupt or replaced)"
                )
            packages.append(ProviderPackage(os_name, arch, path.name, path, shasum, size, h1))
        served = b"".join(
            line + b"\n"
            for line in original.splitlines()
            if PackageFile.find(_sums_name(line) or "", self.type)
        )
        signature, signer = self._signature(served, original, files.get("SHA256SUMS.sig"))
        return ProviderRelease(
            version=version,
            protocols=self._protocols(files.get("manifest.json")),
            packages=tuple(sorted(packages, key=lambda p: (p.os, p.arch))),
            shasums_name=files["SHA256SUMS"].name,
            shasums=served,
            signature=signature,
            signer=signer,
        )

    def _signature(
        self, served: bytes, original: bytes, sig_path: Path | None
    ) -> tuple[bytes, PublicKey]:
        if sig_path is not None:
            theirs = sig_path.read_bytes()
            signer = self.keyring.verifier_of(original, theirs)
            if signer is None:
                raise ValueError("SHA256SUMS.sig is not a valid signature by any configured key")
            if served == original:
                return theirs, signer
        if not self.keyring.can_sign:
            raise ValueError(
                "unsigned (or SHA256SUMS lists more than the zips) and no signing key is configured"
            )
        cached = self.signatures / f"{hashlib.sha256(served).hexdigest()}.sig"
        if cached.is_file():
            ours = cached.read_bytes()
            signer = self.keyring.verifier_of(served, ours)
            if signer is not None:
                return ours, signer  # the same signature across restarts
        ours = self.keyring.sign(served)
        write_atomically(cached, ours)
        signer = self.keyring.verifier_of(served, ours)
        assert signer is not None
        return ours, signer

    def _protocols(self, manifest: Path | None) -> tuple[str, ...]:
        if manifest is None:
            return _DEFAULT_PROTOCOLS
        try:
            versions = json.loads(manifest.read_text())["metadata"]["protocol_versions"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{manifest.name} has no metadata.protocol_versions") from exc
        if not isinstance(versions, list) or not all(
            isinstance(v, str) and re.fullmatch(r"\d+\.\d+", v) for v in versions
        ):
            raise ValueError(f'{manifest.name}: protocol_versions must be like ["5.0"]')
        return tuple(versions) or _DEFAULT_PROTOCOLS

    def _hashed(self, path: Path) -> tuple[str, int, str | None]:
        """The zip's hex sha256, size and h1; a file zipfile cannot open is still listed by its
        sha256 (SHA256SUMS decides), without an h1."""
        try:
            hashes = self.hashes.get(path)
        except ValueError:
            return *self._sha256(path), None
        return hashes.zh.removeprefix("zh:"), hashes.size, hashes.h1

    def _sha256(self, path: Path) -> tuple[str, int]:
        status = path.stat()
        key = (path, status.st_size, status.st_mtime_ns)
        if key not in self._sums:
            digest = hashlib.sha256()
            size = 0
            with path.open("rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    digest.update(chunk)
                    size += len(chunk)
            self._sums[key] = (digest.hexdigest(), size)
        return self._sums[key]


def _sums_name(line: bytes) -> str | None:
    parts = line.decode("utf-8", "replace").split()
    return parts[1].lstrip("*") if len(parts) == 2 else None


def _parse_sums(text: bytes) -> dict[str, str]:
    result = {}
    for line in text.splitlines():
        parts = line.decode("utf-8", "replace").split()
        if len(parts) == 2:
            result[parts[1].lstrip("*")] = parts[0].lower()
    return result
