"""What a module's archive may hold where its repository also holds modules other clients read.

With `auth:`, two modules have different readers when their namespaces differ (case aside) and
one of them is not public; without it everything is public, and nothing here applies. An archive
of the whole repository would show one module's readers the other's code, so:

- a module whose `archive` is left out gets archives of its own folder (`folder`), and
  `gitreg check` and `serve` say so;
- `archive: repository` written on such a module is refused;
- a module whose folder holds the folder of a module of other readers, not public, is refused
  whatever its `archive` or `download`: its folder's archive and its docs (which read
  `modules/*` and `examples/*`) would show that module's code.

`download: git` modules get no archive from gitreg (their clients clone with their own Git
credentials), but their code is in the repository: they count as neighbours all the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from gitreg.auth.principal import NamespaceScope
from gitreg.catalog import yamldoc
from gitreg.catalog.model import AuthSettings, Catalog, ModuleSpec
from gitreg.git.location import RepoLocation


@dataclass(frozen=True)
class Neighbours:
    """The modules of one module's repository that have other readers than it."""

    others: tuple[ModuleSpec, ...]
    inside: tuple[ModuleSpec, ...]  # of those, not public, in a folder inside the module's own

    @property
    def namespaces(self) -> tuple[str, ...]:
        """Their namespaces, each once (as first written), in catalog order."""
        seen: dict[str, str] = {}
        for spec in self.others:
            seen.setdefault(spec.address.namespace.lower(), spec.address.namespace)
        return tuple(seen.values())


def neighbours(
    spec: ModuleSpec, modules: Sequence[ModuleSpec], auth: AuthSettings | None
) -> Neighbours:
    if auth is None:
        return Neighbours((), ())
    public = NamespaceScope(auth.public)
    mine = spec.address.namespace
    others = tuple(
        other
        for other in modules
        if other.repo == spec.repo
        and other.address.namespace.lower() != mine.lower()
        and not (public.covers(mine) and public.covers(other.address.namespace))
    )
    inside = tuple(
        other
        for other in others
        if _strictly_inside(other.path, spec.path) and not public.covers(other.address.namespace)
    )
    return Neighbours(others, inside)


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
        for spec, (path, m) in zip(modules, places, strict=True):
            near = neighbours(spec, modules, auth)
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
            elif near.others and spec.download == "archive" and spec.path:
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
