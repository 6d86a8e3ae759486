"""The layers of the code, read from the import statements of every module of engine and pipeline.

The engine's modules import one another without a cycle, and nothing of pipeline: the rules
stand apart from the runner (STYLE.md, habit 4). For the engine every import statement counts,
wherever it is written (at module level, inside a function, under ``if TYPE_CHECKING:``): a
lazy import or one for the type checker still says that one module needs the other, so none
may hide a cycle, and the engine needs none. pipeline keeps a few imports inside functions on
purpose (the ``modiar`` command loads only what a subcommand needs), so among its modules only
the module-level imports must be free of cycles.

``from engine import x`` is an import of the module engine.x when there is one, else of the
package (engine/__init__.py), which imports every public module.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "pipeline")
# What the strategy base stands on: nothing that searches, solves or plays whole games.
STRATEGY_BASE_IMPORTS = {"engine.board", "engine.deprecation", "engine.events", "engine.moves", "engine.rng", "engine.rules"}
# The checked rules API answers from the rules alone: no search, no solver, no position tables.
ABOVE_THE_API = {"engine.search", "engine.solver", "engine.tables", "engine.registry", "engine.batch", "engine.game"}


def modules(package: str) -> dict[str, Path]:
    """Every module of a package by dotted name, the package and its subpackages included."""
    found = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


ALL = {name: path for package in PACKAGES for name, path in modules(package).items()}


@cache
def imports(module: str, *, module_level_only: bool = False) -> frozenset[str]:
    """The engine and pipeline modules that ``module`` imports."""
    tree = ast.parse(ALL[module].read_text(), filename=str(ALL[module]))
    nodes = _module_level(tree.body) if module_level_only else ast.walk(tree)
    found = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, node)
            found.update(f"{base}.{alias.name}" if f"{base}.{alias.name}" in ALL else base for alias in node.names)
    return frozenset(name for name in found if name in ALL and name != module)


def graph(package: str, *, module_level_only: bool = False) -> dict[str, set[str]]:
    """Each module of ``package`` and the modules of that package it imports."""
    return {
        module: {name for name in imports(module, module_level_only=module_level_only) if _package(name) == package}
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


def test_every_module_is_read():
    assert {"engine", "engine.api", "engine.registry", "engine.strategy_base", "pipeline.study.run"} <= set(ALL)


def test_the_engine_imports_nothing_of_pipeline():
    offending = {module: sorted(name for name in imports(module) if _package(name) == "pipeline") for module in modules("engine")}
    assert not {module: names for module, names in offending.items() if names}


def test_the_engine_modules_import_one_another_without_a_cycle():
    assert cycles(graph("engine")) == []


def test_the_pipeline_modules_import_one_another_without_a_cycle_at_module_level():
    assert cycles(graph("pipeline", module_level_only=True)) == []


# The rooms of pipeline (ARCHITECTURE.md): the products, each a folder; the doors, which parse a
# command or time the products and so may call any of them; and the shared modules below both.
PRODUCTS = ("study", "ladder", "atlas")
DOORS = {"pipeline.cli", "pipeline.commands", "pipeline.bench", "pipeline.estimates"}


def product(module: str) -> str | None:
    """The product whose folder holds ``module`` (pipeline.study.run: study), None for the rest."""
    parts = module.split(".")
    return parts[1] if parts[0] == "pipeline" and len(parts) > 1 and parts[1] in PRODUCTS else None


def test_every_product_has_its_folder():
    assert {product(module) for module in modules("pipeline")} == {None, *PRODUCTS}


def test_the_shared_modules_import_no_product():
    """What the products share (config, run folders, records, workers, progress, statistics,
    figures, render, exact) knows none of them, lazily or not: a product can change alone."""
    offending = {
        module: sorted(name for name in imports(module) if product(name))
        for module in modules("pipeline")
        if product(module) is None and module not in DOORS
    }
    assert {module: names for module, names in offending.items() if names} == {}


def test_no_product_imports_another():
    offending = {
        module: sorted(name for name in imports(module) if product(name) not in (None, product(module)))
        for module in modules("pipeline")
        if product(module)
    }
    assert {module: names for module, names in offending.items() if names} == {}


def test_the_strategy_base_is_a_leaf():
    assert reachable("engine.strategy_base", graph("engine")) <= STRATEGY_BASE_IMPORTS


@pytest.mark.parametrize(("lower", "upper"), [("engine.strategies", "engine.search"), ("engine.search", "engine.strategies")])
def test_the_one_draw_strategies_and_the_search_strategies_stand_apart(lower, upper):
    assert upper not in reachable(lower, graph("engine"))


def test_the_checked_api_stands_below_the_solver_and_the_search():
    assert not reachable("engine.api", graph("engine")) & ABOVE_THE_API


def test_cycles_are_found():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"d"}, "e": {"a"}}
    assert sorted(cycles(edges)) == [["a", "b", "c", "a"], ["d", "d"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_from_package_import_reads_as_the_module_or_the_package(tmp_path, monkeypatch):
    source = "from engine import board, Rules\nimport engine.moves\nfrom .rules import PITS\n"
    fake = tmp_path / "fake.py"
    fake.write_text(source)
    monkeypatch.setitem(ALL, "engine.fake", fake)
    imports.cache_clear()
    try:
        assert imports("engine.fake") == {"engine.board", "engine", "engine.moves", "engine.rules"}
    finally:
        imports.cache_clear()


def _package(module: str) -> str:
    return module.partition(".")[0]


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
