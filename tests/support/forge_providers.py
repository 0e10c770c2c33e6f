"""A provider whose releases a stand-in forge holds: its releases built and signed as goreleaser
writes them, and a registry.yaml that reads them from the forge (with a webhook secret)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pgpy

from gitreg.git.clone import TagRef
from gitreg.git.location import RepoLocation
from gitreg.process.tlscert import TlsMaterial
from tests.support.forge_release_shapes import ForgeRelease
from tests.support.forges import StandInForge
from tests.support.provider_releases import write_release

PROJECT = "acme/terraform-provider-widget"
TOKEN = "forge-token-7f3a"  # in WIDGET_FORGE_TOKEN
SECRET = "release-hook-s3cret"  # in HOOK_SECRET: the global webhooks secret


class NoRepositories:
    """The providers here name no gating repository: no module side to ask."""

    def tags_of(self, location: RepoLocation) -> Sequence[TagRef]:
        return ()

    def clone_path(self, location: RepoLocation) -> Path | None:
        return None


def released(tmp_path: Path, key: pgpy.PGPKey, version: str, tag: str = "") -> ForgeRelease:
    folder = tmp_path / "built" / version
    write_release(folder, "widget", version, ("linux_amd64", "darwin_arm64"), signer=key)
    return ForgeRelease.of_folder(PROJECT, tag or f"v{version}", folder)


def releases_entry(forge: StandInForge, interval: str = "") -> str:
    url = forge.url + forge.prefix
    where = {"gitlab": f"url: '{url}', project", "gitea": f"url: '{url}', repo"}
    first = where.get(forge.kind, f"api_url: '{url}', repo")
    every = f", interval: {interval}" if interval else ""
    return f"{{{forge.kind}: {{{first}: {PROJECT}, token_env: WIDGET_FORGE_TOKEN{every}}}}}"


def write_registry(tmp_path: Path, forge: StandInForge, tls: TlsMaterial, extra: str = "") -> Path:
    """registry.yaml: acme/widget's releases read from `forge` (every hour, so that only a
    webhook or a test reads them again), the signing key in ci.asc, webhooks signed with
    $HOOK_SECRET; `extra`: more top-level YAML."""
    (tmp_path / "registry.yaml").write_text(
        "hostname: registry.example.test\ncache_dir: cache\n"
        "signing: {verify_keys: [ci.asc]}\n"
        "webhooks: {secret_env: HOOK_SECRET}\n"
        f"credentials:\n  - {{url: '{forge.url}', ca_file: '{tls.ca_cert}'}}\n"
        "mirror: {read_through: false}\n"
        "providers:\n"
        f"  - {{namespace: acme, type: widget, releases: {releases_entry(forge, '1h')}}}\n" + extra
    )
    return tmp_path / "registry.yaml"


def list_reads(forge: StandInForge) -> int:
    """How many times the forge was asked for the release list."""
    return sum(1 for a in forge.asked if a.target.split("?")[0].endswith("/releases"))


def downloads(forge: StandInForge) -> int:
    """Release files the forge was asked for (GitHub's asset API and their downloads alike)."""
    return sum(1 for a in forge.asked if "/downloads/" in a.target)
