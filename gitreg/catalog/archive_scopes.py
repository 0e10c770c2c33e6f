"""What a module's archive may hold where its repository also holds modules other clients read.

With `auth:`, two modules have different readers when their namespaces differ (case aside) and
one of them is not public. Such a module gets archives of its own folder when its `archive` is
left out (`gitreg check` and `serve` say so); `archive: repository` on it is refused, and so is a
module whose folder holds a non-public module of other readers, whatever its `archive` or
`download` (its archive and its docs, which read `modules/*` and `examples/*`, would show that
code). `download: git` modules get no archive from gitreg, but count as neighbours all the same.
See docs/how-it-works/security.md."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from gitreg.catalog import yamldoc
from gitreg.catalog.auth_settings import AuthSettings
from gitreg.catalog.model import Catalog
from gitreg.catalog.namespace_scope import NamespaceScope
from gitreg.catalog.specs import ModuleSpec
from gitreg.git.location import RepoLocation


@dataclass(frozen=True)
class Neighbours:
    """What a module's repository holds of other readers than the module's."""

    namespaces: tuple[str, ...] = ()  # of its modules of other readers, as first written
    inside: tuple[ModuleSpec, ...] = ()  # those, not public, in a folder inside the module's own


def neighbours(modules: Sequence[ModuleSpec], auth: AuthSettings | None) -> list[Neighbours]:
    """Each module's neighbours, in the order of `modules`. By repository, then by namespace:
    a catalog of 10,000 modules is not compared pair by pair."""
    if auth is None:
        return [Neighbours()] * len(modules)
    public = NamespaceScope(auth.public)
    # By identity: a repository written two ways (a path and its .git folder, a URL with and
    # without .git) is still one repository, whose modules' archives must not mix readers.
    repositories: dict[str, dict[str, list[ModuleSpec]]] = {}
    for spec in modules:
        namespaces = repositories.setdefault(spec.repo.identity, {})
        namespaces.setdefault(spec.address.namespace.lower(), []).append(spec)
    covered = {
        namespace: public.covers(namespace)
        for namespaces in repositories.values()
        for namespace in namespaces
    }
    result = []
    for spec in modules:
        namespaces = repositories[spec.repo.identity]
        mine = spec.address.namespace.lower()
        others = [n for n in namespaces if n != mine and not (covered[mine] and covered[n])]
        inside = tuple(
            other
            for n in others
            if not covered[n]
            for other in namespaces[n]
            if _strictly_inside(other.path, spec.path)
        )
        result.append(Neighbours(tuple(namespaces[n][0].address.namespace for n in others), inside))
    return result


def _strictly_inside(folder: str, container: str) -> bool:
    if folder == container:
        return False  # the same folder: the same code, published under two names
    return not container or folder.startswith(f"{container}/")


def _quoted(namespaces: Sequence[str]) -> str:
    return ", ".join(repr(n) for n in namespaces)


class ArchiveScopes(yamldoc.Reader):
    """The catalog loader's part: narrow, or refuse with the key path and line."""

    def archive_scopes(
        self,
        modules: Sequence[ModuleSpec],
        places: Sequence[tuple[str, yamldoc.Mapping]],
        auth: AuthSettings | None,
    ) -> list[ModuleSpec]:
        """`modules` (each read at `places`: its key path and mapping) with their archive scope
        decided; a problem for each module whose archive or docs would still show another's."""
        result = []
        for spec, near, (path, m) in zip(modules, neighbours(modules, auth), places, strict=True):
            if near.inside:
                inner = near.inside[0]
                where = spec.path or "the repository's root"
                self.problem(
                    yamldoc.join(path, "path") if spec.path else path,
                    m.key_lines.get("path", m.line),
                    f"{where} holds module {inner.address} ({inner.path}), which has other"
                    f" readers: this module's archive and docs would show its code to"
                    f" {spec.address.namespace!r}'s readers; give each module a folder outside"
                    " the other's",
                )
            elif near.namespaces and spec.download == "archive" and spec.path:
                if "archive" not in m:
                    spec = replace(spec, archive="folder", archive_narrowed_by=near.namespaces)
                elif spec.archive == "repository":
                    self.problem(
                        yamldoc.join(path, "archive"),
                        m.key_lines["archive"],
                        f"'repository' would put the code of namespace {_quoted(near.namespaces)}"
                        f" in this module's archive: its modules share this repository and have"
                        " other readers; write 'folder', or leave archive out (then it is"
                        " 'folder')",
                    )
            result.append(spec)
        return result


def narrowed_by_repository(catalog: Catalog) -> dict[RepoLocation, list[ModuleSpec]]:
    """The modules whose archives the catalog narrowed to their folder, by repository."""
    result: dict[RepoLocation, list[ModuleSpec]] = {}
    for spec in catalog.modules:
        if spec.archive_narrowed_by:
            result.setdefault(spec.repo, []).append(spec)
    return result


def narrowed_notices(catalog: Catalog) -> list[str]:
    """What `serve` logs at start: one line per repository whose archives were narrowed."""
    lines = []
    for repo, specs in narrowed_by_repository(catalog).items():
        namespaces = {s.address.namespace.lower(): s.address.namespace for s in specs}
        for spec in specs:
            namespaces.update((n.lower(), n) for n in spec.archive_narrowed_by)
        lines.append(
            f"{repo} holds modules of namespaces {_quoted(sorted(namespaces.values()))}, whose"
            f" readers differ: the archives of {', '.join(str(s.address) for s in specs)}"
            " hold only their own folder"
        )
    return lines
