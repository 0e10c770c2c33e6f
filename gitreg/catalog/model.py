"""The catalog: what registry.yaml says, as frozen values (`catalog/load.py` reads it)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from gitreg.address import ModuleAddress
from gitreg.git.archive_limits import ARCHIVE_MEMORY_BUDGET, ArchiveLimits
from gitreg.git.credential import Credential
from gitreg.git.location import RepoLocation
from gitreg.tags import DEFAULT_TEMPLATES, TagTemplate
from gitreg.version_constraints import VersionConstraint

DownloadMode = Literal["archive", "git"]
ArchiveScope = Literal["repository", "folder"]
MovedPolicy = Literal["pin", "follow", "quarantine"]
DeletedPolicy = Literal["keep", "remove"]
# What a secret named in the catalog is for: Git credentials, webhook secrets, origin tokens,
# the registry's own (client tokens, the URL-signing key), the shared state's database URL.
SecretUse = Literal["git", "webhook", "origin", "auth", "state"]
SECRET_USES: frozenset[SecretUse] = frozenset(("git", "webhook", "origin", "auth", "state"))
GitCheckUrl = Literal["repo", "git_url"]
LogFormat = Literal["text", "json"]


@dataclass(frozen=True)
class Listen:
    host: str
    port: int

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


TLS_KEYS = ("tls.certfile", "tls.keyfile")  # how registry.yaml names the files


@dataclass(frozen=True)
class TlsFiles:
    certfile: Path
    keyfile: Path


@dataclass(frozen=True)
class SecretRef:
    """Where a secret is kept: an environment variable or a file. Read at use, never shown."""

    env: str | None = None
    file: Path | None = None

    def value(self) -> str | None:
        if self.env:
            return os.environ.get(self.env) or None
        if self.file:
            try:
                return self.file.read_text().strip() or None
            except OSError:
                return None
        return None


@dataclass(frozen=True)
class Deprecation:
    """An entry of a module's or provider's `deprecated:`: the versions `versions` admits are
    deprecated, for `reason`. They stay installable; clients, pages and the API are told."""

    versions: VersionConstraint
    reason: str


def deprecation_of(deprecations: tuple[Deprecation, ...], version: str) -> str | None:
    """The reason `version` is deprecated (the first entry that admits it), or None."""
    return next((d.reason for d in deprecations if d.versions.admits(version)), None)


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

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace.lower(), self.type)

    def __str__(self) -> str:
        return f"{self.namespace}/{self.type}"


# The origins read-through may read without being named in mirror.origins, and the hosts their
# providers' packages are downloaded from (HashiCorp's releases, GitHub's release assets).
PUBLIC_ORIGINS = ("registry.terraform.io", "registry.opentofu.org")
DOWNLOAD_HOSTS = (
    "releases.hashicorp.com",
    "github.com",
    "objects.githubusercontent.com",
    "release-assets.githubusercontent.com",
)


@dataclass(frozen=True)
class MirrorSettings:
    """The provider network mirror's sources besides the hosted providers, and what read-through
    may reach: the public origins and those named under `origins`, nothing else."""

    folders: tuple[Path, ...] = ()  # written by `terraform providers mirror`
    read_through: bool = False  # fetch from origin registries on a miss
    origins: tuple[tuple[str, str], ...] = ()  # hostname → base URL (https://hostname/ if listed)
    ca_file: Path | None = None  # the CA bundle that signs the origins' certificates
    tokens: tuple[tuple[str, SecretRef], ...] = ()  # hostname → its Bearer token's source
    download_hosts: tuple[str, ...] = DOWNLOAD_HOSTS  # besides the origins': https, port 443
    workers: int = 16  # threads read-through may hold at once, across all origins
    per_origin: int = 4  # ... of them for one origin
    deadline: float = 30.0  # seconds for one index.json or VERSION.json, every origin request in it
    download_deadline: float = 600.0  # seconds for one package, connect to last byte

    def origin_url(self, hostname: str) -> str:
        return dict(self.origins).get(hostname, f"https://{hostname}/")

    def token(self, hostname: str) -> SecretRef | None:
        return dict(self.tokens).get(hostname)

    @property
    def named(self) -> frozenset[str]:
        """The hostnames registry.yaml names under mirror.origins, in any form."""
        return frozenset(h for h, _ in self.origins) | {h for h, _ in self.tokens}


@dataclass(frozen=True, kw_only=True)
class OciSettings:
    """The read-only OCI Distribution API at /v2/ (`oci:`): off unless enabled."""

    enabled: bool = False
    module_locations: bool = False  # modules.v1 hands OpenTofu 1.10+ an oci:// location


@dataclass(frozen=True, kw_only=True)
class HstsPolicy:
    """Strict-Transport-Security, on every answer served over TLS: browsers that saw it go to
    this host over HTTPS only, for `max_age` seconds (0: forget it)."""

    max_age: int = 365 * 86400  # a year, as preload lists ask
    include_subdomains: bool = False

    def header(self) -> str:
        subdomains = "; includeSubDomains" if self.include_subdomains else ""
        return f"max-age={self.max_age}{subdomains}"


@dataclass(frozen=True, kw_only=True)
class McpSettings:
    """`mcp:`: the Model Context Protocol endpoint at /mcp, for AI assistants: read-only tools
    over what the caller's token reads. Read once, at start, as `tls` is."""

    enabled: bool = False


@dataclass(frozen=True)
class TokenSpec:
    """A client token: its name (the only thing logs and metrics show), where its value is known
    from, and what it opens. `read` holds namespace patterns (`team-*`; `*` is every one)."""

    name: str
    sha256: str | None = None  # the hex SHA-256 of the token (token_sha256)
    source: SecretRef | None = None  # token_env or token_file; a file is re-read when it changes
    read: tuple[str, ...] = ()
    mirror: bool = False  # may use the provider network mirror
    ops: bool = False  # may read /v1/status and /metrics


# The forms of the tokens forges issue, as they document them: GitLab's prefixed tokens
# (personal, OAuth, deploy, CI job, runner, trigger, feed), GitHub's (personal classic and
# fine-grained, OAuth, user-to-server, server-to-server, refresh), Gitea's and Forgejo's 40
# lowercase hex digits. A token of no such form is never taken to a Git server.
FORGE_TOKENS = (
    r"(?:glpat|gloas|gldt|glcbt|glrt|glptt|glft)-[A-Za-z0-9_.-]{20,250}"
    r"|(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,251}"
    r"|github_pat_[A-Za-z0-9_]{22,244}"
    r"|[0-9a-f]{40}"
)


@dataclass(frozen=True)
class GitCheck:
    """auth.git: a client token that a module's own repository accepts (an authenticated
    ls-remote over HTTPS, as `username`:token) opens that module; answers are kept `cache`
    seconds, the good and the bad alike."""

    check: GitCheckUrl = "repo"  # ask the repository gitreg fetches, or the module's git_url
    username: str = "oauth2"
    cache: float = 300.0
    timeout: float = 10.0
    ca_file: Path | None = None
    # Only a token of this form is taken to a Git server (the whole token must match).
    token_pattern: str = FORGE_TOKENS
    checks_per_minute: int = 10  # logins at a Git server one client address may cause
    # Refused logins a Git host may see from gitreg in a minute, all clients together: forges
    # ban the address that fails too many (GitLab: 30 in 3 minutes bans it for an hour).
    failed_logins_per_minute: int = 8


@dataclass(frozen=True)
class OidcIssuer:
    """auth.oidc[]: identity tokens (JWTs) of one issuer for one audience. A token whose claims
    match every glob in `claims` may read the namespaces `read` names; `{claim}` in a pattern is
    replaced by that claim's value (`{namespace_path}`)."""

    name: str  # shown in logs and metrics
    issuer: str  # https://...; its discovery document is ISSUER/.well-known/openid-configuration
    audience: str
    claims: tuple[tuple[str, str], ...] = ()
    read: tuple[str, ...] = ()
    mirror: bool = False
    ops: bool = False
    ca_file: Path | None = None  # the CA bundle that signs the issuer's HTTPS certificate


@dataclass(frozen=True)
class LoginSettings:
    """auth.login: people sign in with the company's OpenID provider (`terraform login`, pages).
    Its ID token is checked as `auth.oidc` checks a CI token (audience `client_id`); `grants`,
    its claim rules as such entries, hold what a token issued here reads, until `token_ttl`."""

    name: str  # what the sign-in page calls the provider ("Sign in with NAME")
    issuer: str  # https://...; its discovery document is ISSUER/.well-known/openid-configuration
    client_id: str
    client_secret: SecretRef | None = None  # None: a public client (PKCE alone)
    scopes: tuple[str, ...] = ("openid", "profile", "email")
    grants: tuple[OidcIssuer, ...] = ()
    token_ttl: float = 90 * 86400.0
    ca_file: Path | None = None  # the CA bundle that signs the provider's HTTPS certificate
    name_claim: str | None = None  # what names a person; None: a verified email (else: `sub`)


@dataclass(frozen=True)
class AuthSettings:
    """auth: who may read what. Present: private by default, but for the `public` namespaces."""

    public: tuple[str, ...] = ()  # namespace patterns anyone may read
    tokens: tuple[TokenSpec, ...] = ()
    url_keys: tuple[SecretRef, ...] = ()  # the first signs download URLs; the rest still verify
    download_ttl: float = 600.0
    git: GitCheck | None = None
    oidc: tuple[OidcIssuer, ...] = ()
    login: LoginSettings | None = None


@dataclass(frozen=True)
class PostgresSettings:
    """state.postgres: the ledger of published tags, shared by replicas, in PostgreSQL. `dsn` is
    where its connection string (a secret: it may hold a password) is read at connect time."""

    dsn: SecretRef


@dataclass(frozen=True)
class Catalog:
    source: Path
    hostname: str
    listen: Listen
    tls: TlsFiles | None
    cache_dir: Path
    refresh_interval: float
    fetch_timeout: float
    credentials: tuple[Credential, ...]
    modules: tuple[ModuleSpec, ...] = field(default_factory=tuple)
    sources: tuple[SourceSpec, ...] = ()
    webhook_secret: SecretRef | None = None
    poll_concurrency: int = 16
    max_backoff: float = 900.0
    fresh_reads: float = 5.0  # a read checks the remote's tags when none did for this long; 0: off
    watch_catalog: bool = True  # reload registry.yaml when it changes (SIGHUP always does)
    providers: tuple[ProviderSpec, ...] = ()
    signing_keys: tuple[Path, ...] = ()  # private keys: the first signs, all are published
    verify_keys: tuple[Path, ...] = ()  # public keys that may have signed a release themselves
    mirror: MirrorSettings = MirrorSettings()
    archive_limits: ArchiveLimits = ArchiveLimits()  # what one archive may hold
    archive_memory_budget: int = ARCHIVE_MEMORY_BUDGET  # archives each process holds; 0: none
    auth: AuthSettings | None = None  # None: open to all, as without an auth: section
    # /readyz answers 503 when a repository's last sync is older than this; 0: never (a Git
    # server down would otherwise take every replica out of its load balancer at once).
    max_staleness: float = 0.0
    log_format: LogFormat = "text"  # serve and demo; --log-format wins
    shutdown_grace: float = 20.0  # seconds requests in flight get to finish after SIGTERM
    state: PostgresSettings | None = None  # None: the ledger on local disk, in cache_dir
    # Where people open the pages (https://host[:port]), when not https://hostname: behind a
    # proxy. Only that origin may post the sign-in form.
    public_url: str | None = None
    hsts: HstsPolicy | None = HstsPolicy()  # None: `hsts: false`, no Strict-Transport-Security
    mcp: McpSettings = McpSettings()
    oci: OciSettings = OciSettings()

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
        return own or self.webhook_secret

    def credential_for(self, url: str) -> Credential | None:
        """The credential with the longest matching URL prefix."""
        matching = [c for c in self.credentials if url.startswith(c.url)]
        return max(matching, key=lambda c: len(c.url), default=None)
