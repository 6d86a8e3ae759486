"""The layers of the code, read from the import statements of every module of engine and pipeline.

One declared order of packages (LAYERS, lowest first) says which may import which: a module
may import its own package and the packages of lower layers, never a higher one, and never a
peer of its own layer (the five products stand side by side, none knowing another). Every import
statement counts, wherever it is written (at module level, inside a function, under
``if TYPE_CHECKING:``): a lazy import still says that one module needs the other. Three more
borders hold: the pipeline reaches the engine only through ``engine`` or a package's face (its
``__init__.py``), no module imports another's underscore name, and no modules import one another
in a circle.

``from engine.game import x`` is an import of the package when its face lists ``x``, else of
the module engine.game.x when there is one.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "pipeline")

# Lowest first. A layer of several packages holds peers, which import none of one another;
# "engine" and "pipeline" stand for the top-level modules of each (the engine's face, the
# pipeline's doors: cli, commands, bench, estimates and the small commands).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("engine.store",),
    ("engine.game",),
    ("engine.tables",),
    ("engine.solver",),
    ("engine.players",),
    ("engine.exact",),
    ("engine.play",),
    ("engine",),
    ("pipeline.runs",),
    ("pipeline.analysis",),
    ("pipeline.report",),
    ("pipeline.exact",),
    ("pipeline.study", "pipeline.ladder", "pipeline.search_ladder", "pipeline.atlas", "pipeline.fair"),
    ("pipeline",),
)
RANK = {package: rank for rank, layer in enumerate(LAYERS) for package in layer}
TOP_LEVEL_LIMIT = {"engine": 6, "pipeline": 12}  # modules beside __init__.py
LINE_LIMIT = 500

# What the strategy base stands on: nothing that searches, solves or plays whole games.
STRATEGY_BASE_IMPORTS = {"engine.game"}
# The checked rules API answers from the rules alone: no search, no solver, no position tables.
ABOVE_THE_API = {"engine.players.search", "engine.solver", "engine.tables", "engine.players.registry", "engine.play"}


def modules(package: str) -> dict[str, Path]:
    """Every module of a package by dotted name, the package and its subpackages included."""
    found = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


ALL = {name: path for package in PACKAGES for name, path in modules(package).items()}


def unit(module: str) -> str:
    """The declared package that holds ``module``: the longest one its name starts with."""
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in RANK:
            return ".".join(parts[:end])
    raise AssertionError(f"{module} is in no package of LAYERS")


@cache
def face(package: str) -> frozenset[str]:
    """The names a package's __init__.py lists in ``__all__``."""
    for node in ast.parse(ALL[package].read_text()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
        ):
            return frozenset(ast.literal_eval(node.value))
    return frozenset()


@cache
def statements(module: str) -> tuple[tuple[str, str | None, bool], ...]:
    """Each engine or pipeline module ``module`` imports: (module, the name imported from it or
    None, whether the statement sits at module level)."""
    tree = ast.parse(ALL[module].read_text(), filename=str(ALL[module]))
    top = {id(node) for node in _module_level(tree.body)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, None, id(node) in top) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, node)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                is_module = submodule in ALL and not (base in ALL and alias.name in face(base))
                found.append((submodule, None, id(node) in top) if is_module else (base, alias.name, id(node) in top))
    return tuple((name, imported, level) for name, imported, level in found if name in ALL and name != module)


def imports(module: str, *, module_level_only: bool = False) -> set[str]:
    return {name for name, _, level in statements(module) if level or not module_level_only}


def graph(package: str, *, module_level_only: bool = False) -> dict[str, set[str]]:
    """Each module of ``package`` and the modules of that package it imports."""
    return {
        module: {name for name in imports(module, module_level_only=module_level_only) if name.startswith(package)}
        for module in modules(package)
    }


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (as a path that returns to its start) through each strongly connected group
    of more than one module, or through a module that imports itself."""
    found = []
    for group in _strongly_connected(edges):
        start = min(group)
        if len(group) > 1 or start in edges[start]:
            found.append(_cycle_through(start, group, edges))
    return found


def reachable(module: str, edges: dict[str, set[str]]) -> set[str]:
    """Every module ``module`` imports, directly or through others."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        for name in edges[todo.pop()] - seen:
            seen.add(name)
            todo.append(name)
    return seen


def test_every_module_is_read_and_every_package_is_declared():
    assert {"engine", "engine.game.api", "engine.players.registry", "pipeline.study.run", "pipeline.cli"} <= set(ALL)
    packages = {name for name, path in ALL.items() if path.name == "__init__.py" and name.count(".") == 1}
    assert packages <= set(RANK), "a package of engine/ or pipeline/ that LAYERS does not place"


def test_every_import_points_down_the_layers():
    """A module imports its own package or a lower layer's, never a higher one nor a peer."""
    offending = {
        module: sorted(name for name in imports(module) if unit(name) != unit(module) and RANK[unit(name)] >= RANK[unit(module)])
        for module in ALL
    }
    assert {module: names for module, names in offending.items() if names} == {}


def test_the_pipeline_reaches_the_engine_only_through_its_faces():
    """engine or a package's face (engine.exact), never a module below one (engine.exact.graph)."""
    offending = {
        module: sorted(name for name in imports(module) if name.startswith("engine") and name != unit(name))
        for module in modules("pipeline")
    }
    assert {module: names for module, names in offending.items() if names} == {}


def test_the_engine_packages_reach_one_another_only_through_their_faces():
    offending = {
        module: sorted(name for name in imports(module) if unit(name) != unit(module) and name != unit(name))
        for module in modules("engine")
    }
    assert {module: names for module, names in offending.items() if names} == {}


def test_no_module_imports_an_underscore_name_of_another():
    offending = {
        module: sorted(f"{name}.{imported}" for name, imported, _ in statements(module) if imported and _private(imported))
        for module in ALL
    }
    assert {module: names for module, names in offending.items() if names} == {}


@pytest.mark.parametrize("package", PACKAGES)
def test_no_modules_import_one_another_in_a_circle(package):
    assert cycles(graph(package)) == []


@pytest.mark.parametrize("package", PACKAGES)
def test_the_top_level_holds_few_modules(package):
    top = sorted(path.name for path in (ROOT / package).glob("*.py") if path.name != "__init__.py")
    assert len(top) <= TOP_LEVEL_LIMIT[package], top


def test_no_module_is_over_the_line_limit():
    lines = {name: len(path.read_text().splitlines()) for name, path in ALL.items()}
    assert {name: count for name, count in lines.items() if count > LINE_LIMIT} == {}


def test_every_package_has_a_face_that_says_what_it_is():
    """Each package's __init__.py opens with a one-line docstring (its first line ends the sentence)."""
    missing = []
    for name, path in ALL.items():
        if path.name == "__init__.py":
            docstring = ast.get_docstring(ast.parse(path.read_text()))
            if not docstring or not docstring.splitlines()[0].rstrip().endswith("."):
                missing.append(name)
    assert missing == []


def test_the_strategy_base_is_a_leaf():
    assert imports("engine.players.base") <= STRATEGY_BASE_IMPORTS


@pytest.mark.parametrize(
    ("lower", "upper"),
    [("engine.players.strategies", "engine.players.search"), ("engine.players.search", "engine.players.strategies")],
)
def test_the_one_draw_strategies_and_the_search_strategies_stand_apart(lower, upper):
    assert upper not in reachable(lower, graph("engine"))


def test_the_checked_api_stands_below_the_solver_and_the_search():
    assert not {unit(name) for name in reachable("engine.game.api", graph("engine"))} & ABOVE_THE_API
    assert not reachable("engine.game.api", graph("engine")) & ABOVE_THE_API


def test_cycles_are_found():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"d"}, "e": {"a"}}
    assert sorted(cycles(edges)) == [["a", "b", "c", "a"], ["d", "d"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_an_import_reads_as_the_module_or_as_the_face(tmp_path, monkeypatch):
    source = (
        "from engine.play import replay, Replay\n"  # the face lists both: the package
        "from engine.game import board\n"  # a module the face does not list: the module
        "import engine.game.moves\n"
        "from .rules import PITS\n"
        "from engine.tables.index import _private_name\n"
    )
    fake = tmp_path / "fake.py"
    fake.write_text(source)
    monkeypatch.setitem(ALL, "engine.game.fake", fake)
    statements.cache_clear()
    try:
        assert imports("engine.game.fake") == {
            "engine.play",
            "engine.game.board",
            "engine.game.moves",
            "engine.game.rules",
            "engine.tables.index",
        }
        assert ("engine.tables.index", "_private_name", True) in statements("engine.game.fake")
    finally:
        statements.cache_clear()


def test_the_layers_are_found_by_the_longest_declared_name():
    assert unit("engine.exact.graph") == "engine.exact"
    assert unit("engine") == "engine"
    assert unit("pipeline.study.report.sections.cells") == "pipeline.study"
    assert unit("pipeline.commands") == "pipeline"


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _absolute(module: str, node: ast.ImportFrom) -> str:
    """The dotted module a ``from ... import`` reads from, relative levels resolved."""
    if not node.level:
        return node.module or ""
    package = module if ALL[module].name == "__init__.py" else module.rpartition(".")[0]
    parts = package.split(".")
    base = ".".join(parts[: len(parts) - node.level + 1])
    return f"{base}.{node.module}" if node.module else base


def _module_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements run on import: the body, and what sits in its if, try and with blocks,
    but not what sits in a function or a class."""
    found: list[ast.stmt] = []
    for node in body:
        found.append(node)
        if isinstance(node, ast.If | ast.With):
            found += _module_level(node.body) + _module_level(getattr(node, "orelse", []))
        elif isinstance(node, ast.Try):
            blocks = [node.body, node.orelse, node.finalbody, *(handler.body for handler in node.handlers)]
            found += [statement for block in blocks for statement in _module_level(block)]
    return found


def _strongly_connected(edges: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's strongly connected components (recursive: a package has a few dozen modules)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for name in sorted(edges[module]):
            if name not in index:
                visit(name)
                low[module] = min(low[module], low[name])
            elif name in stack:
                low[module] = min(low[module], index[name])
        if low[module] == index[module]:
            group = {stack.pop()}
            while module not in group:
                group.add(stack.pop())
            groups.append(group)

    for module in sorted(edges):
        if module not in index:
            visit(module)
    return groups


def _cycle_through(start: str, group: set[str], edges: dict[str, set[str]]) -> list[str]:
    """A shortest path from ``start`` back to itself inside ``group`` (breadth first)."""
    paths = {name: [start, name] for name in sorted(edges[start] & group)}
    todo = list(paths)
    while start not in paths:
        module = todo.pop(0)
        for name in sorted(edges[module] & group):
            if name not in paths:
                paths[name] = [*paths[module], name]
                todo.append(name)
    return paths[start]
