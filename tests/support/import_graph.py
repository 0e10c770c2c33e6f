"""A package's imports, read from its source with `ast` (nothing is imported): which of its own
modules each module imports, which libraries, and the strongly connected parts of that graph
(Tarjan), each named by one cycle through it.

Every import statement counts, wherever it stands: at the top, inside a function (an import
put off until it is needed still ties the two modules together), and under
`if TYPE_CHECKING:` (a cycle that only the type checker walks is still two modules that cannot
be read, moved or split one without the other)."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Module:
    name: str  # dotted: gitreg.auth.gate; a package's __init__.py is the package's name
    path: Path
    relative: str  # the file under the package's folder: auth/gate.py


@dataclass(frozen=True)
class Edge:
    importer: str
    imported: str
    line: int


class ImportGraph:
    """The modules of the package at `folder` (named `package`) and what each imports."""

    def __init__(self, folder: Path, package: str) -> None:
        self.package = package
        self.modules: dict[str, Module] = {}
        for path in sorted(folder.rglob("*.py")):
            relative = path.relative_to(folder)
            parts = [package, *relative.with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            name = ".".join(parts)
            self.modules[name] = Module(name, path, relative.as_posix())
        self.edges: dict[str, list[Edge]] = {}
        self.libraries: dict[str, dict[str, int]] = {}  # module → library's top name → line
        for module in self.modules.values():
            self._read(module)

    def imports(self, name: str) -> set[str]:
        return {e.imported for e in self.edges[name]}

    def _read(self, module: Module) -> None:
        tree = ast.parse(module.path.read_text(), str(module.path))
        is_package = module.path.name == "__init__.py"
        here = module.name if is_package else module.name.rpartition(".")[0]
        own: list[Edge] = []
        libraries: dict[str, int] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if self._is_own(alias.name):
                        own.append(Edge(module.name, self._module_of(alias.name), node.lineno))
                    else:
                        libraries.setdefault(alias.name.split(".")[0], node.lineno)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = here.split(".")[: len(here.split(".")) - (node.level - 1)]
                    base = ".".join([*parent, base] if base else parent)
                if not self._is_own(base):
                    libraries.setdefault(base.split(".")[0], node.lineno)
                    continue
                for alias in node.names:
                    # `from gitreg import connections` imports a module; `from gitreg.x import
                    # name`, a name of the module gitreg.x.
                    target = f"{base}.{alias.name}"
                    imported = target if target in self.modules else self._module_of(base)
                    own.append(Edge(module.name, imported, node.lineno))
        self.edges[module.name] = own
        self.libraries[module.name] = libraries

    def _is_own(self, name: str) -> bool:
        return name == self.package or name.startswith(self.package + ".")

    def _module_of(self, name: str) -> str:
        """The module a dotted name lives in (the longest prefix that is one of ours)."""
        while name not in self.modules:
            if "." not in name:
                raise ValueError(f"{name} is not a module of {self.package}")
            name = name.rpartition(".")[0]
        return name


def strongly_connected(
    nodes: Iterable[str], successors: Callable[[str], Iterable[str]]
) -> list[list[str]]:
    """The strongly connected components of more than one node, or of one that reaches itself
    (Tarjan's algorithm, iterative, in a stable order)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    # The depth-first walk's own stack: each node entered, with the successors it has yet to try.
    work: list[tuple[str, list[str]]] = []

    def enter(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        work.append((node, sorted(successors(node), reverse=True)))

    for root in sorted(nodes):
        if root in index:
            continue
        enter(root)
        while work:
            node, pending = work[-1]
            if pending:
                nxt = pending.pop()
                if nxt not in index:
                    enter(nxt)
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in successors(node):
                    found.append(sorted(component))
    return found


def one_cycle(component: list[str], successors: Callable[[str], Iterable[str]]) -> list[str]:
    """A cycle through the component's first node, shortest first: [a, b, ..., a]."""
    start, members = component[0], set(component)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in sorted(successors(node)):
                if nxt not in members:
                    continue
                if nxt == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if nxt not in came_from:
                    came_from[nxt] = node
                    following.append(nxt)
        frontier = following
    raise ValueError(f"{component} holds no cycle")


def units_graph(
    graph: ImportGraph, unit_of: Callable[[Module], str]
) -> tuple[dict[str, set[str]], dict[tuple[str, str], list[Edge]]]:
    """The graph between units (packages, or files on their own): which unit imports which, and
    the module imports behind each such edge."""
    successors: dict[str, set[str]] = {unit_of(m): set() for m in graph.modules.values()}
    behind: dict[tuple[str, str], list[Edge]] = {}
    for name, edges in graph.edges.items():
        for edge in edges:
            a, b = unit_of(graph.modules[name]), unit_of(graph.modules[edge.imported])
            if a != b:
                successors[a].add(b)
                behind.setdefault((a, b), []).append(edge)
    return successors, behind


def describe(edges: Iterable[Edge], modules: Mapping[str, Module]) -> str:
    """Where edges come from, as people find them: auth/gate.py:36 imports state/ended_sessions.py."""
    said = (
        f"{modules[e.importer].relative}:{e.line} imports {modules[e.imported].relative}"
        for e in edges
    )
    return "; ".join(dict.fromkeys(said))  # one line may import several names of one module
