"""Where a repository lives: a URL (https, ssh, git, file) or a local path; its clone's name."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import unquote, urlsplit

Transport = Literal["https", "http", "ssh", "git", "local"]

_SCP_LIKE = re.compile(r"(?P<user>[^@/:]+@)?(?P<host>[^/:]+):(?P<path>[^/].*)")
_PASSWORD = re.compile(r"(://[^/@:\s]*):[^/@\s]*@")
# An http(s) URL's whole user part: a token is often given as the user name (`https://TOKEN@`).
_HTTP_USER = re.compile(r"(?i)(\bhttps?://)[^/@\s]+@")


def is_scp_like(text: str) -> bool:
    """`user@host:path`, git's short form of an ssh URL."""
    return _SCP_LIKE.fullmatch(text) is not None


def redact(text: str) -> str:
    """Hide any password in URLs in `text` (`ssh://git:***@host`), and the whole user part of
    http(s) URLs (`https://***@host`), where a token passes for a user name: so that logs,
    status and errors never carry one."""
    return _PASSWORD.sub(r"\1:***@", _HTTP_USER.sub(r"\1***@", text))


def clone_name(url: str) -> str:
    """The name of the bare clone of the repository at `url` in cache_dir/git (and of its
    ledger): its last path part, readable, and a digest of the whole URL, unique."""
    slug = re.sub(r"[^A-Za-z0-9._-]", "-", url.rstrip("/").rsplit("/", 1)[-1])[:40]
    digest = hashlib.sha256(url.encode()).hexdigest()[:12]
    return f"{slug.removesuffix('.git')}-{digest}"


@dataclass(frozen=True)
class RepoLocation:
    """A repository's address, normalised so that two spellings of one repository compare equal."""

    url: str
    transport: Transport

    @classmethod
    def parse(cls, text: str, base: Path) -> RepoLocation:
        if "://" in text:
            parts = urlsplit(text)
            scheme = parts.scheme.lower()
            if scheme == "file":
                return cls._local(Path(unquote(parts.path)), text)
            if scheme not in ("https", "http", "ssh", "git"):
                raise ValueError(
                    f"{text!r}: scheme {scheme!r} is not one of https, http, ssh, git, file"
                )
            if not parts.hostname:
                raise ValueError(f"{text!r} has no host")
            if parts.password:
                raise ValueError(
                    "a URL must not carry a password or token: "
                    "use credentials (token_env or token_file)"
                )
            return cls(text.rstrip("/"), scheme)  # type: ignore[arg-type]
        if is_scp_like(text) and not (base / text).exists():
            return cls(text.rstrip("/"), "ssh")
        return cls._local(base / Path(text).expanduser(), text)

    @classmethod
    def _local(cls, path: Path, text: str) -> RepoLocation:
        resolved = path.resolve()
        if not resolved.is_dir():
            raise ValueError(f"{text!r}: no such directory ({resolved})")
        return cls(str(resolved), "local")

    @property
    def identity(self) -> str:
        """What every spelling of this repository shares, for questions where two spellings
        must not pass for two repositories (which modules share one, and so one archive):
        a working tree and its `.git` folder are one; a forge's repository is its host and
        path, whatever the scheme, port, user, case or `.git` suffix (forges read paths
        case-insensitively). It may join two that are distinct, never split one."""
        if self.transport == "local":
            folder = Path(self.url)
            return str(folder.parent if folder.name == ".git" else folder)
        scp = _SCP_LIKE.fullmatch(self.url) if "://" not in self.url else None
        if scp is not None:
            host, path = scp["host"], scp["path"]
        else:
            parts = urlsplit(self.url)
            host, path = parts.hostname or "", unquote(parts.path)
        path = path.strip("/").lower().removesuffix(".git").rstrip("/")
        return f"{host.lower()}/{path}"

    @property
    def clone_url(self) -> str:
        """What a client clones in git mode when no git_url is given."""
        return Path(self.url).as_uri() if self.transport == "local" else self.url

    def __str__(self) -> str:
        return redact(self.url)
