"""The cache folder's one list of what it holds (engine.store.cache.KINDS and SCRATCH): every subfolder
a writer makes in the cache folder is in it, found by reading the writers' code, so that a new
kind of cache file cannot be left out of what ``modiar cache show`` lists and ``clear`` removes."""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import TypeGuard

from engine.store.cache import KINDS, SCRATCH
from pipeline.runs.paths import ROOT


def test_every_subfolder_a_writer_makes_in_the_cache_folder_is_in_the_list():
    made = dict(subfolders_made())
    assert set(made.values()) == {kind.folder for kind in KINDS} | {SCRATCH}, made


def test_the_writers_take_their_subfolders_name_from_the_list():
    literal = [where for where, (module, join) in joins() if isinstance(join, ast.Constant)]
    assert literal == [], f"these join a name of their own onto the cache folder: {literal}"


def subfolders_made() -> Iterator[tuple[str, str]]:
    """Where each join onto the cache folder is (module:line), and the subfolder it names."""
    for where, (module, join) in joins():
        name = eval(compile(ast.Expression(join), where, "eval"), vars(importlib.import_module(module)))
        assert isinstance(name, str), f"{where} joins {ast.unparse(join)} onto the cache folder, not a folder's name"
        yield where, name


def joins() -> Iterator[tuple[str, tuple[str, ast.expr]]]:
    """Every ``folder / X`` in engine/ and pipeline/ whose ``folder`` is the cache folder: a call
    of cache_folder(), a name bound to one in the same function, or a parameter named ``cache``
    (as the engine's workers receive it). An f-string joined on names a file, not a subfolder."""
    for path in sorted([*(ROOT / "engine").rglob("*.py"), *(ROOT / "pipeline").rglob("*.py")]):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for function in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                for node in _joins_in(function):
                    yield f"{path.relative_to(ROOT)}:{node.lineno}", (module, node.right)


def _joins_in(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.BinOp]:
    names = {argument.arg for argument in (*function.args.args, *function.args.kwonlyargs) if argument.arg == "cache"}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and _is_cache_folder(node.value):
            names |= {target.id for target in node.targets if isinstance(target, ast.Name)}
    for node in ast.walk(function):
        if _is_join(node) and (_is_cache_folder(node.left) or (isinstance(node.left, ast.Name) and node.left.id in names)):
            yield node


def _is_join(node: ast.AST) -> TypeGuard[ast.BinOp]:
    """Whether ``node`` joins a path onto a folder: ``folder / X``, X no f-string (a file's name)."""
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and not isinstance(node.right, ast.JoinedStr)


def _is_cache_folder(node: ast.expr) -> bool:
    """Whether ``node`` is a call of cache_folder (engine's, or the command line's, pipeline.runs.paths)."""
    if not isinstance(node, ast.Call):
        return False
    called = node.func
    return (isinstance(called, ast.Name) and called.id == "cache_folder") or (
        isinstance(called, ast.Attribute) and called.attr == "cache_folder"
    )


def test_the_scan_finds_the_writers_it_reads():
    """The scan above reads the writers' code: it finds a join in each module that writes a kind."""
    modules = {where.partition(":")[0] for where, _ in subfolders_made()}
    writers = {str(Path("engine") / "tables" / "positions.py"), str(Path("pipeline") / "search_ladder" / "run.py")}
    assert writers <= modules, modules
