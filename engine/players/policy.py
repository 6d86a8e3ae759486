"""Policy tables: what a table strategy plays in every position of a rule set, and with what chances.

Every strategy but ``mcts`` is a *table strategy*: it gives each legal move a value (its q),
turns the values into cuts on one 32-bit draw by its rule (``engine.players.choice``), and takes one
draw per turn. Its choice in a position depends only on the position's *key* (its legal pits
and the gaps between the values of its moves) and, near the cap, on the plies left. The values:

    random          0 for every move: uniform among the legal moves
    greedy          the stones the move captures
    heuristic       128 * (capture - the largest capture the opponent can answer with, none
                    at the last ply) + the stones on the mover's row after the move (the
                    scalar strategy's tie-break)
    alphabeta(d)    capture - V_j(child), j = min(d, plies left) - 1: V_j is the value of the
                    depth-limited negamax, whose horizon counts own row minus opponent's row
                    as the cap does; so it is the solver's V_j (engine.solver.solution), got here by
                    d - 1 sweeps of its recursion over every position (``sweep_values``)
    perfect(...)    capture - V_(k - 1)(child) with k plies left, from the strong solution;
                    ``perfect(epsilon=e)`` and ``perfect(temperature=t)`` share these values
                    and differ only in their rule
    perfect(ties=hurry)   2**16 * perfect's value of the move, minus the child's remoteness
                    (engine.solver.remoteness) where the position's value is >= 0, plus it where
                    < 0: a best move, the quickest end for the side ahead; a table of its own

A policy table holds, with positions numbered as ``engine.tables.positions`` does (mover's view):

    keys[c]            the key of class c (classes are numbered as they are met)
    far[i]             the class of position i whenever at least ``far_from`` plies are left,
                       or VARIES where that class changes with the plies left
    varying[v]         the positions marked VARIES, ascending, and
    varying_classes[v, k - far_from]    their class with k plies left (far_from <= k < cap)
    first              the class of the first move (ply 0: its captures may be forfeited, so
                       its moves are those of engine.tables.first_move, not the start's row of the tables)
    cuts1, cuts2, cuts3[c]   the cuts of class c under the strategy's rule (engine.players.choice)

``classes_at(positions, plies_left)`` gives the classes of positions, ``pits(classes, draws)``
the pits the draws choose (what engine.play_batch plays) and ``chances(classes)`` the exact
probability of each pit times 2**32.

``far_from`` is 1 for random and greedy, 2 for heuristic, d for alphabeta(d) and cap // 2 for
perfect, whose VARIES are the positions with a move to a position that never settles (its
value cycles with the plies left; engine.solver.solution). Closer to the cap the classes are computed
from the values of the moves at that many plies left (``classes_at``): rare, as games seldom
come near the cap, and exact all the same. For perfect's values ``settled()`` gives, from the
solution's log, the plies left from which each position keeps its far class (no child's value
changes from there on), so that classes_at computes the keys of the others only.

Everything above but the cuts, and for alphabeta the sweeps' log of values, is kept in the
``policies/`` folder of the caller's cache folder (``engine.store.cache``), one file per rule set and
family of values (``perfect`` serves every ``perfect(...)``), keyed by the rule set's name, the
values' spec and the engine version, and sealed with what they hold (``engine.store.integrity``).
The cuts depend on the rule only and are made when a table is loaded. A
loaded ``perfect`` table needs the solution only near the cap, where it loads it.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from engine.game import Rules, check_rules, start_board
from engine.players.base import EngineStrategy, PolicyValues, Strategy
from engine.players.choice import ARGMAX, Rule, pack_keys
from engine.players.numbering import Numbering
from engine.players.registry import make_strategy
from engine.players.values import Solved
from engine.solver import ValueLog
from engine.store import ENGINE_VERSION, POLICIES, DamagedFileError, cache_folder, forget_with, read_arrays, write_arrays
from engine.tables import CONFIGURED, FirstMoves, PositionTables, first_moves, kept_tables, load_tables, table_rules

log = logging.getLogger(__name__)
BLOCK = 1 << 20  # positions keyed at a time, so that the temporaries stay small
CLASS_TYPES = (np.uint16, np.uint32)  # far[] takes the first that numbers every class and VARIES


class NotATableStrategyError(ValueError):
    """A strategy whose choice is no function of the position: it has no policy table."""


@dataclass(eq=False)
class PolicyArrays:
    """What a cache file holds (besides alphabeta's sweeps); see the module docstring."""

    far: np.ndarray
    far_from: int
    varying: np.ndarray
    varying_classes: np.ndarray
    keys: list[int]
    first: int


@dataclass(eq=False)
class PolicyTable(PolicyArrays):
    """The policy of one table strategy under one rule set (see the module docstring)."""

    spec: str
    rules: Rules
    tables: PositionTables
    values: PolicyValues
    rule: Rule
    cuts1: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    cuts2: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    cuts3: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    _numbers: dict[int, int] = field(default_factory=dict)
    _settled: np.ndarray | None = None

    def __post_init__(self) -> None:
        self._numbers = {key: number for number, key in enumerate(self.keys)}
        self._cut(len(self.keys))

    @property
    def follows_solution(self) -> bool:
        """Whether its values are perfect's, read from the solution (engine.players.near_cap follows its
        classes near the cap down the solution's log), rather than swept or heuristic."""
        return isinstance(self.values, Solved) and not self.values.swept and not self.values.hurries

    @property
    def varies(self) -> int:
        """The class number that marks a position of ``far`` as VARIES."""
        return int(np.iinfo(self.far.dtype).max)

    def settled(self) -> np.ndarray | None:
        """For ``perfect``'s values (and ``perfect(ties=hurry)``'s), each position's least plies
        left k (>= 1) such that its class with any k' plies left, k <= k' < far_from, is its far
        class (positions marked VARIES aside); None for the other values (made on first use, from
        the solution's log, and for hurry's from the remoteness's too)."""
        if self._settled is None and isinstance(self.values, Solved) and not self.values.swept:
            self._settled = self.values.settled_from()
        return self._settled

    def sparse_floor(self) -> int:
        """The plies left down to which engine.exact.outcome propagates by sparse products: 1 (the cap)
        for perfect's values, whose settled() says which positions to correct at each plies
        left; far_from for the others, whose last plies merge the children of the states in play."""
        return 1 if self.settled() is not None and self.far_from > 1 else self.far_from

    def unsettled(self, floor: int) -> np.ndarray:
        """A mask over positions: those whose class may differ from their far class with some
        plies left from ``floor`` to the cap: VARIES, and settled above ``floor``."""
        mask: np.ndarray = self.far == self.varies
        settled = self.settled()
        if settled is not None and floor < self.far_from:
            mask |= settled > floor
        return mask

    def unsettled_below(self, positions: np.ndarray) -> np.ndarray:
        """For each position, the plies left below which its class may differ from its far
        class: settled() (at most far_from), and above the cap for VARIES (always)."""
        positions = np.asarray(positions, dtype=np.int64)
        settled = self.settled() if len(positions) else None  # made on first use: not for nothing
        below = np.zeros(len(positions), dtype=np.int32) if settled is None else settled[positions].astype(np.int32)
        below[self.far[positions] == self.varies] = self.rules.ply_cap + 1
        return below

    def classes_at(self, positions: np.ndarray, plies_left: int) -> np.ndarray:
        """The class of each position (ply > 0, mover's view) with ``plies_left`` plies left (>= 1)."""
        positions = np.asarray(positions, dtype=np.int64)
        if plies_left < self.far_from:
            settled = self.settled()
            if settled is None:
                return self.classes_of_keys(self._keys(positions, plies_left))
            # Only the positions not yet settled need their keys: the others keep their far class.
            near: np.ndarray = self.far[positions].astype(np.int64)
            fresh = np.flatnonzero((near == self.varies) | (settled[positions] > plies_left))
            if len(fresh):
                near[fresh] = self.classes_of_keys(self._keys(positions[fresh], plies_left))
            return near
        classes: np.ndarray = self.far[positions].astype(np.int64)
        varies = np.flatnonzero(classes == self.varies)
        if len(varies):
            rows = np.searchsorted(self.varying, positions[varies])
            classes[varies] = self.varying_classes[rows, plies_left - self.far_from]
        return classes

    def pits(self, classes: np.ndarray, draws: np.ndarray) -> np.ndarray:
        """The pit (mover's view; engine.players.choice.NO_MOVE without a move) each draw chooses."""
        draws = np.asarray(draws, dtype=np.int64)
        pits: np.ndarray = (draws >= self.cuts1[classes]).view(np.uint8)
        pits += draws >= self.cuts2[classes]
        pits += 2 * (draws >= self.cuts3[classes]).view(np.uint8)
        return pits

    def chances(self, classes: np.ndarray) -> np.ndarray:
        """The (m, 3) int64 widths of the cuts of each class: pit p's probability times 2**32."""
        c1, c2, c3 = self.cuts1[classes], self.cuts2[classes], self.cuts3[classes]
        return np.stack([c1, c2 - c1, c3 - c2], axis=1)

    def first_class(self, first: FirstMoves) -> int:
        """The class of the first move from ``first``'s start: ``first`` (the rule set's own
        start) or, from another start, its key numbered as any other."""
        if first.board == start_board(self.rules):
            return self.first
        return int(self.classes_of_keys(first_key(self.values, first, self.rules.ply_cap))[0])

    def classes_of_keys(self, keys: np.ndarray) -> np.ndarray:
        """The class number of each key, numbering (and cutting) the keys not met before."""
        unique, inverse = np.unique(keys, return_inverse=True)
        numbers = np.empty(len(unique), dtype=np.int64)
        for i, key in enumerate(unique.tolist()):
            number = self._numbers.get(key)
            if number is None:
                number = self._numbers[key] = len(self.keys)
                self.keys.append(key)
            numbers[i] = number
        self._cut(len(self.keys))
        return numbers[inverse.reshape(-1)]

    def _keys(self, positions: np.ndarray, plies_left: int) -> np.ndarray:
        child = self.tables.child[positions]
        q = self.values.q(self.tables.captured[positions].astype(np.int64), child, plies_left)
        return pack_keys(child >= 0, q)

    def _cut(self, count: int) -> None:
        """Cut the classes from len(cuts1) up to ``count`` by the rule."""
        have = len(self.cuts1)
        if count <= have:
            return
        cuts = np.array([self.rule.cuts(key) for key in self.keys[have:count]], dtype=np.int64).reshape(-1, 3)
        self.cuts1 = np.concatenate([self.cuts1, cuts[:, 0]])
        self.cuts2 = np.concatenate([self.cuts2, cuts[:, 1]])
        self.cuts3 = np.concatenate([self.cuts3, cuts[:, 2]])


def is_table_strategy(strategy: str | Strategy) -> bool:
    """Whether ``strategy`` (a spec or the engine's object) has a policy table: every strategy of
    the engine but mcts. An unknown spec raises UnknownStrategyError."""
    return _has_table(make_strategy(strategy))


def _has_table(strategy: Strategy) -> bool:
    return isinstance(strategy, EngineStrategy) and strategy.has_policy_table


def policy_table(
    strategy: str | Strategy, rules: Rules, *, tables: PositionTables | None = None, cache: Path | None = CONFIGURED
) -> PolicyTable:
    """The policy table of ``strategy`` under ``rules``, from the cache when it holds a sound
    copy, else built (seconds; ``perfect`` needs the solution) and cached.

    ``tables`` are the position tables of ``rules`` (else those of engine.tables.positions.kept_tables,
    or built in memory when ``cache`` is None);
    ``cache`` a folder of policy tables, by default the ``policies/`` folder of the engine's
    cache folder, None to build in memory. A second call with the same position tables returns
    the same object; the tables of another rule set start afresh.
    """
    check_rules(rules)
    resolved = make_strategy(strategy)
    values_spec(resolved)  # refuses a strategy without a table
    if tables is None:
        tables = load_tables(table_rules(rules), None) if cache is None else kept_tables(rules)
    if table_rules(tables.rules) != table_rules(rules):
        raise ValueError(f"the tables are those of {tables.rules.name}, not of the rules asked for, {rules.name}")
    assert isinstance(resolved, EngineStrategy)  # values_spec refused any other
    rule = resolved.rule if resolved.rule is not None else ARGMAX
    kept, memo = _LOADED.get("tables", (None, {}))
    if kept is not tables:  # keep the tables of one rule set, as engine.play_batch does
        memo = {}
        _LOADED["tables"] = (tables, memo)
    found = memo.get((resolved.spec, rules))
    if found is None:
        values = _values_of(resolved, rules, tables)
        stored = _load_or_build(values, rules, tables, cache)
        found = PolicyTable(**_fields_of(stored), spec=resolved.spec, rules=rules, tables=tables, values=values, rule=rule)
        memo[(resolved.spec, rules)] = found
    return found


def policies_folder() -> Path | None:
    """The folder of policy tables in the engine's cache folder, None when the engine builds in memory."""
    folder = cache_folder()
    return None if folder is None else folder / POLICIES.folder


def policy_path(strategy: str | Strategy, rules: Rules, cache: Path) -> Path:
    """Where the policy table of a table strategy under ``rules`` is kept in a folder of policy
    tables: one file per family of values (every ``perfect(...)`` shares the one of ``perfect``)."""
    slug = re.sub(r"[^a-z0-9]+", "-", values_spec(strategy).lower()).strip("-")
    return cache / f"{rules.name}-{slug}-engine{ENGINE_VERSION}.npz"


def values_spec(strategy: str | Strategy) -> str:
    """The spec of a table strategy without its rule: the family of values its table holds."""
    resolved = make_strategy(strategy)
    if not _has_table(resolved):
        raise NotATableStrategyError(
            f"strategy {resolved.spec!r} has no policy table: its choice depends on more than the position and one draw"
        )
    assert isinstance(resolved, EngineStrategy)  # _has_table
    return resolved.values_spec()


def _values_of(strategy: Strategy, rules: Rules, tables: PositionTables) -> PolicyValues:
    values = strategy.policy_values(tables, rules) if isinstance(strategy, EngineStrategy) else None
    if values is None:
        raise NotATableStrategyError(f"strategy {strategy.spec!r} has no values for a policy table")
    return values


# The position tables last asked about, and their policy tables by spec and rule set: the tables
# of another rule set replace them, so that a process going through rule sets holds one at a time.
_LOADED: dict[str, tuple[PositionTables, dict[tuple[str, Rules], PolicyTable]]] = {}
forget_with(_LOADED.clear)


# ---------------------------------------------------------------------------------------------
# Building and caching


ARRAYS = tuple(field.name for field in fields(PolicyArrays))
LOG_ARRAYS = ("offsets", "change_plies", "change_values", "final")


def _load_or_build(values: PolicyValues, rules: Rules, tables: PositionTables, cache: Path | None) -> PolicyArrays:
    cache = policies_folder() if cache is CONFIGURED else cache
    path = None if cache is None else policy_path(values.spec, rules, cache)  # values.spec is values_spec(strategy)
    found = None if path is None else _read(path, tables, values, rules)
    if found is not None:
        return found
    started = time.perf_counter()
    built = _build(values, rules, tables)
    if path is not None:
        _write(path, built, values, rules)
        log.info(
            "built the policy table of %s under %s in %.1f s: %s", values.spec, rules.name, time.perf_counter() - started, path
        )
    return built


def _build(values: PolicyValues, rules: Rules, tables: PositionTables) -> PolicyArrays:
    """far[] at far_from plies left (perfect: at cap - 1, with the positions that vary marked),
    block by block, so that no array of a key per position is ever made."""
    far_from = min(values.far_from, rules.ply_cap)
    plies_left = max(far_from, rules.ply_cap - 1)
    if isinstance(values, Solved):
        values.hold(min(plies_left - 1, values.top))
    numbering = Numbering()
    far = np.empty(tables.size, dtype=np.uint32)
    for start in range(0, tables.size, BLOCK):
        block = slice(start, min(start + BLOCK, tables.size))
        child = tables.child[block]
        far[block] = numbering(pack_keys(child >= 0, values.q(tables.captured[block].astype(np.int64), child, plies_left)))
    if isinstance(values, Solved):
        values.release()
    varying = _varying(values, rules, tables, far_from)
    # In the narrowest class type from the start (a position and ply each: 1.4 GB in uint16 for the
    # 3.6 M varying positions of modiar-stones6-originoff-rowsown), widened only if the classes outgrow it.
    varying_classes = np.empty((len(varying), max(0, rules.ply_cap - far_from)), dtype=CLASS_TYPES[0])
    if len(varying):
        child = tables.child[varying]
        captured = tables.captured[varying].astype(np.int64)
        plies = range(far_from, rules.ply_cap)
        for k in values.walk(plies) if isinstance(values, Solved) else plies:
            classes = numbering(pack_keys(child >= 0, values.q(captured, child, k)))
            if len(numbering.keys) >= np.iinfo(varying_classes.dtype).max:
                varying_classes = varying_classes.astype(_class_type(len(numbering.keys)))
            varying_classes[:, k - far_from] = classes
    first = int(numbering(first_key(values, first_moves(rules), rules.ply_cap))[0])
    class_type = _class_type(len(numbering.keys))
    far = far.astype(class_type)
    far[varying] = np.iinfo(class_type).max
    return PolicyArrays(far, far_from, varying, varying_classes.astype(class_type, copy=False), numbering.keys, first)


def _class_type(classes: int) -> type[np.unsignedinteger]:
    """The narrowest of CLASS_TYPES that numbers ``classes`` classes and VARIES, its maximum."""
    return next(t for t in CLASS_TYPES if classes < np.iinfo(t).max)


def first_key(values: PolicyValues, first: FirstMoves, cap: int) -> np.ndarray:
    """The key of a first move, from the moves of ply 0 (engine.tables.first_move): their captures may
    be forfeited, so they are not the start's row of the tables."""
    child, captured = (column[None, :] for column in first.by_pit())
    return pack_keys(child >= 0, values.q(captured, child, cap))


def _varying(values: PolicyValues, rules: Rules, tables: PositionTables, far_from: int) -> np.ndarray:
    """The positions whose class may change between far_from and cap - 1 plies left: for
    perfect, those with a move to a position whose value changes between far_from - 1 and
    cap - 2 plies left. Other strategies' classes do not change there."""
    if not isinstance(values, Solved) or values.top < rules.ply_cap or far_from >= rules.ply_cap - 1:
        return np.empty(0, dtype=np.int64)
    changes = values.changing(far_from - 1, rules.ply_cap - 2)  # a last entry, False, for child -1: no move
    varies = changes[tables.child[:, 0]] | changes[tables.child[:, 1]] | changes[tables.child[:, 2]]
    return np.flatnonzero(varies)


def identity(values_spec: str, rules: Rules) -> dict[str, str]:
    """What the file of a family of values' policy table under ``rules`` says it holds (engine.store.integrity)."""
    return {"kind": "policy table", "values": values_spec, "rules": rules.name, "engine": ENGINE_VERSION}


def _read(path: Path, tables: PositionTables, values: PolicyValues, rules: Rules) -> PolicyArrays | None:
    try:
        arrays = read_arrays(path, identity(values.spec, rules), ARRAYS)
    except DamagedFileError as error:
        log.warning("%s; building it again", error)
        return None
    if arrays is None:
        return None
    if len(arrays["far"]) != tables.size:  # sealed, so only a bug of ours could do this
        log.warning("%s holds a table of another size than its rule set's; building it again", path)
        return None
    if isinstance(values, Solved) and values.swept and set(LOG_ARRAYS) <= set(arrays):
        values.sweeps = ValueLog(values.top, tables.index.total, *(arrays[name] for name in LOG_ARRAYS))
    return PolicyArrays(
        arrays["far"],
        int(arrays["far_from"]),
        arrays["varying"],
        arrays["varying_classes"],
        arrays["keys"].tolist(),
        int(arrays["first"]),
    )


def _write(path: Path, built: PolicyArrays, values: PolicyValues, rules: Rules) -> None:
    arrays = {
        name: np.asarray(value, dtype=np.int64) if name == "keys" else np.asarray(value)
        for name, value in _fields_of(built).items()
    }
    if isinstance(values, Solved) and values.swept and values.sweeps is not None:
        arrays.update({name: getattr(values.sweeps, name) for name in LOG_ARRAYS})
    write_arrays(path, arrays, identity(values.spec, rules))


def _fields_of(arrays: PolicyArrays) -> dict[str, Any]:
    """The fields of PolicyArrays by name (dataclasses.asdict would copy the arrays)."""
    return {name: getattr(arrays, name) for name in ARRAYS}
