"""What the engine keeps of a rule set between calls, and engine.release_caches giving it back
(engine.store.memory): an atlas worker goes through rule sets one after the other and holds one
at a time only if every module that keeps a rule set's memory registered how to forget it.

The fast tests check the registry itself: every functools cache of the engine keyed by a rule
set (or by its tables, its index or its stones) is registered, and after a small rule set has
gone through everything that keeps something (batched play with tables and with mcts, replay,
the solver, the policy tables, the exact outcome, the scalar game), release_caches leaves
nothing of it in any cache or module-level dict.

The slow test measures it: a process's resident memory after building and loading what an atlas
worker holds for a rule set (its position tables, its solution, the policy tables of a table
strategy, its scalar positions) and after release_caches. It runs at 7 stones a pit, not 8: at
8 stones the build took 3 min 41 s and 3.6 GB at its peak on a shared 2-core machine (2.0 GB
resident once built, 1.8 GB loaded from the cache folder), over the 3 minutes a test may take;
at 7 stones it takes about a minute, 1.6 GB at its peak, 0.9 GB resident once built and 0.7 GB
loaded. release_caches gave back all of it at both sizes.
"""

from __future__ import annotations

import gc
import importlib
import inspect
import pkgutil
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import psutil
import pytest

import engine
from engine.exact import exact_outcome
from engine.game import Positions
from engine.play import replay
from engine.play.mcts import Board as SearchBoard
from engine.players import PolicyTable, solution
from engine.solver import Solution
from engine.store.memory import FORGETTERS
from engine.tables import PositionTables, kept_tables, position_count, table_rules

# A rule set no other test plays, so that whatever of it is alive after release_caches was kept by the engine.
SMALL = engine.Rules(stones_per_pit=2, sow_origin=False, capture_counts=(2, 3))
LARGE = engine.Rules(stones_per_pit=7)  # 8 is too slow to build in a test: see the module's docstring
# What holds a rule set's memory, each knowing its rule set (``rules``).
HOLDERS = (PositionTables, Solution, PolicyTable, Positions, SearchBoard)
# A functools cache is keyed by a rule set when one of its parameters is one of these, by type or by name.
KEYED_TYPES = ("Rules", "PositionTables", "BoardIndex", "Solution")
KEYED_NAMES = ("rules", "tables", "index", "total", "total_stones")
MIB = 1 << 20


def test_every_cache_keyed_by_a_rule_set_is_registered():
    registered = set(map(_owner, FORGETTERS))
    keyed = {name: cache for name, cache in _caches() if _keyed_by_a_rule_set(cache)}
    assert keyed, "found no cache keyed by a rule set: the scan is broken"
    assert [name for name, cache in keyed.items() if id(cache) not in registered] == []


def test_release_caches_empties_every_cache_a_small_rule_set_filled(cache):
    engine.release_caches()
    _load_everything(SMALL)
    filled = [forget for forget in FORGETTERS if _held(forget)]
    assert len(filled) >= 8, f"only {len(filled)} of {len(FORGETTERS)} registered caches were filled"
    engine.release_caches()
    assert [_describe(forget) for forget in FORGETTERS if _held(forget)] == []
    assert list(_module_dicts_holding(SMALL)) == []
    assert list(_alive(SMALL)) == []


@pytest.mark.slow
def test_release_caches_gives_back_the_memory_of_an_atlas_workers_rule_set(cache):
    engine.release_caches()
    before = _resident()
    _load_what_an_atlas_worker_holds(LARGE)  # built into the test's cache folder
    built = _resident()
    start_value = solution(LARGE).start_value()
    assert kept_tables(LARGE).size == position_count(LARGE.total_stones)
    engine.release_caches()
    after_build = _resident()
    _load_what_an_atlas_worker_holds(LARGE)  # the second time from the cache folder
    loaded = _resident()
    assert solution(LARGE).start_value() == start_value
    engine.release_caches()
    after_load = _resident()
    for added, given_back in ((built - before, built - after_build), (loaded - after_build, loaded - after_load)):
        assert added > 300 * MIB, f"loading added only {added / MIB:.0f} MiB"
        assert given_back >= 0.8 * added, f"release_caches gave back {given_back / MIB:.0f} of {added / MIB:.0f} MiB"


def _load_what_an_atlas_worker_holds(rules: engine.Rules) -> None:
    kept_tables(rules)
    solution(rules)  # kept by engine.players.search for the perfect player's policy
    engine.policy_table("perfect", rules)
    engine.policy_table("greedy", rules)
    engine.play_game("random", "random", rules=rules, seed=1)  # the scalar positions of one game


def _load_everything(rules: engine.Rules) -> None:
    _load_what_an_atlas_worker_holds(rules)
    batch = engine.play_batch(20, "perfect", "greedy", rules=rules, seed=2)
    engine.play_batch(4, "mcts(playouts=8)", "random", rules=rules, seed=3)
    replay(rules, batch.moves, batch.move_offsets)
    engine.solve(rules, cap=rules.ply_cap // 2, progress=False)
    exact_outcome("random", "greedy", rules=rules)


def _caches() -> Iterator[tuple[str, Any]]:
    """Every functools cache defined at the top of an engine module, by its dotted name."""
    for module in _engine_modules():
        for name, value in vars(module).items():
            if hasattr(value, "cache_clear") and hasattr(value, "__wrapped__") and value.__module__ == module.__name__:
                yield f"{module.__name__}.{name}", value


def _keyed_by_a_rule_set(cache: Any) -> bool:
    parameters = inspect.signature(cache.__wrapped__).parameters.values()
    keys = [(parameter.name, str(parameter.annotation)) for parameter in parameters]
    return any(name in KEYED_NAMES or any(kind in annotation for kind in KEYED_TYPES) for name, annotation in keys)


def _module_dicts_holding(rules: engine.Rules) -> Iterator[str]:
    """The module-level dicts of the engine with an entry of ``rules``: a key or value that is the
    rule set, or holds it, or holds a dict that does."""
    ours = {rules, table_rules(rules)}
    for module in _engine_modules():
        for name, value in vars(module).items():
            if isinstance(value, dict) and any(_of(item, ours) for pair in value.items() for item in pair):
                yield f"{module.__name__}.{name}"


def _of(item: object, ours: set[engine.Rules]) -> bool:
    if isinstance(item, tuple | list):
        return any(_of(part, ours) for part in item)
    if isinstance(item, dict):
        return any(_of(part, ours) for pair in item.items() for part in pair)
    return item in ours if isinstance(item, engine.Rules) else getattr(item, "rules", None) in ours


def _alive(rules: engine.Rules) -> Iterator[str]:
    """What is still alive anywhere in the process of the tables, solutions, policy tables and
    positions of ``rules`` (the dicts kept by id() of position tables go with them)."""
    gc.collect()
    ours = {rules, table_rules(rules)}
    for found in gc.get_objects():
        if isinstance(found, HOLDERS) and found.rules in ours:
            yield f"{type(found).__name__} of {found.rules.name}"


def _engine_modules() -> Iterator[ModuleType]:
    for found in pkgutil.walk_packages(engine.__path__, "engine."):
        yield importlib.import_module(found.name)


def _owner(forget: Callable[[], None]) -> int:
    """The id of what a registered way to forget clears: a cache, or a dict."""
    return id(getattr(forget, "__self__", forget))


def _held(forget: Callable[[], None]) -> int:
    owner = getattr(forget, "__self__", None)
    if hasattr(owner, "cache_info"):
        return int(owner.cache_info().currsize)
    return len(owner) if isinstance(owner, dict) else 0


def _describe(forget: Callable[[], None]) -> str:
    owner = getattr(forget, "__self__", forget)
    return getattr(owner, "__qualname__", repr(forget)[:80])


def _resident() -> int:
    gc.collect()
    return int(psutil.Process().memory_info().rss)
