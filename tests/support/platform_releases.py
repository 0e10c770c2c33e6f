"""A registry serving one hosted provider released for six platforms, signed by gitreg: what the
tests of the download answer's `packages` map (OpenTofu 1.12) ask of every platform."""

from __future__ import annotations

from pathlib import Path

from tests.support.provider_releases import new_key, write_key, write_release

PLATFORMS = (
    "darwin_amd64",
    "darwin_arm64",
    "freebsd_amd64",
    "linux_amd64",
    "linux_arm64",
    "windows_amd64",
)


def six_platform_registry(root: Path, version: str = "1.0.0") -> Path:
    """registry.yaml under `root`, serving `acme/widget` `version` for every one of PLATFORMS;
    each zip different: its content names its platform."""
    key = new_key("gitreg")
    write_key(key, root / "signing.asc")
    write_release(root / "widget" / version, "widget", version, PLATFORMS)
    path = root / "registry.yaml"
    path.write_text(
        "hostname: registry.example.test\n"
        "cache_dir: cache\n"
        "signing: {keys: [signing.asc]}\n"
        "providers:\n"
        "  - {namespace: acme, type: widget, artifacts: widget}\n"
        "mirror: {read_through: false}\n"
    )
    return path
