"""`gitreg mirror sync`: fetch providers into the mirror's cache ahead of time (air-gapped
preparation), through the same verified read-through the server uses."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gitreg.address import ProviderAddress
from gitreg.errors import ArchiveError, OriginError
from gitreg.mirror.readthrough import ReadThrough
from gitreg.tags import parse_version


def parse_request(text: str) -> tuple[ProviderAddress, list[str]]:
    """`HOST/NAMESPACE/TYPE[@VERSION,...]`; raise ValueError saying what is wrong."""
    named, _, listed = text.strip().partition("@")
    try:
        address = ProviderAddress.parse(named)
    except ValueError as exc:
        raise ValueError(f"{exc} (give HOST/NAMESPACE/TYPE[@VERSION,...])") from exc
    if address.hostname is None:
        raise ValueError(f"{text!r}: name the origin too, as HOST/NAMESPACE/TYPE[@VERSION,...]")
    versions = [str(parse_version(_unprefixed(v.strip()))) for v in listed.split(",") if v]
    return address, versions


def _unprefixed(version: str) -> str:
    return version[1:] if version[:1] in ("v", "V") else version


def sync(
    mirror: ReadThrough,
    requests: Sequence[str],
    platforms: set[str],
    out: Callable[[str], None] = print,
) -> int:
    """Fetch every requested version (the newest when none is named); return how many failed."""
    failures = 0
    for text in requests:
        try:
            address, versions = parse_request(text)
        except ValueError as exc:
            out(f"! {exc}")
            failures += 1
            continue
        name = str(address)
        refusal = mirror.refusal(address)
        if refusal is not None:
            out(f"! {name}: {refusal}")
            failures += 1
            continue
        if not versions:
            available = mirror.versions(address) or []
            versions = available[:1]
            if not versions:
                out(f"! {name}: the origin lists no version (and none is cached)")
                failures += 1
                continue
            out(f"{name}: no version named, taking the newest, {versions[0]}")
        for version in versions:
            packages = mirror.packages(address, version)
            if not packages:
                out(f"! {name} {version}: not found, or its signature or checksums did not verify")
                failures += 1
                continue
            for package in packages:
                platform = f"{package.os}_{package.arch}"
                if platforms and platform not in platforms:
                    continue
                try:
                    path = mirror.archive(address, package.filename)
                except (OriginError, ArchiveError) as exc:
                    path = None
                    out(f"! {name} {version} {platform}: {exc}")
                if path is None:
                    failures += 1
                    continue
                out(f"{name} {version} {platform}: {path.stat().st_size / 1e6:.1f} MB, verified")
    return failures
