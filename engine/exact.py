"""Exact tournaments: the outcome distribution of two table strategies, with no sampling error.

Between two table strategies (engine.policy: every strategy but mcts) a game of Modiar is a
Markov chain on (position, score margin so far): each turn the mover plays pit p with the
exact probability its policy table gives (a multiple of 2**-32, the chance its one draw
gives). ``exact_outcome`` pushes the probability forward ply by ply:

    mass_0 = the first move's options, each with its chance and margin (ply 0: its captures
             may be forfeited, so it comes from engine.positions, as the tables' start does not)
    mass_(p+1)(child(i, q), m + s_p * captured(i, q)) += mass_p(i, m) * chance_p(i, q)

where s_p is +1 at South's turns (p even) and -1 at North's, and chance_p the mover's policy
with cap - p plies left (so choices that change near the cap are followed exactly). A state
whose position has no legal move, or every state at the cap, ends the game: its final margin
is m plus South's row minus North's. Each step is exact in the sense of the recurrence: the
only error is the rounding of float64 sums, far below 1e-12. Its cost is one pass over the
states alive at each ply: at most three children a state, merged by (position, margin) with a
sort; the states number a few million at the widest ply for random play.

Beside the total mass every state carries, for each tracked turn event, the mass of the paths
to it on which the event has not yet fired: zeroed by a move that fires it, that mass gives the
probability that the event fires at least once. Expected counts are sums of mass times count.
The propagation may stop once the mass still in play is below ``tolerance`` (1e-15 by
default); ``unresolved`` then says how much.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.choice import SCALE
from engine.events import END_EVENTS, EVENTS, POSITION_FLAGS, unpack_events
from engine.index import row_stones
from engine.policy import PolicyTable, policy_table
from engine.positions import positions
from engine.rules import ROW, Rules
from engine.strategy_base import Strategy
from engine.tables import END_MASK, END_SHIFT, FLAGS, PositionTables, kept_tables, table_rules

DEFAULT_RULES = Rules()
TOLERANCE = 1e-15
# The events tracked for "fires at least once" through the turns after the first: a capture,
# capture_stones and capture_pits fire together; the first move's own events and the end
# events are read off directly.
TRACKED = (*POSITION_FLAGS, "capture", "capture_own_row_stones", "capture_opponent_row_stones")
ALIASES = {"capture_stones": "capture", "capture_pits": "capture"}


@dataclass(frozen=True)
class ExactOutcome:
    """The exact outcome of ``south`` against ``north`` under ``rules`` (see the module docstring)."""

    south: str
    north: str
    rules: Rules
    south_win: float
    draw: float
    north_win: float
    margin: dict[int, float]  # final margin (South's score minus North's) -> probability
    plies: np.ndarray  # plies[k]: the probability that the game lasts exactly k plies
    event_fires: dict[str, float]  # the probability that the event fires at least once in a game
    event_mean: dict[str, float]  # its expected count per game
    unresolved: float  # the mass of games not finished when the computation stopped
    timings: dict[str, float] = field(default_factory=dict, compare=False)

    @property
    def first_player_score(self) -> float:
        """South's expected score: a win 1, a draw 1/2."""
        return self.south_win + self.draw / 2

    @property
    def mean_plies(self) -> float:
        return float(np.arange(len(self.plies)) @ self.plies)


def exact_outcome(
    south: str | Strategy,
    north: str | Strategy,
    *,
    rules: Rules = DEFAULT_RULES,
    tables: PositionTables | None = None,
    tolerance: float = TOLERANCE,
) -> ExactOutcome:
    """The exact outcome distribution of ``south`` against ``north``, two table strategies (spec
    strings or the engine's objects); a strategy without a policy table (mcts) is refused with
    engine.policy.NotATableStrategyError. ``tables`` are the position tables of ``rules`` (else
    engine.tables.kept_tables). The propagation stops at the cap, or once the mass in play is
    below ``tolerance`` (0 runs to the cap)."""
    tables = kept_tables(rules) if tables is None else tables
    if table_rules(tables.rules) != table_rules(rules):
        raise ValueError(f"the tables are those of {tables.rules.name}, not of the rules asked for, {rules.name}")
    players = (policy_table(south, rules, tables=tables), policy_table(north, rules, tables=tables))
    run = _Run(rules, tables, players)
    margins, events = run.first_move()
    for ply in range(1, rules.ply_cap):
        margins = run.end_or_move(margins, ply, events=False)
        events = run.end_or_move(events, ply, events=True)
        if not len(events.position) or events.total.sum() < tolerance:
            break
    else:
        run.stop_at_cap(margins, events, rules.ply_cap)
        events = _States.empty(len(TRACKED))
    return run.outcome(players, float(events.total.sum()), events)


@dataclass
class _States:
    """The states in play: position (mover's view), South's margin so far, their mass, and the
    mass not yet touched by each tracked event."""

    position: np.ndarray  # int64
    margin: np.ndarray  # int64
    total: np.ndarray  # float64
    untouched: np.ndarray  # (states, len(TRACKED)) float64

    @classmethod
    def empty(cls, tracked: int) -> _States:
        return cls(np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0), np.empty((0, tracked)))


class _Run:
    """The sums of one propagation: outcomes, lengths and events."""

    def __init__(self, rules: Rules, tables: PositionTables, players: tuple[PolicyTable, PolicyTable]) -> None:
        self.rules, self.tables, self.players = rules, tables, players
        self.own_row, self.other_row = row_stones(tables.index)
        captured = rules.total_stones - self.own_row - self.other_row
        self.merge = _Merger(captured)  # by position and margin
        self.merge_positions = _Merger(np.zeros_like(captured))  # by position
        self.margins: dict[int, float] = {}
        self.plies = np.zeros(rules.ply_cap + 1)
        self.event_mean = dict.fromkeys(EVENTS, 0.0)
        self.untouched_at_end = np.zeros(len(TRACKED))
        self.first_fires: dict[str, float] = {}
        self.end_fires = dict.fromkeys(END_EVENTS, 0.0)
        self.flag_bits = np.array([FLAGS[name] for name in POSITION_FLAGS])

    def first_move(self) -> tuple[_States, _States]:
        """Ply 0 from the moves of engine.positions, with South's first-move chances: the states
        by position and margin, and by position with the mass each tracked event left untouched."""
        memo = positions(self.rules)
        options = memo.options(memo.start, 0)
        start = self.tables.index.rank(memo.start)
        if not options:  # no first move: the game ends at once
            ended = _States(np.array([start]), np.zeros(1, np.int64), np.ones(1), np.ones((1, len(TRACKED))))
            self._end(ended, 0)
            self._score(_select(ended, np.array([0]), columns=False), 0)
            return _States.empty(0), _States.empty(len(TRACKED))
        chances = self.players[0].chances(np.array([self.players[0].first]))[0] / SCALE
        position, margin, total, untouched = [], [], [], []
        for option in options:
            chance = float(chances[option.pit])
            if chance == 0:
                continue
            counts = unpack_events(option.events)
            for name, count in counts.items():
                self.event_mean[name] += chance * count
                if name.startswith("first_move"):
                    self.first_fires[name] = self.first_fires.get(name, 0.0) + chance * (count > 0)
            position.append(self.tables.index.rank(option.child))
            margin.append(option.captured)
            total.append(chance)
            untouched.append([chance * (counts[name] == 0) for name in TRACKED])
        position_, margin_, total_ = np.array(position), np.array(margin), np.array(total)
        by_margin = self.merge(position_, margin_, total_, np.empty((len(total_), 0)))
        by_position = self.merge_positions(position_, np.zeros_like(margin_), total_, np.array(untouched))
        return by_margin, by_position

    def end_or_move(self, states: _States, ply: int, *, events: bool) -> _States:
        """End the states without a legal move; move the others by the mover's policy. The
        states by position (``events``) count the events; those by margin only move."""
        legal = self.tables.child[states.position] >= 0
        over = ~legal.any(axis=1)
        if over.any():
            (self._end if events else self._score)(_select(states, over), ply)
            states = _select(states, ~over)
        player = self.players[ply % 2]
        chances = player.chances(player.classes_at(states.position, self.rules.ply_cap - ply)) / SCALE
        sign = 1 if ply % 2 == 0 else -1
        flags = self.tables.flags[states.position].astype(np.int64)
        fired_flags = (flags[:, None] & self.flag_bits) > 0  # (states, position flags)
        children = []
        for pit in range(ROW):
            moving = np.flatnonzero(chances[:, pit] > 0)
            if not len(moving):
                continue
            position = states.position[moving]
            weight = states.total[moving] * chances[moving, pit]
            captured = self.tables.captured[position, pit].astype(np.int64)
            child = self.tables.child[position, pit].astype(np.int64)
            if not events:
                children.append((child, states.margin[moving] + sign * captured, weight, np.empty((len(child), 0))))
                continue
            own = self.tables.own_captured[position, pit].astype(np.int64)
            counts = {
                "capture": (captured > 0).astype(np.int64),
                "capture_stones": captured,
                "capture_pits": self.tables.capture_pits[position, pit].astype(np.int64),
                "capture_own_row_stones": own,
                "capture_opponent_row_stones": captured - own,
            }
            for k, name in enumerate(POSITION_FLAGS):
                counts[name] = fired_flags[moving, k].astype(np.int64)
            for name, count in counts.items():
                self.event_mean[name] += float(weight @ count)
            keeps = np.stack([counts[name] == 0 for name in TRACKED], axis=1)
            untouched = states.untouched[moving] * chances[moving, pit][:, None] * keeps
            children.append((child, np.zeros_like(child), weight, untouched))
        if not children:
            return _States.empty(states.untouched.shape[1])
        merge = self.merge_positions if events else self.merge
        return merge(*(np.concatenate(parts) for parts in zip(*children, strict=True)))

    def stop_at_cap(self, margins: _States, events: _States, ply: int) -> None:
        """Every state still in play at the cap: the game ends there, without an end event (as
        engine.play_game counts end events only in games that end before the cap)."""
        self._score(margins, ply)
        self._count_ends(events, ply)

    def outcome(self, players: tuple[PolicyTable, PolicyTable], unresolved: float, left: _States) -> ExactOutcome:
        margins = dict(sorted(self.margins.items()))
        south = sum(p for m, p in margins.items() if m > 0)
        north = sum(p for m, p in margins.items() if m < 0)
        still = left.untouched.sum(axis=0) if len(left.position) else np.zeros(len(TRACKED))
        untouched = dict(zip(TRACKED, self.untouched_at_end + still, strict=True))
        fires = {}
        for name in EVENTS:
            if name in END_EVENTS:
                fires[name] = self.end_fires[name]
            elif name.startswith("first_move"):
                fires[name] = self.first_fires.get(name, 0.0)
            else:
                fires[name] = 1.0 - untouched[ALIASES.get(name, name)]
        return ExactOutcome(
            players[0].spec,
            players[1].spec,
            self.rules,
            south,
            margins.get(0, 0.0),
            north,
            margins,
            self.plies,
            fires,
            dict(self.event_mean),
            unresolved,
        )

    def _end(self, states: _States, ply: int) -> None:
        """Games (by position) that end at ``ply`` because the mover has no legal move: their
        end events, length and untouched masses."""
        codes = (self.tables.flags[states.position] & END_MASK) >> END_SHIFT
        for code, name in enumerate(END_EVENTS, 1):
            mass = float(states.total[codes == code].sum())
            self.end_fires[name] += mass
            self.event_mean[name] += mass
        self._count_ends(states, ply)

    def _count_ends(self, states: _States, ply: int) -> None:
        self.plies[ply] += float(states.total.sum())
        self.untouched_at_end += states.untouched.sum(axis=0)

    def _score(self, states: _States, ply: int) -> None:
        """The final margins of games (by margin) ending at ``ply``: the margin so far plus South's
        row minus North's."""
        rows = self.own_row[states.position].astype(np.int64) - self.other_row[states.position]
        final = states.margin + (rows if ply % 2 == 0 else -rows)  # at even plies South is the mover
        values, inverse = np.unique(final, return_inverse=True)
        for value, mass in zip(values.tolist(), np.bincount(inverse.reshape(-1), weights=states.total).tolist(), strict=True):
            self.margins[value] = self.margins.get(value, 0.0) + mass


def _select(states: _States, rows: np.ndarray, *, columns: bool = True) -> _States:
    untouched = states.untouched[rows] if columns else np.empty((len(states.position[rows]), 0))
    return _States(states.position[rows], states.margin[rows], states.total[rows], untouched)


class _Merger:
    """Merges states with the same position and margin by adding their masses, without a sort.

    The stones captured so far, C, are fixed by the position (the stones missing from the
    board), so a state's margin m = 2 s - C is fixed by South's captures s in 0 .. C: each
    position in play gets C + 1 consecutive slots, and the masses are summed into them by
    np.bincount. The positions in play are numbered through a mark per position, made and
    cleared each ply.
    """

    def __init__(self, captured: np.ndarray) -> None:
        self.captured = captured  # (positions,) uint8: stones captured so far at each position
        self.mark = np.zeros(len(captured), dtype=bool)
        self.number = np.zeros(len(captured), dtype=np.int64)

    def __call__(self, position: np.ndarray, margin: np.ndarray, total: np.ndarray, untouched: np.ndarray) -> _States:
        self.mark[position] = True
        alive = np.flatnonzero(self.mark)
        self.mark[alive] = False
        self.number[alive] = np.arange(len(alive))
        width = self.captured[alive].astype(np.int64) + 1
        base = np.cumsum(width) - width
        number = self.number[position]
        slot = base[number] + (margin + self.captured[position]) // 2
        size = int(width.sum())
        merged = np.bincount(slot, weights=total, minlength=size)
        kept = np.flatnonzero(merged)
        owner = np.repeat(np.arange(len(alive)), width)[kept]
        columns = np.empty((len(kept), untouched.shape[1]))
        for k in range(untouched.shape[1]):
            columns[:, k] = np.bincount(slot, weights=untouched[:, k], minlength=size)[kept]
        merged_position = alive[owner]
        merged_margin = 2 * (kept - base[owner]) - self.captured[merged_position]
        return _States(merged_position, merged_margin, merged[kept], columns)
