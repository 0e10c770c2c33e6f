"""What registry.yaml lists to serve: modules, sources of modules, providers, as frozen values."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from gitreg.address import ModuleAddress
from gitreg.catalog.approvals import Approval
from gitreg.catalog.secrets import SecretRef
from gitreg.git.location import RepoLocation
from gitreg.git.tag_signatures import SignatureKind
from gitreg.tags import DEFAULT_TEMPLATES, TagTemplate
from gitreg.version_constraints import VersionConstraint

DownloadMode = Literal["archive", "git"]
ArchiveScope = Literal["repository", "folder"]
MovedPolicy = Literal["pin", "follow", "quarantine"]
DeletedPolicy = Literal["keep", "remove"]


@dataclass(frozen=True)
class Deprecation:
    """An entry of a module's or provider's `deprecated:`: the versions `versions` admits are
    deprecated, for `reason`. They stay installable; clients, pages and the API are told.
    An entry of `revoked:` has the same shape: its versions install only for those who did."""

    versions: VersionConstraint
    reason: str


def deprecation_of(deprecations: tuple[Deprecation, ...], version: str) -> str | None:
    """The reason `version` is deprecated (the first entry that admits it), or None."""
    return next((d.reason for d in deprecations if d.versions.admits(version)), None)


@dataclass(frozen=True)
class TagSigners:
    """`require_signed_tags`: who may sign a module's release tags, in an SSH allowed-signers
    file or an OpenPGP key file. `digest` is the file's sha256 when read: another content is
    another requirement (tags refused before are checked again)."""

    kind: SignatureKind
    file: Path
    digest: str

    def __str__(self) -> str:
        return f"{'allowed_signers' if self.kind == 'ssh' else 'keyring'} {self.file}"


@dataclass(frozen=True)
class NamespaceTagSigners:
    """An entry of the top-level `require_signed_tags`: the namespaces whose modules it holds."""

    namespaces: tuple[str, ...]
    signers: TagSigners


@dataclass(frozen=True)
class PublishWhen:
    """`publish_when`: what a module's new version waits for before it is served. `min_age`
    (seconds; 0: none) counts from its tag's creation: the tagger date of an annotated tag,
    else when gitreg first saw the tag. `warn_after` (seconds; 0: never): a version pending
    longer is a warning in `/v1/status`."""

    min_age: float = 0.0
    warn_after: float = 0.0


@dataclass(frozen=True)
class NamespacePublishWhen:
    """An entry of the top-level `publish_when`: the namespaces whose modules it holds."""

    namespaces: tuple[str, ...]
    rule: PublishWhen


@dataclass(frozen=True)
class ModuleSpec:
    address: ModuleAddress
    repo: RepoLocation
    path: str = ""
    tags: tuple[TagTemplate, ...] = tuple(TagTemplate.parse(t) for t in DEFAULT_TEMPLATES)
    download: DownloadMode = "archive"
    git_url: str | None = None
    archive: ArchiveScope = "repository"
    # When `archive` was left out and the repository also holds modules of other readers: their
    # namespaces, which made the catalog narrow it to "folder" (gitreg.catalog.archive_scopes).
    archive_narrowed_by: tuple[str, ...] = ()
    moved_tags: MovedPolicy = "pin"
    deleted_tags: DeletedPolicy = "keep"
    webhook_secret: SecretRef | None = None
    # A discovered module whose repository left its source (or was archived, or no longer
    # declares it): its published versions still serve, and pages and status say so.
    removed: bool = False
    # True: such a module under on_removed: hide: its versions still resolve, but lists and
    # search leave it out.
    hidden: bool = False
    deprecated: tuple[Deprecation, ...] = ()
    revoked: tuple[Deprecation, ...] = ()  # installed only by who installed them before
    # Its own, its source's or its namespace's `require_signed_tags`; None: tags need no signature.
    signed_tags: TagSigners | None = None
    # Its own, its source's or its namespace's `publish_when`; None: served once seen.
    publish_when: PublishWhen | None = None
    # approvals.yaml's entries for this module: versions published before their cooldown ends.
    approvals: tuple[Approval, ...] = ()


SourceKind = Literal["gitlab", "gitea", "github", "bitbucket", "folder"]
SOURCE_KINDS: tuple[SourceKind, ...] = ("gitlab", "gitea", "github", "bitbucket", "folder")
OnRemoved = Literal["keep", "hide"]
CloneOver = Literal["https", "ssh"]


@dataclass(frozen=True, kw_only=True)
class SourceSpec:
    """One entry of `sources:`: a Git server's group (or a local folder) whose repositories are
    discovered and served as modules, rather than each listed under `modules:`.

    `where` is the forge's URL (GitHub's API URL), or the folder; `scope` the group, organisation
    or project, or for a folder the glob its repositories match."""

    key_path: str  # `sources[2]`: how check, list and status name it
    kind: SourceKind
    where: str
    scope: str
    namespace: str
    include: tuple[str, ...] = ()  # repository name globs; empty: every name
    exclude: tuple[str, ...] = ()
    topics: tuple[str, ...] = ()  # a repository must carry every one of them
    allow_namespaces: tuple[str, ...] = ()  # what a repository's .gitreg.yaml may claim besides
    interval: float = 300.0
    on_removed: OnRemoved = "keep"
    clone: CloneOver = "https"
    token: SecretRef | None = None  # the forge API's token; None for a folder
    tags: tuple[TagTemplate, ...] = tuple(TagTemplate.parse(t) for t in DEFAULT_TEMPLATES)
    moved_tags: MovedPolicy = "pin"
    deleted_tags: DeletedPolicy = "keep"
    webhook_secret: SecretRef | None = None
    clone_hosts: tuple[tuple[str, int | None], ...] = ()  # host, port (None: the scheme's own)
    signed_tags: TagSigners | None = None
    publish_when: PublishWhen | None = None
    line: int = field(default=0, compare=False)  # of its entry in registry.yaml; 0: not known

    def __str__(self) -> str:
        return f"{self.key_path} ({self.kind} {self.where} {self.scope})"


ReleaseForge = Literal["gitlab", "gitea", "github"]


@dataclass(frozen=True)
class ForgeReleases:
    """Where a provider's releases are published on a forge: GitLab's project, Gitea's or
    GitHub's `owner/name`, read through the API at `url` (GitHub's: its API root)."""

    kind: ReleaseForge
    url: str
    project: str
    token: SecretRef | None = None
    interval: float = 300.0  # seconds between two readings of the release list
    webhook_secret: SecretRef | None = None  # its release deliveries' own: else as pushes'


@dataclass(frozen=True)
class ProviderSpec:
    """An in-house provider whose release files gitreg serves (providers.v1)."""

    namespace: str
    type: str
    artifacts: Path  # with `releases`: cache_dir's folder the forge's releases are fetched into
    repo: RepoLocation | None = None  # when set, a version is served only while its tag exists
    tags: tuple[TagTemplate, ...] = tuple(TagTemplate.parse(t) for t in DEFAULT_TEMPLATES)
    releases: ForgeReleases | None = None  # None: `artifacts` is the user's release folder
    # A discovered provider whose repository left its source (or was archived): what was
    # fetched into `artifacts` still serves, its forge no longer read; pages and status say so.
    removed: bool = False
    hidden: bool = False  # True: removed under on_removed: hide, left out of lists
    deprecated: tuple[Deprecation, ...] = ()
    revoked: tuple[Deprecation, ...] = ()

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace.lower(), self.type)

    def __str__(self) -> str:
        return f"{self.namespace}/{self.type}"
