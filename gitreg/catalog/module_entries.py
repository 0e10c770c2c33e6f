"""Module entries, as registry.yaml's `modules:` writes them and as a `.gitreg.yaml` does.

A repository's own `.gitreg.yaml` writes them without `repo` (the repository it is in). One
reader, so that both follow the same rules and are refused with the same words."""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from gitreg.address import ModuleAddress
from gitreg.catalog import yamldoc
from gitreg.catalog.auth_settings import AuthSettings
from gitreg.catalog.deprecations import deprecations
from gitreg.catalog.providers import ProviderSections
from gitreg.catalog.publish_when import publish_when
from gitreg.catalog.secrets import SecretRef
from gitreg.catalog.specs import (
    ArchiveScope,
    DeletedPolicy,
    DownloadMode,
    ForgeReleases,
    ModuleSpec,
    MovedPolicy,
    PublishWhen,
    TagSigners,
)
from gitreg.catalog.tag_signers import tag_signers
from gitreg.git.location import RepoLocation, is_scp_like
from gitreg.pacing import breathe
from gitreg.tags import TagTemplate

# What a registry.yaml entry may hold; a repository's own entries hold fewer (`EntryDefaults`).
MODULE_KEYS = frozenset(
    {
        *("namespace", "name", "system", "repo", "path", "tags", "download", "git_url"),
        *("archive", "moved_tags", "deleted_tags", "webhook", "deprecated"),
        "revoked",
        *("require_signed_tags", "publish_when"),
    }
)


@dataclass(frozen=True)
class EntryDefaults:
    """Where entries are read from a repository's own file: that repository, the namespace of
    the source that found it and the namespaces it may claim besides, and the source's
    defaults for what an entry leaves out."""

    repo: RepoLocation
    namespace: str
    may_claim: Callable[[str], bool]
    tags: tuple[TagTemplate, ...]
    moved_tags: MovedPolicy = "pin"
    deleted_tags: DeletedPolicy = "keep"
    webhook_secret: SecretRef | None = None
    auth: AuthSettings | None = None  # who reads what: an archive must not mix readers
    # The repository's own releases on its forge, which its providers are read from; None where
    # the source has none (`no_releases` says why), and `cache_dir` they are fetched into.
    releases: ForgeReleases | None = None
    no_releases: str = "this source has no releases API"
    cache_dir: Path = Path("/nonexistent")
    signed_tags: TagSigners | None = None  # the source's: a repository's file cannot choose
    publish_when: PublishWhen | None = None  # the source's, likewise
    allowed: frozenset[str] = frozenset(
        {
            *("namespace", "name", "system", "path", "tags", "archive"),
            *("moved_tags", "deleted_tags", "deprecated", "revoked"),
        }
    )


class ModuleEntries(ProviderSections):
    def modules(
        self,
        top: yamldoc.Mapping,
        places: list[tuple[str, yamldoc.Mapping]],
        defaults: EntryDefaults | None = None,
    ) -> list[ModuleSpec]:
        """Every module; `places` gets each one's key path and mapping, in the same order."""
        result: list[ModuleSpec] = []
        seen: dict[tuple[str, str, str], str] = {}
        # Each repository's first module with a webhook secret: looked up, not searched for
        # (a search of the modules before each one was slow at 10,000 modules: bench/RESULTS.md,
        # bench.catalog_load).
        secret_holders: dict[RepoLocation, ModuleSpec] = {}
        keys = defaults.allowed if defaults else MODULE_KEYS
        required = {"name", "system"} if defaults else {"namespace", "name", "system", "repo"}
        for path, line, item in self.items(top, "modules"):
            breathe()  # a reload checks 10,000 of these while requests are answered
            m = self.mapping(item, path, line, keys, required)
            if m is None:
                continue
            address = self._address(m, path, line, defaults)
            if address is not None:
                if address.key in seen:
                    self.problem(
                        path, line, f"module {address} is already listed at {seen[address.key]}"
                    )
                seen.setdefault(address.key, path)
            repo = (
                defaults.repo
                if defaults
                else self.parsed(m, "repo", path, self.repo_location, repeats=True)
            )
            folder = self.parsed(m, "path", path, _parse_folder, repeats=True) or ""
            templates = self.templates(m, path)
            download = self.choice(m, "download", path, ("archive", "git"))
            archive = self.choice(m, "archive", path, ("repository", "folder"))
            if archive == "folder" and not folder:
                self.problem(
                    yamldoc.join(path, "archive"),
                    m.key_lines["archive"],
                    "'folder' needs a path: the module's folder",
                )
            git_url = self.parsed(m, "git_url", path, _parse_git_url)
            moved = self.choice(m, "moved_tags", path, ("pin", "follow", "quarantine"))
            deleted = self.choice(m, "deleted_tags", path, ("keep", "remove"))
            secret = self.secret(m, "webhook", path)
            deprecated = deprecations(self, m, path)
            revoked = deprecations(self, m, path, "revoked")
            signed_tags = None if defaults else tag_signers(self, m, path)
            rule = None if defaults else publish_when(self, m, path)
            if defaults:
                templates = templates if "tags" in m else defaults.tags
                moved = moved if "moved_tags" in m else defaults.moved_tags
                deleted = deleted if "deleted_tags" in m else defaults.deleted_tags
                secret = defaults.webhook_secret
                signed_tags = defaults.signed_tags
                rule = defaults.publish_when
            if address is None or repo is None:
                self.left_out(path, line)
            else:
                spec = ModuleSpec(
                    address=address,
                    repo=repo,
                    path=folder,
                    tags=templates,
                    download=cast(DownloadMode, download),
                    git_url=git_url,
                    archive=cast(ArchiveScope, archive),
                    moved_tags=cast(MovedPolicy, moved),
                    deleted_tags=cast(DeletedPolicy, deleted),
                    webhook_secret=secret,
                    deprecated=deprecated,
                    revoked=revoked,
                    signed_tags=signed_tags,
                    publish_when=rule,
                )
                rival = secret_holders.get(repo)
                if secret and rival and rival.webhook_secret != secret:
                    self.problem(
                        yamldoc.join(path, "webhook"),
                        m.key_lines["webhook"],
                        f"{rival.address} uses the same repository with another webhook secret",
                    )
                if secret:
                    secret_holders.setdefault(repo, spec)
                result.append(spec)
                places.append((path, m))
        return result

    def _address(
        self, m: yamldoc.Mapping, path: str, line: int, defaults: EntryDefaults | None
    ) -> ModuleAddress | None:
        namespace = self.string(m, "namespace", path, defaults.namespace if defaults else None)
        claimed = defaults and namespace and "namespace" in m
        if claimed and defaults and namespace and not _may_claim(defaults, namespace):
            self.problem(
                yamldoc.join(path, "namespace"),
                m.key_lines["namespace"],
                f"the source's namespace is {defaults.namespace!r}; {namespace!r} is not"
                " one its allow_namespaces lets a repository claim",
            )
            return None
        parts = [namespace, self.string(m, "name", path), self.string(m, "system", path)]
        if not all(parts):
            return None
        try:
            return ModuleAddress.parse(*parts)  # type: ignore[arg-type]
        except ValueError as exc:
            self.problem(path, line, str(exc))
            return None


def _may_claim(defaults: EntryDefaults, namespace: str) -> bool:
    return namespace.lower() == defaults.namespace.lower() or defaults.may_claim(namespace)


def _parse_git_url(text: str) -> str:
    if any(c.isspace() for c in text) or "?ref=" in text:
        raise ValueError(f"{text!r} must be a plain clone URL, without spaces or a ref")
    if "://" not in text and not is_scp_like(text):
        raise ValueError(f"{text!r} must be a URL clients can clone (https, ssh, git or file)")
    if not text.startswith("file://"):  # a file URL names the client's disk, not ours
        RepoLocation.parse(text, Path("/"))  # the same checks as repo: scheme, host, no password
    return text


def _parse_folder(text: str) -> str:
    cleaned = posixpath.normpath(text.strip("/")) if text.strip("/") else ""
    parts = cleaned.split("/") if cleaned and cleaned != "." else []
    if (
        text.startswith("/")
        or any(p in ("..", "") for p in parts)
        or any(p.lower() == ".git" for p in parts)
    ):
        raise ValueError(f"{text!r} must be a folder inside the repository, like modules/vpc")
    return "/".join(parts)
