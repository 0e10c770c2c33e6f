"""Provider releases read from artifact folders: what is served, and what is refused and why."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

import pgpy
import pytest

from gitreg.catalog.load import load_catalog
from gitreg.catalog.model import Catalog
from gitreg.git.clone import TagRef
from gitreg.git.location import RepoLocation
from gitreg.modules.sync import ModuleSync
from gitreg.providers.artifacts import ArtifactFolder
from gitreg.providers.hashes import zip_hashes
from gitreg.providers.hosted import Providers
from gitreg.signing import Keyring
from tests.support.gitrepo import GitRepo, git
from tests.support.provider_releases import new_key, write_key, write_release


@pytest.fixture(scope="module")
def keys() -> dict[str, pgpy.PGPKey]:
    return {name: new_key(name) for name in ("gitreg", "ci", "stranger")}


def folder(tmp_path: Path, keyring: Keyring) -> ArtifactFolder:
    return ArtifactFolder(tmp_path / "artifacts", "widget", keyring, tmp_path / "signatures")


def test_release_signed_by_a_trusted_ci_key_is_served_as_is(
    tmp_path: Path, keys: dict[str, pgpy.PGPKey]
) -> None:
    sums = write_release(tmp_path / "artifacts" / "1.0.0", "widget", "1.0.0", signer=keys["ci"])
    keyring = Keyring([keys["gitreg"]], [keys["ci"].pubkey])
    releases, problems = folder(tmp_path, keyring).scan()
    assert problems == []
    (release,) = releases
    assert release.version == "1.0.0" and release.protocols == ("6.0",)
    assert [(p.os, p.arch) for p in release.packages] == [("darwin", "arm64"), ("linux", "amd64")]
    assert release.shasums == sums.read_bytes()
    assert release.signature == sums.with_name(sums.name + ".sig").read_bytes()
    assert release.signer.key_id == keys["ci"].fingerprint.keyid.upper()
    for package in release.packages:
        assert package.shasum == hashlib.sha256(package.path.read_bytes()).hexdigest()


def test_each_package_has_its_size_and_h1_and_a_file_no_zip_has_no_h1(
    tmp_path: Path, keys: dict[str, pgpy.PGPKey]
) -> None:
    """What the download answer's `packages` lists of each zip; a file zipfile cannot open is
    served as before (its SHA256SUMS line decides), with no h1 to list."""
    sums = write_release(tmp_path / "artifacts", "widget", "1.0.0")
    broken = sums.with_name("terraform-provider-widget_1.0.0_linux_amd64.zip")
    broken.write_bytes(b"not a zip")
    lines = [line for line in sums.read_text().splitlines() if broken.name not in line]
    digest = hashlib.sha256(b"not a zip").hexdigest()
    sums.write_text("\n".join([*lines, f"{digest}  {broken.name}"]) + "\n")
    (release,), problems = folder(tmp_path, Keyring([keys["gitreg"]])).scan()
    assert problems == []
    darwin, linux = release.packages
    assert darwin.size == darwin.path.stat().st_size > 0
    assert darwin.h1 is not None and darwin.h1 == zip_hashes(darwin.path).h1
    assert (linux.shasum, linux.size, linux.h1) == (digest, len(b"not a zip"), None)


def test_unsigned_release_is_signed_by_gitreg_and_stays_the_same(
    tmp_path: Path, keys: dict[str, pgpy.PGPKey]
) -> None:
    write_release(tmp_path / "artifacts", "widget", "1.1.0")
    keyring = Keyring([keys["gitreg"]])
    (first,), _ = folder(tmp_path, keyring).scan()
    assert keyring.verifier_of(first.shasums, first.signature) is not None
    assert first.signature[:1] != b"-"  # binary, not armored: Terraform needs binary
    (again,), _ = folder(tmp_path, keyring).scan()  # a restart
    assert again.signature == first.signature


def test_sums_with_more_than_the_zips_are_narrowed_and_re_signed(
    tmp_path: Path, keys: dict[str, pgpy.PGPKey]
) -> None:
    sums = write_release(
        tmp_path / "artifacts", "widget", "1.2.0", signer=keys["ci"], manifest_in_sums=True
    )
    keyring = Keyring([keys["gitreg"]], [keys["ci"].pubkey])
    (release,), problems = folder(tmp_path, keyring).scan()
    assert problems == []
    assert b"manifest.json" in sums.read_bytes() and b"manifest.json" not in release.shasums
    assert len(release.shasums.splitlines()) == 2
    assert release.signer.key_id == keys["gitreg"].fingerprint.keyid.upper()


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        ("no-sums", "SHA256SUMS is missing"),
        ("zip-not-listed", "is not in SHA256SUMS"),
        ("zip-replaced", "does not match its SHA256SUMS line"),
        ("stranger-signature", "not a valid signature by any configured key"),
        ("garbage-signature", "not a valid signature by any configured key"),
        ("bad-manifest", "protocol_versions"),
        ("bad-version", "not a Semantic Version"),
    ],
)
def test_broken_releases_are_refused_and_the_rest_serves(
    tmp_path: Path, keys: dict[str, pgpy.PGPKey], damage: str, reason: str
) -> None:
    artifacts = tmp_path / "artifacts"
    write_release(artifacts / "good", "widget", "1.0.0", signer=keys["gitreg"])
    version = "1.x" if damage == "bad-version" else "2.0.0"
    sums = write_release(artifacts / "bad", "widget", version, signer=keys["gitreg"])
    zip_path = next((artifacts / "bad").glob("*linux_amd64.zip"))
    if damage == "no-sums":
        sums.unlink()
    elif damage == "zip-not-listed":
        zip_path.with_name(zip_path.name.replace("linux_amd64", "linux_arm64")).write_bytes(
            b"extra"
        )
    elif damage == "zip-replaced":
        zip_path.write_bytes(b"not the zip that was released")
    elif damage == "stranger-signature":
        sums.with_name(sums.name + ".sig").write_bytes(
            bytes(keys["stranger"].sign(sums.read_bytes()))
        )
    elif damage == "garbage-signature":
        sums.with_name(sums.name + ".sig").write_bytes(b"\x89not a signature")
    elif damage == "bad-manifest":
        next((artifacts / "bad").glob("*manifest.json")).write_text('{"version": 1}')
    releases, problems = folder(tmp_path, Keyring([keys["gitreg"]])).scan()
    assert [r.version for r in releases] == ["1.0.0"]
    assert len(problems) == 1 and reason in problems[0].reason, problems


def test_a_rescan_checks_again_only_the_releases_whose_files_changed(
    tmp_path: Path, keys: dict[str, pgpy.PGPKey]
) -> None:
    artifacts = tmp_path / "artifacts"
    write_release(artifacts / "1.0.0", "widget", "1.0.0", signer=keys["ci"])
    sums = write_release(artifacts / "1.1.0", "widget", "1.1.0", signer=keys["ci"])
    sig = sums.with_name(sums.name + ".sig")
    good = sig.read_bytes()
    watched = folder(tmp_path, Keyring([keys["gitreg"]], [keys["ci"].pubkey]))
    (newer, older), _ = watched.scan()

    def replace_sig(data: bytes) -> None:
        # The same size is likely (two Ed25519 signatures): the changed mtime is what tells.
        before = sig.stat().st_mtime_ns
        sig.write_bytes(data)
        os.utime(sig, ns=(before + 1_000_000_000, before + 1_000_000_000))

    replace_sig(bytes(keys["stranger"].sign(sums.read_bytes())))
    releases, problems = watched.scan()
    assert len(releases) == 1 and releases[0] is older  # unchanged: not read or verified again
    assert [(p.version, p.reason) for p in problems] == [
        ("1.1.0", "SHA256SUMS.sig is not a valid signature by any configured key")
    ]
    _, again = watched.scan()
    assert again == problems
    replace_sig(good)
    (back, same), _ = watched.scan()
    assert back == newer and back is not newer and same is older
    watched.keyring = Keyring([keys["gitreg"]])  # another keyring: every release again
    releases, problems = watched.scan()
    assert releases == [] and len(problems) == 2


def test_unsigned_release_without_a_signing_key_is_refused(
    tmp_path: Path, keys: dict[str, pgpy.PGPKey]
) -> None:
    write_release(tmp_path / "artifacts", "widget", "1.0.0")
    releases, problems = folder(tmp_path, Keyring([], [keys["ci"].pubkey])).scan()
    assert releases == [] and "no signing key is configured" in problems[0].reason


def test_keyring_refuses_what_cannot_sign(tmp_path: Path, keys: dict[str, pgpy.PGPKey]) -> None:
    public = write_key(keys["ci"], tmp_path / "ci.asc", public=True)
    with pytest.raises(ValueError, match="holds a public key"):
        Keyring.load([public])
    (tmp_path / "junk.asc").write_text("not a key")
    with pytest.raises(ValueError, match="is not an OpenPGP key"):
        Keyring.load([tmp_path / "junk.asc"])
    private = write_key(keys["gitreg"], tmp_path / "gitreg.asc")
    keyring = Keyring.load([private], [public])
    assert [k.key_id for k in keyring.public_keys()] == [
        keys["gitreg"].fingerprint.keyid.upper(),
        keys["ci"].fingerprint.keyid.upper(),
    ]


def test_a_repository_gates_which_versions_are_published(
    tmp_path: Path, keys: dict[str, pgpy.PGPKey]
) -> None:
    for version in ("1.0.0", "1.1.0"):
        write_release(tmp_path / "releases" / version, "widget", version, signer=keys["gitreg"])
    write_key(keys["gitreg"], tmp_path / "gitreg.asc")
    repo = GitRepo(tmp_path / "provider-src")
    repo.release("v1.0.0", {"main.go": "package main\n"})
    (tmp_path / "registry.yaml").write_text(
        f"cache_dir: cache\nsigning: {{keys: [gitreg.asc]}}\n"
        f"providers:\n  - {{namespace: acme, type: widget, artifacts: releases, repo: {repo.path}}}\n"
    )
    catalog = load_catalog(tmp_path / "registry.yaml")
    sync = ModuleSync(catalog)
    sync.refresh()
    providers = Providers(catalog, sync)
    providers.refresh()
    entry = providers.get("acme", "widget")
    assert entry and [r.version for r in entry.releases] == ["1.0.0"]  # 1.1.0 has files, no tag yet
    repo.release("v1.1.0", {"main.go": "package main // 1.1\n"})
    sync.refresh(mechanism="poll")
    providers.refresh()
    entry = providers.get("acme", "widget")
    assert entry and [r.version for r in entry.releases] == ["1.1.0", "1.0.0"]
    git(repo.path, "tag", "-d", "v1.1.0")  # the tag goes: so does the version
    sync.refresh(mechanism="poll")
    providers.refresh()
    entry = providers.get("acme", "widget")
    assert entry and [r.version for r in entry.releases] == ["1.0.0"]


def test_a_gating_repository_s_tag_deprecates_its_version(
    tmp_path: Path, keys: dict[str, pgpy.PGPKey]
) -> None:
    """The `deprecated:` line of `.gitreg.yaml` at a version's tag, in the repository that gates
    a folder's releases, deprecates that version alone; the entry's own list wins over it."""
    for version in ("1.0.0", "1.1.0", "1.2.0"):
        write_release(tmp_path / "releases" / version, "widget", version, signer=keys["gitreg"])
    write_key(keys["gitreg"], tmp_path / "gitreg.asc")
    repo = GitRepo(tmp_path / "provider-src")
    repo.release("v1.0.0", {".gitreg.yaml": "deprecated: 'Use 1.1: 1.0 loses tags'\n"})
    repo.release("v1.1.0", {".gitreg.yaml": "# nothing deprecated\n"})

    def catalog(more: str = "") -> Catalog:
        entry = f"{{namespace: acme, type: widget, artifacts: releases, repo: {repo.path}{more}}}"
        (tmp_path / "registry.yaml").write_text(
            f"cache_dir: cache\nsigning: {{keys: [gitreg.asc]}}\nproviders:\n  - {entry}\n"
        )
        return load_catalog(tmp_path / "registry.yaml")

    sync = ModuleSync(catalog())
    sync.refresh()
    providers = Providers(sync.snapshot.catalog, sync)
    providers.refresh()
    served = providers.get("acme", "widget")
    assert served is not None
    assert [served.deprecation(v) for v in ("1.1.0", "1.0.0")] == [None, "Use 1.1: 1.0 loses tags"]

    repo.release("v1.2.0", {".gitreg.yaml": "deprecated: A later tag's own word\n"})
    sync.refresh(mechanism="poll")
    listed = catalog(", deprecated: [{versions: '>= 1.1.0', reason: 'Said in registry.yaml'}]")
    reloaded = Providers(listed, sync, previous=providers)
    reloaded.refresh()
    served = reloaded.get("acme", "widget")
    assert served is not None
    assert [served.deprecation(r.version) for r in served.releases] == [
        "Said in registry.yaml",  # 1.2.0: the list wins over its tag's line
        "Said in registry.yaml",
        "Use 1.1: 1.0 loses tags",
    ]


class _UnreadableClone:
    """A gating repository whose tags are known but whose clone git cannot read."""

    def __init__(self, clone: Path) -> None:
        self.clone = clone

    def tags_of(self, location: RepoLocation) -> Sequence[TagRef]:
        return [TagRef("v1.0.0", "0" * 40)]

    def clone_path(self, location: RepoLocation) -> Path | None:
        return self.clone


def test_a_tag_file_that_cannot_be_read_is_said_once_and_the_version_served(
    tmp_path: Path, keys: dict[str, pgpy.PGPKey], caplog: pytest.LogCaptureFixture
) -> None:
    write_release(tmp_path / "releases" / "1.0.0", "widget", "1.0.0", signer=keys["gitreg"])
    write_key(keys["gitreg"], tmp_path / "gitreg.asc")
    GitRepo(tmp_path / "src").release("v1.0.0", {"main.go": "package main\n"})
    (tmp_path / "registry.yaml").write_text(
        "cache_dir: cache\nsigning: {keys: [gitreg.asc]}\nproviders:\n"
        f"  - {{namespace: acme, type: widget, artifacts: releases, repo: {tmp_path / 'src'}}}\n"
    )
    providers = Providers(
        load_catalog(tmp_path / "registry.yaml"), _UnreadableClone(tmp_path / "releases")
    )
    for _ in range(3):  # a rescan every couple of seconds: one warning, not one each
        providers.refresh()
    said = [r for r in caplog.records if "provider tags of" in r.getMessage()]
    assert len(said) == 1
    served = providers.get("acme", "widget")
    assert served is not None and [r.version for r in served.releases] == ["1.0.0"]
    assert served.deprecation("1.0.0") is None  # served meanwhile, not deprecated
