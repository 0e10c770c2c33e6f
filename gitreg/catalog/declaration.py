"""A repository's own `.gitreg.yaml`: the modules it declares and the providers its releases hold.

Its entries (a monorepo's modules) are shaped like registry.yaml's without `repo` (nor a
provider's release location) and read by the same reader, so that the rules and the refusals are
the same; a refusal names the repository and the file. See docs/sources.md."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from gitreg.catalog import yamldoc, yamltree
from gitreg.catalog.archive_scopes import ArchiveScopes
from gitreg.catalog.deprecations import REASON_MOST
from gitreg.catalog.module_entries import EntryDefaults, ModuleEntries
from gitreg.catalog.providers import OwnReleases
from gitreg.catalog.specs import ModuleSpec, ProviderSpec
from gitreg.errors import ConfigError, ConfigProblem

DECLARATION = ".gitreg.yaml"
VERSION_FILE_MOST = 64 << 10  # bytes of a version's .gitreg.yaml read for its `deprecated:` line


@dataclass(frozen=True)
class Declaration:
    """What a repository's `.gitreg.yaml` declares, and what of it is not read."""

    modules: tuple[ModuleSpec, ...]
    ignored: tuple[str, ...] = ()
    providers: tuple[ProviderSpec, ...] = ()


class _DeclarationReader(ModuleEntries, ArchiveScopes):
    def declaration(self, document: object, defaults: EntryDefaults) -> Declaration | None:
        allowed = {"modules", "providers", "deprecated"}
        top = self.mapping(document, "", getattr(document, "line", 1), allowed)
        if top is None:
            return None
        # Read at each version's commit (`version_deprecation`); here only checked.
        reason = self.string(top, "deprecated", "")
        if reason is not None and len(reason) > REASON_MOST:
            why = f"is {len(reason)} characters long; at most {REASON_MOST} are allowed"
            self.problem("deprecated", top.key_lines["deprecated"], why)
        places: list[tuple[str, yamldoc.Mapping]] = []
        # With auth:, a monorepo's modules of other readers get archives of their own folder,
        # or are refused, by the rules registry.yaml's entries follow.
        modules = self.archive_scopes(self.modules(top, places, defaults), places, defaults.auth)
        providers: list[ProviderSpec] = []
        ignored: tuple[str, ...] = ()
        if "providers" in top and defaults.releases is None:
            # Said, not refused, so that a repository declaring both still serves its modules.
            ignored = (f"providers: not read: {defaults.no_releases}",)
        elif "providers" in top and defaults.releases is not None:
            own = OwnReleases(defaults.releases, defaults.namespace, defaults.may_claim)
            providers = self.providers(top, defaults.cache_dir, own)
        if not modules and not providers and not ignored and not self.problems:
            self.problem("modules", top.line, "declares no module: list one under modules:")
        return Declaration(tuple(modules), ignored, tuple(providers))


def version_deprecation(text: bytes) -> str:
    """The `deprecated:` line of a version's own `.gitreg.yaml` (at its tagged commit): the
    reason it is deprecated, or "" when it says none. A file that cannot be read says none: a
    version's docs do not fail for it."""
    try:
        document = yaml.safe_load(text.decode())
    except (UnicodeDecodeError, yaml.YAMLError, RecursionError):
        return ""
    reason = document.get("deprecated") if isinstance(document, dict) else None
    return " ".join(reason.split())[:REASON_MOST] if isinstance(reason, str) else ""


def read_declaration(text: bytes, repository: str, defaults: EntryDefaults) -> Declaration:
    """What `.gitreg.yaml` (as `text`) of `repository` declares; ConfigError naming
    `repository/.gitreg.yaml` with every problem, by key path and line."""
    source = f"{repository}/{DECLARATION}"
    try:
        document = yamltree.load(text.decode(), yamltree.LIBYAML)
    except UnicodeDecodeError as exc:
        raise ConfigError(source, [ConfigProblem("(document)", None, "not UTF-8 text")]) from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        reason = getattr(exc, "problem", None) or str(exc)
        line = mark.line + 1 if mark else None
        problem = ConfigProblem("(document)", line, f"not valid YAML: {reason}")
        raise ConfigError(source, [problem]) from exc
    except RecursionError as exc:
        problem = ConfigProblem("(document)", None, "not valid YAML: nested too deep")
        raise ConfigError(source, [problem]) from exc
    # Nothing in it names a file of this machine: a repository's file is not trusted with one.
    reader = _DeclarationReader(Path("/nonexistent"), secrets=())
    declared = reader.declaration(document, defaults)
    if reader.problems or declared is None:
        raise ConfigError(source, reader.problems)
    return declared


__all__ = [
    "DECLARATION",
    "VERSION_FILE_MOST",
    "Declaration",
    "EntryDefaults",
    "read_declaration",
    "version_deprecation",
]
