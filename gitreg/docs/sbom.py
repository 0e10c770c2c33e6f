"""A module version's software bill of materials, as CycloneDX 1.6 JSON, from its documentation.

It lists the providers, module calls and Terraform versions its root and each `modules/*`
submodule require. The only module that imports cyclonedx-python-lib.

The same version, docs, digest and registry give the same bytes: the serial number is a UUID5 of
the version's address and commit, the timestamp the commit's time. No package-URL type exists
for Terraform: components are named by `bom-ref`s and described by `gitreg:` properties, each
listed in docs/verifying.md."""

from __future__ import annotations

import asyncio
import posixpath
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlsplit

from cyclonedx.exception.model import InvalidUriException
from cyclonedx.model import (
    ExternalReference,
    ExternalReferenceType,
    HashAlgorithm,
    HashType,
    Property,
    XsUri,
)
from cyclonedx.model.bom import Bom, BomMetaData
from cyclonedx.model.component import Component, ComponentType
from cyclonedx.output.json import JsonV1Dot6

from gitreg import __version__
from gitreg.address import ModuleAddress
from gitreg.catalog.settings import ServerSettings
from gitreg.docs.model import FolderDocs, ModuleCall, ModuleDocs, ProviderRequirement
from gitreg.docs.service import DocsService
from gitreg.docs.source_addresses import (
    module_source,
    normalised_host,
    provider_address,
    without_credentials,
)
from gitreg.modules.index import ModuleEntry, VersionIndex
from gitreg.modules.resolve import Release
from gitreg.tags import parse_version
from gitreg.version_constraints import VersionConstraint

MEDIA_TYPE = "application/vnd.cyclonedx+json"
# A fixed namespace for the serial numbers' UUID5s: the same version gets the same one anywhere.
_SERIALS = uuid.UUID("6f1d3c52-7a0e-5b8c-9d41-2e6f0a9b3c17")

# What a call to a module of this registry resolves to today: the version, or None and why
# ("" when the reader may not know: a namespace it cannot read is not looked into).
Resolver = Callable[[ModuleAddress, str], tuple[str | None, str]]


@dataclass(frozen=True)
class SbomSubject:
    """What the bill names the version by, which its documentation does not hold."""

    address: ModuleAddress
    version: str
    tag: str
    commit: str
    folder: str = ""  # the module's folder in its repository; "" at its root
    repository: str | None = None  # where its repository lives, without credentials
    digest: str = ""  # its archive's SHA-256 (hex); "" when it has none (`download: git`)


@dataclass(frozen=True)
class ThisRegistry:
    """What tells a call to a module of this registry from others, and what it resolves to."""

    hostname: str  # as sources and clients write it
    hostnames: frozenset[str]  # every name of it sources may write, lower case
    resolve: Resolver


def resolver(index: VersionIndex, may_read: Callable[[str], bool]) -> Resolver:
    """What calls to `index`'s modules resolve to, for a reader who reads what `may_read`
    admits: the newest release a constraint admits, a prerelease only when named exactly (as
    Terraform picks one)."""

    def resolve(module: ModuleAddress, constraint: str) -> tuple[str | None, str]:
        if not may_read(module.namespace):
            return None, ""
        entry = index.get(module.namespace, module.name, module.system)
        if entry is None:
            return None, f"no module {module} on this registry"
        try:
            parsed = VersionConstraint.parse(constraint) if constraint.strip() else None
        except ValueError as exc:
            return None, str(exc)
        for release in entry.versions.releases:  # newest first
            version = parse_version(release.version)
            exact = parsed is not None and any(
                c.operator == "=" and c.version == version for c in parsed.clauses
            )
            if version.prerelease and not exact:
                continue
            if parsed is None or parsed.admits(version):
                return release.version, ""
        if constraint:
            return None, f"no version of {module} meets {constraint!r}"
        return None, f"{module} has no release"

    return resolve


def this_registry(server: ServerSettings, resolve: Resolver) -> ThisRegistry:
    """This registry as sources name it: its hostname, and the host (and port) of
    `public_url`; calls to it resolved by `resolve`."""
    names = {normalised_host(server.hostname)}
    if server.public_url:
        names.add(normalised_host(urlsplit(server.public_url).netloc))
    return ThisRegistry(server.hostname, frozenset(names), resolve)


def resolving_nothing(module: ModuleAddress, constraint: str) -> tuple[str | None, str]:
    """A resolver for a bill every reader gets alike: calls listed as written, none looked up."""
    return None, ""


async def module_sbom(
    docs: DocsService, entry: ModuleEntry, release: Release, digest: str, registry: ThisRegistry
) -> bytes:
    """The bill of `release`, whose archive's SHA-256 is `digest` ("" when it has none), from
    its documentation (built once, as the pages'); put together on a thread of its own."""
    documented = await docs.module_docs(entry, release)
    spec = entry.spec
    shown = spec.git_url or (spec.repo.url if spec.repo.transport != "local" else None)
    subject = SbomSubject(
        address=spec.address,
        version=release.version,
        tag=release.tag,
        commit=release.commit,
        folder=spec.path,
        repository=without_credentials(shown) if shown else None,
        digest=digest,
    )
    return await asyncio.to_thread(bom_json, documented, subject, registry)


def bom_json(docs: ModuleDocs, subject: SbomSubject, registry: ThisRegistry) -> bytes:
    """The bill of the version `subject` names, whose documentation is `docs`, as JSON."""
    address, version = subject.address, subject.version
    root = _module_component(subject, docs.root, registry.hostname)
    serial = uuid.uuid5(_SERIALS, f"{address}@{version} {subject.commit}")
    metadata = BomMetaData(component=root, timestamp=datetime.fromtimestamp(docs.commit_time, UTC))
    metadata.tools.components.add(
        Component(type=ComponentType.APPLICATION, name="gitreg", version=__version__)
    )
    bom = Bom(serial_number=serial, metadata=metadata)
    submodules = {folder.path: _submodule_component(subject, folder) for folder in docs.submodules}
    for folder, owner in ((docs.root, root), *((f, submodules[f.path]) for f in docs.submodules)):
        needs = _requirements(folder, str(owner.bom_ref), registry)
        for component in needs:
            bom.components.add(component)
            called = _local_target(folder.path, component, submodules)
            if called is not None:
                bom.register_dependency(component, [called])
        if owner is not root:
            bom.components.add(owner)
        bom.register_dependency(owner, needs)
    if submodules:
        bom.register_dependency(root, submodules.values())
    return (JsonV1Dot6(bom).output_as_string(indent=2) + "\n").encode()


def _module_component(subject: SbomSubject, root: FolderDocs, hostname: str) -> Component:
    props = [
        ("gitreg:registry:source", f"{hostname}/{subject.address}"),
        ("gitreg:git:tag", subject.tag),
        ("gitreg:git:commit", subject.commit),
    ]
    if subject.folder:
        props.append(("gitreg:git:folder", subject.folder))
    hashes = [HashType(alg=HashAlgorithm.SHA_256, content=subject.digest)] if subject.digest else []
    references = []
    repository = _uri(subject.repository or "")
    if repository is not None:
        references.append(
            ExternalReference(
                type=ExternalReferenceType.VCS,
                url=repository,
                comment=f"tag {subject.tag}, commit {subject.commit}",
            )
        )
    return Component(
        type=ComponentType.LIBRARY,
        name=str(subject.address),
        version=subject.version,
        bom_ref=f"module:{subject.address}@{subject.version}",
        description=root.description or None,
        hashes=hashes,
        external_references=references,
        properties=_properties(props + _unparsed(root)),
    )


def _submodule_component(subject: SbomSubject, folder: FolderDocs) -> Component:
    return Component(
        type=ComponentType.LIBRARY,
        name=f"{subject.address}//{folder.path}",
        version=subject.version,
        bom_ref=f"module:{subject.address}@{subject.version}//{folder.path}",
        description=folder.description or None,
        properties=_properties([("gitreg:terraform:folder", folder.path), *_unparsed(folder)]),
    )


def _unparsed(folder: FolderDocs) -> list[tuple[str, str]]:
    """The folder's files that did not parse: what the bill may miss, and why."""
    return [("gitreg:terraform:unparsed_file", f"{p.path}: {p.message}") for p in folder.problems]


def _requirements(folder: FolderDocs, owner: str, registry: ThisRegistry) -> list[Component]:
    where = ("gitreg:terraform:folder", folder.path or ".")
    found = [_provider(p, owner, where) for p in folder.providers]
    found += [_module_call(c, owner, where, registry) for c in folder.module_calls]
    if folder.terraform_version:
        found.append(
            Component(
                type=ComponentType.PLATFORM,
                name="terraform",
                bom_ref=f"{owner}#terraform",
                description="Terraform or OpenTofu, as required_version constrains it",
                properties=_properties(
                    [
                        ("gitreg:terraform:requirement", "terraform"),
                        where,
                        ("gitreg:terraform:version_constraint", folder.terraform_version),
                    ]
                ),
            )
        )
    return found


def _provider(requirement: ProviderRequirement, owner: str, where: tuple[str, str]) -> Component:
    name, problem = provider_address(requirement.name, requirement.source)
    props = [
        ("gitreg:terraform:requirement", "provider"),
        where,
        ("gitreg:terraform:provider_local_name", requirement.name),
    ]
    if requirement.version:
        props.append(("gitreg:terraform:version_constraint", requirement.version))
    if problem:
        props.append(("gitreg:terraform:invalid_source", problem))
    return Component(
        type=ComponentType.LIBRARY,
        name=name,
        bom_ref=f"{owner}#provider:{requirement.name}",
        properties=_properties(props),
    )


def _module_call(
    call: ModuleCall, owner: str, where: tuple[str, str], registry: ThisRegistry
) -> Component:
    source = module_source(call.source)
    props = [
        ("gitreg:terraform:requirement", "module"),
        where,
        ("gitreg:terraform:module_call", call.name),
        ("gitreg:terraform:module_source_kind", source.kind),
    ]
    if call.version:
        props.append(("gitreg:terraform:version_constraint", call.version))
    version: str | None = None
    references = []
    if source.module is not None and source.host in registry.hostnames:
        props.append(("gitreg:registry:this_registry", "true"))
        version, why = registry.resolve(source.module, call.version)
        if version is not None:
            module = source.module
            references.append(
                ExternalReference(
                    type=ExternalReferenceType.BOM,
                    url=XsUri(f"https://{registry.hostname}/v1/modules/{module}/{version}/sbom"),
                    comment="its bill of materials, at the version the constraint admits today",
                )
            )
        elif why:
            props.append(("gitreg:registry:unresolved", why))
    return Component(
        type=ComponentType.LIBRARY,
        name=source.shown,
        version=version,
        bom_ref=f"{owner}#module:{call.name}",
        external_references=references,
        properties=_properties(props),
    )


def _local_target(
    folder: str, component: Component, submodules: dict[str, Component]
) -> Component | None:
    """The submodule a local `module` source names (`./modules/x`), if it is one."""
    kinds = {p.name: p.value for p in component.properties}
    if kinds.get("gitreg:terraform:module_source_kind") != "local":
        return None
    return submodules.get(posixpath.normpath(posixpath.join(folder, component.name)))


def _uri(text: str) -> XsUri | None:
    """`text` as a URI; None when there is none, or when it is no URI (a stray `%`)."""
    try:
        return XsUri(text) if text else None
    except InvalidUriException:
        return None


def _properties(pairs: list[tuple[str, str]]) -> list[Property]:
    return [Property(name=name, value=value) for name, value in pairs]
