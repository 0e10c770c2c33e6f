"""The catalog's settings, one frozen value per section of registry.yaml.

The server, keeping up with new tags, archives, signing keys, the MCP and OCI endpoints, the
provenance key and the shared state, grouped as docs/reference/configuration.md groups their
keys; `auth:` and `mirror:` have files of their own."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from gitreg.catalog.secrets import SecretRef
from gitreg.git.archive_limits import ARCHIVE_MEMORY_BUDGET, ArchiveLimits

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
class ServerSettings:
    """The server: the host name clients write, where it listens and how, what browsers are
    told, and how it stops."""

    hostname: str
    listen: Listen
    tls: TlsFiles | None  # None: plain HTTP, for a proxy that terminates TLS
    # Where people open the pages (https://host[:port]), when not https://hostname: behind a
    # proxy. Only that origin may post the sign-in form.
    public_url: str | None = None
    hsts: HstsPolicy | None = HstsPolicy()  # None: `hsts: false`, no Strict-Transport-Security
    log_format: LogFormat = "text"  # serve and demo; --log-format wins
    shutdown_grace: float = 20.0  # seconds requests in flight get to finish after SIGTERM


@dataclass(frozen=True, kw_only=True)
class McpSettings:
    """`mcp:`: the Model Context Protocol endpoint at /mcp, for AI assistants: read-only tools
    over what the caller's token reads. Read once, at start, as `tls` is."""

    enabled: bool = False


@dataclass(frozen=True, kw_only=True)
class DownloadSettings:
    """`downloads:`: each installed version counted (on by default), the counts kept for
    `retention` seconds, and who downloaded shown to ops tokens, and to the namespace's readers
    too with `show_principals`. `revoked_for_anonymous`: whether anonymous readers, whom the
    ledger cannot tell apart, get revoked versions ("kept") or not ("hidden")."""

    enabled: bool = True
    retention: float = 400 * 86400.0
    show_principals: bool = False
    revoked_for_anonymous: Literal["hidden", "kept"] = "hidden"


@dataclass(frozen=True)
class PostgresSettings:
    """state.postgres: the ledger of published tags, shared by replicas, in PostgreSQL. `dsn` is
    where its connection string (a secret: it may hold a password) is read at connect time."""

    dsn: SecretRef


@dataclass(frozen=True, kw_only=True)
class ArchiveSettings:
    """`archives:`: what one module archive may hold, and the bytes of built archives each
    process keeps in memory (0: none)."""

    limits: ArchiveLimits = ArchiveLimits()
    memory_budget: int = ARCHIVE_MEMORY_BUDGET


@dataclass(frozen=True, kw_only=True)
class SigningKeys:
    """`signing:`: the OpenPGP key files of hosted providers' releases."""

    keys: tuple[Path, ...] = ()  # private keys: the first signs, all are published
    verify_keys: tuple[Path, ...] = ()  # public keys that may have signed a release themselves


@dataclass(frozen=True)
class ProvenanceSettings:
    """`provenance:`: the private key each version's provenance is signed with (a secret: read
    at use, never shown), and its content's SHA-256 when it was checked at load ("" when the
    command reads no secret of this use), so that a reload with a new key signs with it."""

    key: Path
    digest: str = ""


@dataclass(frozen=True, kw_only=True)
class FreshnessSettings:
    """Keeping up with new tags: polls, fresh reads, webhooks, registry.yaml watched, and how
    long a repository may go unsynced before /readyz says so."""

    refresh_interval: float
    fetch_timeout: float
    webhook_secret: SecretRef | None = None  # `webhooks:`, for repositories without their own
    poll_concurrency: int = 16
    max_backoff: float = 900.0
    fresh_reads: float = 5.0  # a read checks the remote's tags when none did for this long; 0: off
    watch_catalog: bool = True  # reload registry.yaml when it changes (SIGHUP always does)
    # readiness.max_staleness: /readyz answers 503 when a repository's last sync is older than
    # this; 0: never (a Git server down would otherwise take every replica out of its load
    # balancer at once).
    max_staleness: float = 0.0
