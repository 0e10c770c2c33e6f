"""The catalog: what registry.yaml says, as frozen values (`catalog/load.py` reads it).

What it lists to serve is in `specs.py`; its sections in `settings.py`, `auth_settings.py` and
`mirror_settings.py`; where a secret is kept in `secrets.py`."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from gitreg.catalog.approvals import Approval
from gitreg.catalog.auth_settings import AuthSettings
from gitreg.catalog.consumers import ConsumerSpec
from gitreg.catalog.mirror_settings import MirrorSettings
from gitreg.catalog.namespace_scope import NamespaceScope
from gitreg.catalog.secrets import SecretRef
from gitreg.catalog.settings import (
    ArchiveSettings,
    DownloadSettings,
    FreshnessSettings,
    McpSettings,
    OciSettings,
    PostgresSettings,
    ProvenanceSettings,
    ServerSettings,
    SigningKeys,
)
from gitreg.catalog.specs import (
    ModuleSpec,
    NamespacePublishWhen,
    NamespaceTagSigners,
    ProviderSpec,
    PublishWhen,
    SourceSpec,
    TagSigners,
)
from gitreg.git.credential import Credential
from gitreg.git.location import RepoLocation


@dataclass(frozen=True)
class Catalog:
    """What registry.yaml says: the file, its settings by section, the Git credentials, and
    what it lists to serve."""

    source: Path  # registry.yaml, as given (a ConfigMap's symlink stays one)
    server: ServerSettings
    cache_dir: Path
    freshness: FreshnessSettings
    credentials: tuple[Credential, ...]
    modules: tuple[ModuleSpec, ...] = field(default_factory=tuple)
    sources: tuple[SourceSpec, ...] = ()
    consumers: tuple[ConsumerSpec, ...] = ()  # repositories read for dependents alone
    providers: tuple[ProviderSpec, ...] = ()
    signing: SigningKeys = SigningKeys()
    mirror: MirrorSettings = MirrorSettings()
    archives: ArchiveSettings = ArchiveSettings()
    auth: AuthSettings | None = None  # None: open to all, as without an auth: section
    state: PostgresSettings | None = None  # None: the ledger on local disk, in cache_dir
    mcp: McpSettings = McpSettings()
    oci: OciSettings = OciSettings()
    downloads: DownloadSettings = DownloadSettings()
    # The top-level `require_signed_tags`: applied to each module without one of its own.
    signed_tags: tuple[NamespaceTagSigners, ...] = ()
    provenance: ProvenanceSettings | None = None  # None: no provenance signed
    # The top-level `publish_when`: applied to each module without one of its own.
    publish_when: tuple[NamespacePublishWhen, ...] = ()
    approvals: tuple[Approval, ...] = ()  # approvals.yaml's, beside registry.yaml

    def __post_init__(self) -> None:
        signers = [(NamespaceScope(r.namespaces), r.signers) for r in self.signed_tags]
        rules = [(NamespaceScope(r.namespaces), r.rule) for r in self.publish_when]
        if signers or rules:
            scoped = tuple(_scoped(m, signers, rules) for m in self.modules)
            object.__setattr__(self, "modules", scoped)
        if self.approvals:
            approved = tuple(
                replace(m, approvals=own) if (own := _approvals(self.approvals, m)) else m
                for m in self.modules
            )
            object.__setattr__(self, "modules", approved)

    @property
    def repositories(self) -> list[RepoLocation]:
        """Every repository to mirror: the modules', and the providers' that gate versions."""
        found = [m.repo for m in self.modules] + [p.repo for p in self.providers if p.repo]
        return list(dict.fromkeys(found))

    def webhook_secret_for(self, repo: RepoLocation) -> SecretRef | None:
        """The repository's own webhook secret, else the global one."""
        own = next(
            (m.webhook_secret for m in self.modules if m.repo == repo and m.webhook_secret), None
        )
        return own or self.freshness.webhook_secret

    def credential_for(self, url: str) -> Credential | None:
        """The credential with the longest matching URL prefix."""
        matching = [c for c in self.credentials if url.startswith(c.url)]
        return max(matching, key=lambda c: len(c.url), default=None)


def _approvals(approvals: tuple[Approval, ...], m: ModuleSpec) -> tuple[Approval, ...]:
    return tuple(a for a in approvals if a.module == m.address.key)


def _scoped(
    m: ModuleSpec,
    signers: list[tuple[NamespaceScope, TagSigners]],
    rules: list[tuple[NamespaceScope, PublishWhen]],
) -> ModuleSpec:
    """`m` with its namespace's signers and publish_when where it has none of its own."""
    if m.signed_tags is not None and m.publish_when is not None:
        return m
    namespace = m.address.namespace
    return replace(
        m,
        signed_tags=m.signed_tags or _first(signers, namespace),
        publish_when=m.publish_when or _first(rules, namespace),
    )


_Rule = TypeVar("_Rule", TagSigners, PublishWhen)


def _first(scopes: list[tuple[NamespaceScope, _Rule]], namespace: str) -> _Rule | None:
    return next((value for scope, value in scopes if scope.covers(namespace)), None)
