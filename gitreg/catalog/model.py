"""The catalog: what registry.yaml says, as frozen values (`catalog/load.py` reads it).

What it lists to serve is in `specs.py`; its sections in `settings.py`, `auth_settings.py` and
`mirror_settings.py`; where a secret is kept in `secrets.py`."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

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
    NamespaceTagSigners,
    ProviderSpec,
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

    def __post_init__(self) -> None:
        if self.signed_tags and any(m.signed_tags is None for m in self.modules):
            scopes = [(NamespaceScope(r.namespaces), r.signers) for r in self.signed_tags]
            held = tuple(
                m if m.signed_tags else replace(m, signed_tags=_first(scopes, m.address.namespace))
                for m in self.modules
            )
            object.__setattr__(self, "modules", held)

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


def _first(scopes: list[tuple[NamespaceScope, TagSigners]], namespace: str) -> TagSigners | None:
    return next((signers for scope, signers in scopes if scope.covers(namespace)), None)
