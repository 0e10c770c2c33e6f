"""`gitreg check`: the catalog validated, every repository reached and read, every problem said
with its key path."""

from __future__ import annotations

import argparse
import asyncio
import errno
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from gitreg.attestations.keys import PUBLIC_KEY_PATH, registry_key
from gitreg.auth.jwks import IssuerKeys
from gitreg.auth.login_provider import OpenIdProvider
from gitreg.auth.review import archive_warnings, auth_warnings
from gitreg.catalog.model import Catalog
from gitreg.catalog.settings import Listen
from gitreg.catalog.specs import SourceSpec
from gitreg.commands.endpoint import endpoint
from gitreg.errors import AuthUnavailable, OriginError, SourceError, StartupError
from gitreg.git.clone import BareClone
from gitreg.git.location import redact
from gitreg.mirror.origin import OriginRegistry
from gitreg.modules.resolve import a_few, no_version_text, slips
from gitreg.modules.signed_tags import refused
from gitreg.modules.sync import ModuleSync
from gitreg.oci.names import module_repository
from gitreg.providers.hosted import Providers
from gitreg.sources.surveys import SourceSurveys

Key = tuple[str, str, str]


def check(catalog: Catalog, args: argparse.Namespace) -> int:
    """Validate, reach every repository, and report each problem with its key path. Warnings
    (a provider with no release yet) are printed and counted, but only problems fail. What
    would stop `serve` from starting (its address, its TLS files) is refused first, as `serve`
    refuses it: one line, exit status 2."""
    try:
        found = endpoint(catalog, args)
    except StartupError as exc:
        print(f"gitreg: {exc}", file=sys.stderr)
        return exc.status
    problems: list[str] = _listen_problems(found.listen, "--listen" if args.listen else "listen")
    warnings: list[str] = []
    paths = {spec.address.key: f"modules[{i}]" for i, spec in enumerate(catalog.modules)}
    provider_paths = {
        spec.key: f"providers[{i}].{'releases' if spec.releases else 'artifacts'}"
        for i, spec in enumerate(catalog.providers)
    }
    catalog = _surveyed(catalog, problems, warnings, paths, provider_paths)
    sync = ModuleSync(catalog)

    def reach(clone: BareClone) -> str | None:
        try:
            clone.remote_tags()
        except SourceError as exc:
            return str(exc)
        return None

    clones = sync.snapshot.clones
    with ThreadPoolExecutor(8) as pool:
        errors = dict(zip(clones, pool.map(reach, clones.values()), strict=True))
    for location, error in errors.items():
        for spec in sync.snapshot.specs[location] if error else ():
            problems.append(f"{paths[spec.address.key]}.repo: {error}")
    sync.refresh()
    problems += _versionless(sync, paths)
    warnings += _slipped_tags(sync, paths)
    warnings += _refused_tags(sync, paths)
    providers = Providers(catalog, sync)
    providers.refresh(poll_forges=True)  # every forge's release list, several at once
    for provider in providers.entries():
        where = provider_paths[provider.spec.key]
        problems += [f"{where}: {provider.spec} {p}" for p in provider.problems]
        if warning := provider.warning():
            warnings.append(f"warning: {where}: {provider.spec} {warning}")
    problems += _origin_problems(catalog)
    problems += _login_problems(catalog)
    problems += _oidc_problems(catalog)
    problems += _oci_problems(catalog, paths)
    warnings += auth_warnings(catalog)
    warnings += archive_warnings(catalog)
    warnings += _plain_http_warnings(catalog)
    for line in problems + warnings:
        print(line)
    if catalog.provenance is not None:
        key = registry_key(catalog.provenance)
        print(
            f"provenance.key: each version's provenance is signed ({key.public.scheme}, key id"
            f" {key.keyid}; its public key at {PUBLIC_KEY_PATH})"
        )
    counts = f"{len(catalog.modules)} modules, {len(catalog.providers)} providers"
    print(f"{catalog.source}: {counts}, {len(problems)} problems, {len(warnings)} warnings")
    return 1 if problems else 0


def _surveyed(
    catalog: Catalog,
    problems: list[str],
    warnings: list[str],
    paths: dict[Key, str],
    provider_paths: dict[tuple[str, str], str],
) -> Catalog:
    """Every source surveyed once (nothing written to cache_dir: a server's last survey
    stays its own); the catalog with what they found, each found module's and
    provider's path being its source and repository."""
    sources = SourceSurveys(catalog)
    for spec in catalog.sources:
        sources.survey(spec, write=False)
        found = sources.last(spec)
        if found is None:
            continue
        where = spec.key_path
        if found.error:
            problems.append(f"{where}: {spec.kind} {spec.where} {spec.scope}: {found.error}")
        if found.held:
            problems.append(f"{where}: {found.held}")
        problems += [f"{where}: {problem}" for problem in found.problems]
        if not (
            found.error
            or found.held
            or found.repositories
            or found.skipped
            or found.modules
            or found.providers
        ):
            nothing = _found_nothing(spec)
            (problems if spec.kind == "folder" else warnings).append(nothing)
        warnings += [f"warning: {where}: {note}" for note in found.notes]
        warnings += [
            f"warning: {where}: skipped {s.repository}: {redact(s.why)}"
            for s in found.skipped
            if s.clone_refused  # the forge named a place outside itself: it may be an attack
        ]
    served = sources.served(catalog)
    settled = sources.settlement
    problems += [f"sources: {conflict}" for conflict in settled.conflicts]
    warnings += [
        f"warning: {m.source}: {m.spec.address} ({m.repository}) set aside: registry.yaml's"
        f" {paths[m.spec.address.key]} lists it"
        for m in settled.shadowed
    ]
    warnings += [
        f"warning: {p.source}: provider {p.spec} ({p.repository}) set aside: registry.yaml's"
        f" {provider_paths[p.spec.key].rsplit('.', 1)[0]} lists it"
        for p in settled.shadowed_providers
    ]
    for module in settled.served:
        paths[module.spec.address.key] = f"{module.source} {module.repository}"
    for provider in settled.providers:
        provider_paths[provider.spec.key] = f"{provider.source} {provider.repository}"
    return served


def _plain_http_warnings(catalog: Catalog) -> list[str]:
    """A forge source or a `credentials` entry reached over plain http://: its token, the forge's
    answers (which repositories, where to clone them) and what is fetched can be read and
    changed by anyone on the way."""
    warnings = [
        f"warning: {spec.key_path}.{spec.kind}.{'api_url' if spec.kind == 'github' else 'url'}:"
        f" {spec.where} is plain http://: its token and its answers, the clone URLs among them,"
        " can be read and changed on the way; give its https:// URL"
        for spec in catalog.sources
        if spec.kind != "folder" and spec.where.lower().startswith("http://")
    ]
    warnings += [
        f"warning: credentials[{i}].url: {redact(c.url)} is plain http://: its token, and what"
        " is fetched there, can be read and changed on the way; give its https:// URL"
        for i, c in enumerate(catalog.credentials)
        if c.url.lower().startswith("http://")
    ]
    return warnings


def _versionless(sync: ModuleSync, paths: dict[Key, str]) -> list[str]:
    """Each module read without a version, and why: the tags left out with their reasons (as
    `gitreg list` shows them), or the tags that fit none of its templates."""
    snapshot, problems = sync.snapshot, []
    for entry in snapshot.index.entries():
        spec = entry.spec
        if not entry.versions.releases and sync.status[spec.repo].last_error is None:
            why = no_version_text(spec, entry.versions, snapshot.tags.get(spec.repo, ()))
            problems.append(f"{paths[spec.address.key]}: {spec.address} has no version: {why}")
    return problems


def _slipped_tags(sync: ModuleSync, paths: dict[Key, str]) -> list[str]:
    """Tags of a module with versions that would release one but for letter case (`V2.0.0`)."""
    snapshot, warnings = sync.snapshot, []
    for entry in snapshot.index.entries():
        spec = entry.spec
        if entry.versions.releases and (names := slips(spec, snapshot.tags.get(spec.repo, ()))):
            templates = ", ".join(str(t) for t in spec.tags)
            tags_fit = "tag fits" if len(names) == 1 else "tags fit"
            warnings.append(
                f"warning: {paths[spec.address.key]}: {spec.address}: {len(names)} {tags_fit}"
                f" {templates} but for letter case, and release nothing: {a_few(names)}"
            )
    return warnings


def _refused_tags(sync: ModuleSync, paths: dict[Key, str]) -> list[str]:
    """Tags of a module with versions left out under `require_signed_tags`, and why (a module
    with none is a problem `_versionless` names)."""
    return [
        f"warning: {paths[entry.spec.address.key]}: {entry.spec.address}: tag {tag.tag}:"
        f" {tag.reason}"
        for entry in sync.snapshot.index.entries()
        if entry.versions.releases
        for tag in refused(entry.versions)
    ]


def _listen_problems(listen: Listen, key: str) -> list[str]:
    """The address `serve` would listen on, bound as `serve` binds it and let go at once: a
    port another program holds (a demo left running) is said now, not at the start."""
    from gitreg.process.server import bind  # Hypercorn is loaded to bind, not to check the rest

    try:
        sock = bind(listen, probe=True)
    except StartupError as exc:
        return [f"{key}: {exc}{_in_use(exc.__cause__)}"]
    try:
        sock.listen(1)  # as serve does: another socket bound there, not listening, refuses it
    except OSError as exc:
        why = (exc.strerror or str(exc)).lower()
        return [f"{key}: cannot listen on {listen}: {why}{_in_use(exc)}"]
    finally:
        sock.close()
    return []


def _in_use(exc: BaseException | None) -> str:
    if isinstance(exc, OSError) and exc.errno == errno.EADDRINUSE:
        return " (is gitreg serve, or the demo, running there already?)"
    return ""


def _found_nothing(spec: SourceSpec) -> str:
    """A source that listed no repository at all, and where it looked. A folder is a problem: it
    is this machine's and as it will stay, so a glob that sees nothing is a mistake (`*` looks
    one level deep). A forge's group may be new and empty: a warning."""
    where = f"{spec.key_path} (line {spec.line})" if spec.line else spec.key_path
    if spec.kind != "folder":
        return f"warning: {where}: {spec.kind} {spec.where} {spec.scope} lists no repository"
    try:
        seen = sum(1 for path in Path(spec.where).glob(spec.scope) if path.is_dir())
    except (OSError, ValueError):
        seen = 0
    deeper = "" if "**" in spec.scope else ": for repositories further down, write a deeper glob"
    deeper += " (*/* or **/*.git)" if deeper else ""
    return (
        f"{where}: folder {spec.where} holds no Git repository where glob {spec.scope!r}"
        f" looks: it matched {seen} directories, none a Git repository{deeper}"
    )


def _login_problems(catalog: Catalog) -> list[str]:
    """auth.login's OpenID provider, asked for its discovery document: the endpoints people
    are sent to and the code is exchanged at."""
    login = catalog.auth.login if catalog.auth is not None else None
    if login is None:
        return []
    try:
        asyncio.run(OpenIdProvider(login).endpoints())
    except AuthUnavailable as exc:
        return [f"auth.login.issuer: {exc}"]
    return []


def _oidc_problems(catalog: Catalog) -> list[str]:
    """Each auth.oidc issuer, asked for its signing keys as a server asks when a CI job's token
    first comes: its discovery document, then its JWKS."""
    entries = catalog.auth.oidc if catalog.auth is not None else ()
    problems, asked = [], set()
    for i, entry in enumerate(entries):
        if entry.issuer in asked:
            continue
        asked.add(entry.issuer)
        keys = IssuerKeys(entry.issuer, entry.ca_file, ca_key=f"auth.oidc[{i}].ca_file")
        try:
            asyncio.run(keys.key(None))
        except AuthUnavailable as exc:
            problems.append(f"auth.oidc[{i}].issuer: {exc}")
    return problems


def _oci_problems(catalog: Catalog, paths: dict[Key, str]) -> list[str]:
    """With oci: enabled, each module whose address cannot be an OCI repository name: not
    served at /v2/ (never renamed into another's name), and said so."""
    if not catalog.oci.enabled:
        return []
    problems = []
    for spec in catalog.modules:
        if spec.download != "archive":
            continue
        try:
            module_repository(spec.address)
        except ValueError as exc:
            problems.append(f"{paths.get(spec.address.key, 'modules')}: {exc}")
    return problems


def _origin_problems(catalog: Catalog) -> list[str]:
    """Each origin the catalog maps, asked for its providers.v1 service (others are public
    registries, reached when first needed)."""
    if not catalog.mirror.read_through or not catalog.mirror.origins:
        return []
    origin = OriginRegistry(catalog.mirror)
    problems = []
    try:
        for hostname, _ in catalog.mirror.origins:
            try:
                origin.providers_url(hostname)
            except OriginError as exc:
                problems.append(f"mirror.origins.{hostname}: {exc}")
    finally:
        origin.close()
    return problems
