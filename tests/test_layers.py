"""Layers that only point down: gitreg's imports, read with `ast`, against the rules
ARCHITECTURE.md states, read from ARCHITECTURE.md itself so that the page and the code cannot
drift apart. No import cycle between files, nor between packages; each package imports only the
layers listed before it; the libraries kept to one place stay there; every module is named on
the page; none is over 400 lines; only the commands import the process package; few modules sit
flat at the top.

A unit is a package of gitreg (`auth/`, `catalog/`, ...) or a file at its top (`errors.py`,
`__main__.py`): counting the top files as one root package would put `__main__.py` (which imports
everything) and `errors.py` (which everything imports) in one unit, a cycle by construction.
Type-only imports and imports inside functions count (see tests/support/import_graph.py)."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from tests.support.import_graph import (
    ImportGraph,
    Module,
    describe,
    one_cycle,
    strongly_connected,
    units_graph,
)

TOP = Path(__file__).resolve().parents[1]
ARCHITECTURE = (TOP / "ARCHITECTURE.md").read_text()
GRAPH = ImportGraph(TOP / "gitreg", "gitreg")
MOST_LINES = 400  # "keep modules to one concept and a few hundred lines; split before 400"

# Checks the main session passes once its rewrite of these files lands; each entry names what
# it excuses, so that the entry goes with the reason (issue 19: main session).
ABSENT_UNITS_ALLOWED: set[str] = set()
LIBRARY_USES_ALLOWED: set[tuple[str, str]] = set()
LONG_MODULES_ALLOWED: set[str] = set()


def unit_of(module: Module) -> str:
    """`auth/` for gitreg/auth/*.py, `errors.py` for gitreg/errors.py, `__init__.py` for the root
    package's own __init__.py."""
    first, _, rest = module.relative.partition("/")
    return f"{first}/" if rest else first


def section(title: str) -> str:
    found = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", ARCHITECTURE, re.M | re.S)
    assert found, f"ARCHITECTURE.md has no section '## {title}'"
    return found.group(1)


def layers() -> dict[str, int]:
    """Each unit's layer: its line's number in ARCHITECTURE.md's numbered list under
    '## Layers', from the bottom up."""
    found: dict[str, int] = {}
    for line in section("Layers").splitlines():
        numbered = re.match(r"(\d+)\. (.*)", line)
        if numbered is None:
            continue
        for unit in re.findall(r"`([^`]+)`", numbered.group(2)):
            assert unit not in found, f"{unit} is on two lines of the layer list"
            found[unit] = int(numbered.group(1))
    assert found, "ARCHITECTURE.md's '## Layers' lists no layer"
    return found


def library_rules() -> list[tuple[set[str], set[str]]]:
    """The rows of the table under '## Layers': the libraries (their import names, in
    backquotes) and the only units or files that may import them."""
    rules = []
    for line in section("Layers").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) != 2 or cells[0].startswith(("library", "-")):
            continue
        names, places = (set(re.findall(r"`([^`]+)`", c)) for c in cells)
        rules.append((names, places))
    assert rules, "ARCHITECTURE.md's '## Layers' has no table of libraries kept to one place"
    return rules


def test_no_import_cycle_between_files() -> None:
    cycles = [
        f"{', '.join(component)}; one cycle: {' → '.join(one_cycle(component, GRAPH.imports))}"
        for component in strongly_connected(GRAPH.modules, GRAPH.imports)
    ]
    assert not cycles, "import cycles between files:\n" + "\n".join(cycles)


def test_no_import_cycle_between_packages() -> None:
    successors, behind = units_graph(GRAPH, unit_of)
    found = []
    for component in strongly_connected(successors, successors.__getitem__):
        cycle = one_cycle(component, successors.__getitem__)
        steps = [
            f"  {a} → {b}: {describe(behind[a, b], GRAPH.modules)}"
            for a, b in itertools.pairwise(cycle)
        ]
        found.append(f"{', '.join(component)}; one cycle: {' → '.join(cycle)}\n" + "\n".join(steps))
    assert not found, "import cycles between packages:\n" + "\n".join(found)


def test_imports_point_down_the_layers() -> None:
    layer = layers()
    successors, behind = units_graph(GRAPH, unit_of)
    upward = [
        f"{a} (layer {layer[a]}) imports {b} (layer {layer[b]}): "
        + describe(behind[a, b], GRAPH.modules)
        for a, imported in sorted(successors.items())
        for b in sorted(imported)
        if a in layer and b in layer and layer[b] >= layer[a]
    ]
    assert not upward, (
        "imports against ARCHITECTURE.md's layers (a line imports only the lines before it):\n"
        + "\n".join(upward)
    )


def test_every_unit_has_one_layer() -> None:
    listed = set(layers())
    present = {unit_of(m) for m in GRAPH.modules.values()}
    assert not present - listed, f"not in ARCHITECTURE.md's layers: {sorted(present - listed)}"
    absent = listed - present - ABSENT_UNITS_ALLOWED
    assert not absent, f"ARCHITECTURE.md's layers name what gitreg lacks: {sorted(absent)}"


def test_libraries_stay_where_architecture_says() -> None:
    wrong = []
    for names, places in library_rules():
        for module in GRAPH.modules.values():
            if module.relative in places or unit_of(module) in places:
                continue
            for library, line in GRAPH.libraries[module.name].items():
                if library in names and (module.relative, library) not in LIBRARY_USES_ALLOWED:
                    wrong.append(
                        f"{module.relative}:{line} imports {library} (only {sorted(places)})"
                    )
    assert not wrong, "libraries outside their place:\n" + "\n".join(wrong)


def named_modules() -> list[tuple[str, str]]:
    """The (package, file) of every module line under '## The packages': a `- `file.py`: ...`
    line under its package's `### `package/`` heading (`gitreg/` for the top)."""
    named: list[tuple[str, str]] = []
    package = None
    for line in section("The packages").splitlines():
        if heading := re.match(r"### `([a-z_]+/)`", line):
            package = heading.group(1)
        elif (module := re.match(r"- `([a-z_]+\.py)`: ", line)) and package is not None:
            named.append((package, module.group(1)))
    assert named, "ARCHITECTURE.md's '## The packages' names no module"
    return named


def test_every_module_is_named_in_architecture() -> None:
    """In its package's list under '## The packages' (`gitreg/` for the top), once."""
    named = named_modules()
    unnamed = []
    present = set()
    for module in GRAPH.modules.values():
        folder, _, file = module.relative.rpartition("/")
        if file == "__init__.py":
            continue  # the package itself, named by its heading
        place = (f"{folder}/" if folder else "gitreg/", file)
        present.add(place)
        if place not in named:
            unnamed.append(module.relative)
    assert not unnamed, f"modules ARCHITECTURE.md does not name: {sorted(unnamed)}"
    twice = sorted({place for place in named if named.count(place) > 1})
    assert not twice, f"modules ARCHITECTURE.md names more than once: {twice}"
    absent = sorted(set(named) - present)
    assert not absent, f"ARCHITECTURE.md names modules gitreg lacks: {absent}"


def test_every_package_has_a_row_and_a_list() -> None:
    """The table under '## The packages' has a row for each package and each has its list."""
    text = section("The packages")
    rows = set(re.findall(r"^\| `([a-z_]+/)` \|", text, re.M))
    listed = set(re.findall(r"^### `([a-z_]+/)`", text, re.M))
    packages = {unit_of(m) for m in GRAPH.modules.values() if unit_of(m).endswith("/")}
    packages.add("gitreg/")
    assert rows == packages, f"package rows {sorted(rows ^ packages)} differ from gitreg's"
    assert listed == packages, f"package lists {sorted(listed ^ packages)} differ from gitreg's"


def test_no_module_over_400_lines() -> None:
    long = {
        module.relative: lines
        for module in GRAPH.modules.values()
        if (lines := len(module.path.read_text().splitlines())) > MOST_LINES
        and module.relative not in LONG_MODULES_ALLOWED
    }
    assert not long, f"modules over {MOST_LINES} lines: {long}"


def test_a_package_init_imports_nothing_of_gitreg() -> None:
    """Importing gitreg.auth.gate runs gitreg/auth/__init__.py first: an import there would be
    an edge of every module of the package, which the checks above do not follow."""
    importing = [
        m.relative
        for m in GRAPH.modules.values()
        if m.path.name == "__init__.py" and GRAPH.edges[m.name]
    ]
    assert not importing, f"package __init__.py files that import gitreg: {importing}"


@pytest.fixture
def tangled(tmp_path: Path) -> ImportGraph:
    """A package whose files import each other only under TYPE_CHECKING and inside a function,
    and whose subpackages import each other: every kind of import the checks must see."""
    root = tmp_path / "tangle"
    (root / "low").mkdir(parents=True)
    (root / "high").mkdir()
    for init in (root, root / "low", root / "high"):
        (init / "__init__.py").write_text('"""A package."""\n')
    (root / "a.py").write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from tangle.b import B\n"
    )
    (root / "b.py").write_text("def late() -> None:\n    from tangle import a\n")
    (root / "low" / "value.py").write_text("from ..high import user\n")  # relative, upward
    (root / "high" / "user.py").write_text("import tangle.low.value\nimport dulwich.repo\n")
    return ImportGraph(root, "tangle")


def test_the_checks_see_every_kind_of_import(tangled: ImportGraph) -> None:
    assert tangled.imports("tangle.a") == {"tangle.b"}
    assert tangled.imports("tangle.b") == {"tangle.a"}
    assert tangled.libraries["tangle.high.user"] == {"dulwich": 2}
    files = strongly_connected(tangled.modules, tangled.imports)
    assert files == [["tangle.a", "tangle.b"], ["tangle.high.user", "tangle.low.value"]]
    assert one_cycle(files[0], tangled.imports) == ["tangle.a", "tangle.b", "tangle.a"]
    successors, behind = units_graph(tangled, unit_of)
    units = strongly_connected(successors, successors.__getitem__)
    assert units == [["a.py", "b.py"], ["high/", "low/"]]
    assert describe(behind["low/", "high/"], tangled.modules) == (
        "low/value.py:1 imports high/user.py"
    )


def test_the_world_knows_no_sync_engine() -> None:
    """A reload has one owner (freshness/live.py): the world it swaps in is built around what
    the module sync prepared, never by calling it."""
    reaching = sorted(
        name
        for name, module in GRAPH.modules.items()
        if module.relative.startswith("world/") and "gitreg.modules.sync" in GRAPH.imports(name)
    )
    assert not reaching, f"world/ imports the module sync: {reaching}"


# Who may import the process package (gitreg/process/: the server, its workers and connections,
# the CPU budget, the frozen heap, TLS certificates): the commands that start a process, and the
# process package itself. Domain code reaches the process only through gitreg/pacing.py, whose
# hooks `gitreg serve` installs, and through the budget it hands in.
PROCESS = "process/"
MAY_IMPORT_THE_PROCESS = {"commands/", PROCESS}
MOST_FLAT_MODULES = 12  # at the top of gitreg/, besides __init__.py and __main__.py


def test_only_the_commands_import_the_process_package() -> None:
    reaching = sorted(
        f"{module.relative}:{edge.line} imports {GRAPH.modules[edge.imported].relative}"
        for name, module in GRAPH.modules.items()
        if unit_of(module) not in MAY_IMPORT_THE_PROCESS
        for edge in GRAPH.edges[name]
        if unit_of(GRAPH.modules[edge.imported]) == PROCESS
    )
    assert not reaching, "the process package imported outside commands/:\n" + "\n".join(reaching)


def test_few_modules_sit_flat_at_the_top() -> None:
    """The top of gitreg/ holds leaf values every layer shares; the rest is in its package."""
    flat = sorted(
        module.relative
        for module in GRAPH.modules.values()
        if "/" not in module.relative and module.relative not in ("__init__.py", "__main__.py")
    )
    assert len(flat) <= MOST_FLAT_MODULES, f"{len(flat)} modules flat in gitreg/: {flat}"
