"""What a provider's page shows, at its newest version or another, as plain data for the template.

It shows the `required_providers` block for that version (`~> X.Y` on the newest, the exact
version on any other, which is what its page is about), its platforms and their files, every
version to go to, and the keys that sign them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gitreg.pages.usage import cli_host_block, constraint, latest_release, prerelease
from gitreg.providers.artifacts import ProviderPackage, ProviderRelease, ReleaseProblem
from gitreg.providers.hosted import ProviderEntry
from gitreg.signing import PublicKey

# What people call the platforms Go names (`GOOS`, `GOARCH`), for the platform list.
_SYSTEMS = {"darwin": "macOS", "linux": "Linux", "windows": "Windows", "freebsd": "FreeBSD"}
_ARCHITECTURES = {"amd64": "x86-64", "arm64": "ARM64", "386": "x86 (32-bit)", "arm": "ARM"}


@dataclass(frozen=True)
class Platform:
    os: str
    arch: str
    label: str  # "Linux, x86-64"
    filename: str
    shasum: str


@dataclass(frozen=True)
class VersionChoice:
    release: ProviderRelease
    version: str
    url: str
    shown: bool  # the version this page is about
    newest: bool
    deprecated: str = ""  # why this version is deprecated; "" when it is not
    prerelease: bool = False  # 1.2.0-rc.1: a constraint never picks it, only its exact version
    revoked: str = ""  # why this version is revoked; "" when it is not


@dataclass(frozen=True)
class ProviderPage:
    address: str
    namespace: str
    url: str  # the page of the newest version
    warning: str | None
    version: str  # "" when no version is served
    newest: str
    is_newest: bool
    protocols: tuple[str, ...]
    platforms: tuple[Platform, ...]
    signer: PublicKey | None
    snippet: str
    host_block: str  # the CLI config block that leads `hostname` here; "" when not needed
    choices: tuple[VersionChoice, ...]  # newest first, one for each version served
    keys: tuple[PublicKey, ...]
    problems: tuple[ReleaseProblem, ...]
    removed: bool = False  # found by a survey, its repository since gone: its versions serve
    deprecated: str = ""  # why the version shown is deprecated; "" when it is not
    revoked: str = ""  # why the version shown is revoked; "" when it is not


def provider_url(entry: ProviderEntry, version: str | None = None) -> str:
    """The page of `version`; of the newest, its address without one."""
    url = f"/providers/{entry.spec.namespace}/{entry.spec.type}"
    newest = latest_release(entry.releases)
    return url if version is None or (newest and version == newest.version) else f"{url}/{version}"


def _platform(package: ProviderPackage) -> Platform:
    system = _SYSTEMS.get(package.os, package.os)
    label = f"{system}, {_ARCHITECTURES.get(package.arch, package.arch)}"
    return Platform(package.os, package.arch, label, package.filename, package.shasum)


def snippet(hostname: str, entry: ProviderEntry, version: str, newest: bool) -> str:
    """The `required_providers` block for `version`: `~> X.Y` on the newest version's page,
    the version itself on any other (a `~>` there would install a newer one)."""
    spec = entry.spec
    wanted = constraint(version, newest)
    return (
        "terraform {\n  required_providers {\n"
        f"    {spec.type} = {{\n"
        f'      source  = "{hostname}/{spec.namespace}/{spec.type}"\n'
        f'      version = "{wanted}"\n'
        "    }\n  }\n}"
    )


def provider_page(
    hostname: str,
    entry: ProviderEntry,
    keys: Sequence[PublicKey],
    release: ProviderRelease | None = None,
    address: str = "",
    login: bool = False,
) -> ProviderPage:
    """The page of `release` (by default the newest) of `entry`, opened at `address` (as the
    module page's: the CLI `host` block shown when it is not `hostname`, with `login.v1` when
    `login`)."""
    spec = entry.spec
    newest = latest_release(entry.releases)
    shown = release or newest
    is_newest = shown is not None and newest is not None and shown.version == newest.version
    choices = tuple(
        VersionChoice(
            r,
            r.version,
            provider_url(entry)
            if newest and r.version == newest.version
            else provider_url(entry, r.version),
            shown is not None and r.version == shown.version,
            newest is not None and r.version == newest.version,
            entry.deprecation(r.version) or "",
            prerelease(r.version),
            entry.revocation(r.version) or "",
        )
        for r in entry.releases
    )
    return ProviderPage(
        address=f"{spec.namespace}/{spec.type}",
        namespace=spec.namespace,
        url=provider_url(entry),
        warning=entry.warning(),
        version=shown.version if shown else "",
        newest=newest.version if newest else "",
        is_newest=is_newest,
        protocols=shown.protocols if shown else (),
        platforms=tuple(_platform(p) for p in shown.packages) if shown else (),
        signer=shown.signer if shown else None,
        snippet=snippet(hostname, entry, shown.version, is_newest) if shown else "",
        host_block=cli_host_block(hostname, address, login) if shown else "",
        choices=choices,
        keys=tuple(keys),
        problems=entry.problems,
        removed=spec.removed,
        deprecated=entry.deprecation(shown.version) or "" if shown else "",
        revoked=entry.revocation(shown.version) or "" if shown else "",
    )
