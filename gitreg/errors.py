"""The exceptions gitreg raises, as one tree, drawn below with what each means.

`web/errors.py`'s handlers say which HTTP status each one is; the OCI API, the token endpoint and
MCP answer theirs in their own protocol's form. See docs/reference/http-api.md."""

# GitregError
# ├── ConfigError          registry.yaml is invalid (carries every problem found)
# ├── StartupError         the server cannot start: its address is taken, its TLS files unusable
# ├── ClientError          the client asked for something malformed
# │   ├── NotFound         well-formed, but we do not have it
# │   │   └── Revoked      a revoked version, asked by a reader who never installed it (410)
# │   ├── Unauthorized     no credentials, or none we know: a webhook's signature, a client token
# │   ├── Forbidden        credentials we know, that do not open this (or a download URL's
# │   │                    signature that is expired, tampered with or for another path)
# │   ├── TooManyRequests  a client over a per-address limit (auth.git checks, wrong tokens)
# │   └── LoginRefused     a sign-in that cannot go on (auth.login): a bad redirect_uri, a code
# │                        spent or expired, a wrong PKCE verifier, an ID token that fails a check
# ├── SourceError          a Git repository could not be fetched or read
# │   ├── StateUnavailable the shared state (PostgreSQL) cannot be reached: nothing new published
# │   ├── NotReadYet       a module's repository was never read: its versions are not known yet
# │   └── FetchStopped     a fetch ended because the server stops: no fault of the Git server
# ├── AuthUnavailable      who the client is cannot be told now: its issuer or Git server is down
# ├── TokensAmbiguous      `gitreg token revoke` named no one token or person: an id's start that
# │                        several share, or a name that people of different subjects share
# ├── ArchiveError         an archive could not be built from a commit, or kept on disk
# │   └── ArchiveTooLarge  the commit's tree is over a limit of `archives:` in registry.yaml
# ├── OriginError          an origin registry's answer is missing, malformed or fails verification
# │   ├── OriginUnavailable    the origin could not be reached (or answered 5xx): try later
# │   └── OriginRefused        a URL read-through may not ask: not https, a host it may not reach
# ├── OriginBusy           read-through's threads (or an origin's share of them) are all taken
# ├── KeyUnavailable       the provenance key cannot be read now (its file gone or replaced since)
# └── ClientGone           the client's connection failed while its answer was being sent (it
#                          left, or sent what does not decrypt): its business, not a server error

from __future__ import annotations

from dataclasses import dataclass


class GitregError(Exception):
    """Base of every error gitreg raises on purpose."""


@dataclass(frozen=True)
class ConfigProblem:
    """One thing wrong with registry.yaml, located by key path and line."""

    path: str
    line: int | None
    reason: str

    def __str__(self) -> str:
        where = f"{self.path} (line {self.line})" if self.line else self.path
        return f"{where}: {self.reason}"


class ConfigError(GitregError):
    def __init__(self, source: str, problems: list[ConfigProblem]) -> None:
        self.source = source
        self.problems = problems
        lines = "\n".join(f"  {p}" for p in problems)
        super().__init__(f"{source} is invalid:\n{lines}")


class StartupError(GitregError):
    """`serve` cannot start; the message is one line, and `status` the exit status it deserves."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


class ClientError(GitregError):
    """A request that can never succeed as written."""


class NotFound(ClientError):
    """Well-formed, but not on this registry."""


class Revoked(NotFound):
    """A revoked version, asked for by a reader who never installed it: gone on purpose (410)."""


class Unauthorized(ClientError):
    """No credentials, or credentials nobody issued: a webhook signature, a client token."""


class Forbidden(ClientError):
    """Credentials we know that do not open this; or a download URL's bad signature."""


class TooManyRequests(ClientError):
    """A client address over a limit: asked again after `retry_after` seconds, it may pass."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class LoginRefused(ClientError):
    """A step of a sign-in through the OpenID provider that cannot go on as asked; `error`: its
    OAuth 2.0 error code (RFC 6749 5.2: invalid_request, invalid_grant, ...), which the token
    endpoint answers with."""

    def __init__(self, message: str, error: str = "invalid_request") -> None:
        super().__init__(message)
        self.error = error


class AuthUnavailable(GitregError):
    """The client's credentials cannot be checked now (its OIDC issuer or Git server fails, or
    auth.git holds back new logins at a Git host); never read as "allowed", nor as "refused for
    good". Asked again after `retry_after` seconds, it may pass."""

    def __init__(self, message: str, retry_after: int = 10) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class TokensAmbiguous(GitregError):
    """What `gitreg token revoke` was given names tokens it must not end together: the message
    lists them (id, name, subject) and says how to name the one meant; nothing was ended."""


class SourceError(GitregError):
    """A repository could not be fetched or read; the message never holds secrets."""


class NotReadYet(SourceError):
    """A module's repository was never fetched (it is being read, or its Git server is down), or
    the release folders not scanned yet (the server just started), so its versions are not
    known yet: a 503 every request for it meets until then."""


class FetchStopped(SourceError):
    """A fetch ended by the server as it stops (its `git` process killed): not the Git
    server's failure, and nothing to record against the repository."""


class StateUnavailable(SourceError):
    """The shared state (state.postgres) cannot be reached or used now. A SourceError: a sync
    that meets it serves what it knew. The message never holds the database URL, its host or
    its password: it says what failed in gitreg's words, not the driver's."""


class ArchiveError(GitregError):
    pass


class ArchiveTooLarge(ArchiveError):
    """Over a configured limit: building it again will not help."""


class ArchiveMismatch(ArchiveError):
    """A build whose bytes differ from the digest the ledger recorded for the archive: never
    served, since clients were told the recorded one."""


class OriginError(GitregError):
    """What an origin registry answered cannot be used (read-through of the network mirror)."""


class OriginUnavailable(OriginError):
    """The origin could not be reached, timed out, or failed on its side."""


class OriginRefused(OriginError):
    """A URL read-through does not ask: not https, a host outside the allowed origins and
    download hosts, or a name that resolves to a private address. Nothing was sent."""


class OriginBusy(GitregError):
    """Read-through's threads, or those one origin may hold, are all at work: the request is
    refused at once rather than queued behind them."""


class KeyUnavailable(GitregError):
    """The provenance key registry.yaml names can no longer be read as one (removed or replaced
    since it was loaded): nothing is signed until it is fixed and registry.yaml reloaded."""


class ClientGone(GitregError):
    """The client's connection failed while its answer was being sent."""
