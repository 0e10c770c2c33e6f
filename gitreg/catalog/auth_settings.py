"""The `auth:` section: who may read what, as frozen values (`catalog/auth.py` reads it)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from gitreg.catalog.secrets import SecretRef

GitCheckUrl = Literal["repo", "git_url"]


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
    preview: bool = False  # sees the versions publish_when holds back (a team's own CI)


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
