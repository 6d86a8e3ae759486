"""Exact tournaments: the outcome distribution of two table strategies, with no sampling error.

Between two table strategies (engine.players.policy: every strategy but mcts) a game of Modiar is a
Markov chain on (position, score margin so far): each turn the mover plays pit p with the
exact probability its policy table gives (a multiple of 2**-32, the chance its one draw
gives). ``exact_outcome`` pushes the probability forward ply by ply:

    mass_0 = the first move's options, each with its chance and margin (ply 0: its captures
             may be forfeited, so it comes from engine.tables.first_move, as the tables' start does not)
    mass_(p+1)(child(i, q), m + s_p * captured(i, q)) += mass_p(i, m) * chance_p(i, q)

where s_p is +1 at South's turns (p even) and -1 at North's, and chance_p the mover's policy
with cap - p plies left (so choices that change near the cap are followed exactly). A state
whose position has no legal move, or every state at the cap, ends the game: its final margin
is m plus South's row minus North's. Each step is exact in the sense of the recurrence: the
only error is the rounding of float64 sums, far below 1e-12.

exact_lengths follows the same chain by position with its total mass alone (no margins, no
events): the lengths, for a fraction of the cost.

Its cost is one pass over the states in play at each ply, at most three children a state.
Far from the cap every policy is the same from ply to ply (engine.players.policy: a position's far
class), so the chain of a ply depends only on its parity. Those plies are propagated by sparse
matrix products over every state reachable from those in play, found once, breadth first
(engine.exact.outcome._Steady). For perfect's values, whose choices may change with the plies left,
the sparse products go on to the cap: the matrices hold each move's far chance, and at k plies
left only the moves of positions not yet settled at k (engine.players.policy.PolicyTable.settled; sorted
by it, they are a prefix of the varying moves) are corrected by their chance at k minus the far
one (engine.exact.graph._Moves.corrected), their classes followed child by child down the
solution's log (engine.players.near_cap.NearCap). The graph is found again, with every legal move of
the unsettled positions, if mass is left at far_from (most games have ended by then); when
both players already give each of those moves a chance (perfect's dials), the first graph
holds them all and is made deep from the start instead (_plays_every_unsettled_move). The
last plies of the other strategies (at most a few: alphabeta's depth) merge the children of
the states in play (engine.exact.graph.Merger).
Random play reaches 8.25 million (position, margin) states and 2.08 million positions at each
parity from ply 30 on, and takes about 125 plies to bring the mass in play below 1e-15; games
of perfect's dials cycle, so theirs run to 370 plies or to the cap.

Beside the total mass every state carries, for each tracked turn event, the mass of the paths
to it on which the event has not yet fired: zeroed by a move that fires it, that mass gives the
probability that the event fires at least once. Expected counts are sums of mass times count.
The propagation may stop once the mass still in play is below ``tolerance`` (1e-15 by
default); ``unresolved`` then says how much. In the long tails of cycling games the products
keep to the states that hold the mass (engine.exact.tail), setting aside, within a budget of
the tolerance, the mass that reaches the others: counted exactly, it is part of ``unresolved``,
which bounds how far any probability of the outcome may be from that of a run to the cap.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from engine.exact.graph import CAPTURE_COUNTS, Graph, Merger, States, move_counts, select
from engine.exact.tail import MARGIN, POSITION, Tail
from engine.game import END_EVENTS, EVENTS, POSITION_FLAGS, ROW, Board, Rules, check_rules, unpack_events
from engine.players import SCALE, NearCap, PolicyTable, Strategy, policy_table
from engine.tables import (
    END_MASK,
    END_SHIFT,
    FLAGS,
    PositionTables,
    checked_start,
    first_moves,
    kept_tables,
    row_stones,
    table_rules,
)

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
    unresolved: float  # the mass of games not finished when the computation stopped, or set aside on the way
    timings: dict[str, float] = field(default_factory=dict, compare=False)

    @property
    def first_player_score(self) -> float:
        """South's expected score: a win 1, a draw 1/2."""
        return self.south_win + self.draw / 2

    @property
    def mean_plies(self) -> float:
        return _mean(self.plies)


@dataclass(frozen=True)
class ExactLengths:
    """The exact distribution of the length of ``south`` against ``north`` (engine.exact_lengths)."""

    south: str
    north: str
    rules: Rules
    plies: np.ndarray  # plies[k]: the probability that the game lasts exactly k plies
    unresolved: float  # as ExactOutcome's

    @property
    def mean_plies(self) -> float:
        return _mean(self.plies)


def _mean(plies: np.ndarray) -> float:
    return float(np.arange(len(plies)) @ plies)


def exact_outcome(
    south: str | Strategy,
    north: str | Strategy,
    *,
    rules: Rules = DEFAULT_RULES,
    tables: PositionTables | None = None,
    tolerance: float = TOLERANCE,
    progress: Callable[[ExactProgress], None] | None = None,
    start: Board | None = None,
) -> ExactOutcome:
    """The exact outcome distribution of ``south`` against ``north``, two table strategies (spec
    strings or the engine's objects); a strategy without a policy table (mcts) is refused with
    engine.players.policy.NotATableStrategyError. ``tables`` are the position tables of ``rules`` (else
    engine.tables.positions.kept_tables). The propagation stops at the cap, or once the mass in play is
    below ``tolerance``, a mass from 0 (run to the cap) up to but not including 1.
    ``progress``, if given, is called with an ExactProgress before each graph is built and
    after every ply. ``start`` is the board South moves first from (engine.pack; the rule set's
    own start when None): any board of the rule set's stones, as the fairness search asks."""
    run = _run(south, north, rules, tables, tolerance, progress, start, lengths_only=False)
    left = _propagate(run, tolerance, progress or (lambda _: None))
    return run.outcome(float(left.total.sum()) + max(run.set_aside.values()), left)


def exact_lengths(
    south: str | Strategy,
    north: str | Strategy,
    *,
    rules: Rules = DEFAULT_RULES,
    tables: PositionTables | None = None,
    tolerance: float = TOLERANCE,
    progress: Callable[[ExactProgress], None] | None = None,
    start: Board | None = None,
) -> ExactLengths:
    """The exact distribution of the game's length of ``south`` against ``north``, as
    exact_outcome gives it, without the margins and events it also follows, which take most of
    its time (the atlas's perfect self-play, whose games may cycle to the cap, needs its lengths
    only). The arguments are exact_outcome's. The same floats as exact_outcome's plies when no
    state is set aside in the tail (engine.exact.tail); else each within the unresolved mass,
    as exact_outcome's are, for the states set aside are chosen chain by chain."""
    run = _run(south, north, rules, tables, tolerance, progress, start, lengths_only=True)
    left = _propagate(run, tolerance, progress or (lambda _: None))
    unresolved = float(left.total.sum()) + max(run.set_aside.values())
    return ExactLengths(run.players[0].spec, run.players[1].spec, rules, run.plies, unresolved)


def _run(
    south: str | Strategy,
    north: str | Strategy,
    rules: Rules,
    tables: PositionTables | None,
    tolerance: float,
    progress: Callable[[ExactProgress], None] | None,
    start: Board | None,
    *,
    lengths_only: bool,
) -> _Run:
    """The arguments of exact_outcome checked, and the run they ask for."""
    check_rules(rules)
    check_tolerance(tolerance)
    if progress is not None and not callable(progress):
        raise TypeError(f"progress is a function that takes an engine.ExactProgress, or None; not {progress!r}")
    tables = kept_tables(rules) if tables is None else tables
    if table_rules(tables.rules) != table_rules(rules):
        raise ValueError(f"the tables are those of {tables.rules.name}, not of the rules asked for, {rules.name}")
    players = (policy_table(south, rules, tables=tables), policy_table(north, rules, tables=tables))
    return _Run(rules, tables, players, checked_start(rules, start), lengths_only=lengths_only)


def _propagate(run: _Run, tolerance: float, report: Callable[[ExactProgress], None]) -> States:
    """Push the mass forward ply by ply, to the cap or below ``tolerance``, into ``run``'s sums;
    the states (by position) still in play where it stopped."""
    rules = run.rules
    margins, events = run.first_move()
    ply, stopped = 1, not len(events.position)
    while not stopped and ply < rules.ply_cap:
        if ply < run.steady_until:  # the stationary plies: one sparse product a ply
            report(ExactProgress(ply, rules.ply_cap, float(events.total.sum()), BUILDING))
            steady = _Steady(run, margins, events, ply)
            margins, events, ply, stopped = steady.propagate(tolerance, report)
            del steady
            continue
        if run.deepen():  # mass is left near the cap: sparse products on to the cap, corrected where policies change
            continue
        margins = run.end_or_move(margins, ply, events=False)
        events = run.end_or_move(events, ply, events=True)
        ply += 1
        mass = float(events.total.sum())
        stopped = not len(events.position) or mass < tolerance
        report(ExactProgress(ply, rules.ply_cap, mass, PROPAGATING))
    if not stopped:
        run.stop_at_cap(margins, events, rules.ply_cap)
        events = States.empty(len(run.tracked))
    return events


BUILDING, PROPAGATING = "building", "propagating"


class ExactProgress(NamedTuple):
    """Where exact_outcome is: ``ply`` of ``cap``, the mass of games still in play there, and
    its ``stage``: BUILDING the graph of the states reachable from there, or PROPAGATING ply by ply."""

    ply: int
    cap: int
    in_play: float
    stage: str


def check_tolerance(tolerance: object) -> None:
    """Refuse a tolerance that is no mass of games: the whole mass is 1, so from 1 up nothing
    would be propagated; NaN would never stop early and a negative one never at all."""
    if (
        not isinstance(tolerance, int | float)
        or isinstance(tolerance, bool)
        or not math.isfinite(tolerance)
        or not 0 <= tolerance < 1
    ):
        raise ValueError(
            f"tolerance is the mass of games still in play at which the propagation stops, a number "
            f"from 0 (run to the cap) to below 1, such as {TOLERANCE}; not {tolerance!r}"
        )


class _Run:
    """The sums of one propagation: outcomes, lengths and events."""

    def __init__(
        self,
        rules: Rules,
        tables: PositionTables,
        players: tuple[PolicyTable, PolicyTable],
        start: Board | None = None,
        *,
        lengths_only: bool = False,
    ) -> None:
        self.rules, self.tables, self.players, self.start = rules, tables, players, start
        # For the lengths only, no chain by margin, and the chain by position carries the total
        # mass alone (its rows are a prefix of the total's and TRACKED's: engine.exact.graph).
        self.lengths_only = lengths_only
        self.tracked = () if lengths_only else TRACKED
        self.own_row, self.other_row = row_stones(tables.index)
        self.captured = rules.total_stones - self.own_row - self.other_row  # stones off the board
        self.merge = Merger(self.captured)  # by position and margin
        self.merge_positions = Merger(np.zeros_like(self.captured))  # by position
        # The first ply whose mover has fewer plies left than its policy's far_from: from there on
        # its choices may change from ply to ply; before it every ply's chain is the same but for
        # the positions marked VARIES, whose chances are taken ply by ply (varying).
        self.floors = [player.far_from for player in players]
        self.steady_until = self._first_below(self.floors)
        self.varying = [player.far == player.varies for player in players]
        self.deepened = False
        self.margin_mass = np.zeros(2 * rules.total_stones + 1)  # by final margin + total stones
        self.plies = np.zeros(rules.ply_cap + 1)
        self.event_mean = dict.fromkeys(EVENTS, 0.0)
        self.untouched_at_end = np.zeros(len(self.tracked))
        self.first_fires: dict[str, float] = {}
        self.end_fires = dict.fromkeys(END_EVENTS, 0.0)
        self.flag_bits = np.array([FLAGS[name] for name in POSITION_FLAGS])
        self.near = [NearCap(player) for player in players]  # shared by the chains by margin and by position
        self.set_aside = {MARGIN: 0.0, POSITION: 0.0}  # mass set aside by engine.exact.tail, by chain
        if all(_plays_every_unsettled_move(player, tables) for player in players):
            self.deepen()  # the first graph already holds every move deepening adds: no second one

    def deepen(self) -> bool:
        """Once, when mass is still in play at steady_until: for perfect's values (whose
        PolicyTable.settled() says from how many plies left each position keeps its far class)
        mark every position that may still change class as varying, so that sparse products go
        on to the cap, each ply correcting only the moves of the positions not settled at its
        plies left (engine.exact.graph._Moves.corrected). Whether steady_until moved."""
        if self.deepened:
            return False
        self.deepened = True
        floors = [player.sparse_floor() for player in self.players]
        if floors == self.floors:
            return False
        self.floors = floors
        self.varying = [player.unsettled(floor) for player, floor in zip(self.players, floors, strict=True)]
        until, self.steady_until = self.steady_until, self._first_below(floors)
        return self.steady_until > until

    def _first_below(self, floors: list[int]) -> int:
        """The first ply whose mover has fewer plies left than its floor (the cap if none)."""
        cap = self.rules.ply_cap
        return next((ply for ply in range(1, cap) if cap - ply < floors[ply % 2]), cap)

    def first_move(self) -> tuple[States, States]:
        """Ply 0 from the moves of engine.tables.first_move, with South's first-move chances: the states
        by position and margin, and by position with the mass each tracked event left untouched."""
        first = first_moves(self.rules, self.start)
        start = first.start
        if not first.options:  # no first move: the game ends at once
            ended = States(np.array([start]), np.zeros(1, np.int64), np.ones(1), np.ones((1, len(self.tracked))))
            self._end(ended, 0)
            self._score(select(ended, np.array([0]), columns=False), 0)
            return States.empty(0), States.empty(len(self.tracked))
        chances = self.players[0].chances(np.array([self.players[0].first_class(first)]))[0] / SCALE
        position, margin, total, untouched = [], [], [], []
        for option, child in zip(first.options, first.children.tolist(), strict=True):
            chance = float(chances[option.pit])
            if chance == 0:
                continue
            counts = unpack_events(option.events)
            for name, count in counts.items():
                self.event_mean[name] += chance * count
                if name.startswith("first_move"):
                    self.first_fires[name] = self.first_fires.get(name, 0.0) + chance * (count > 0)
            position.append(child)
            margin.append(option.captured)
            total.append(chance)
            untouched.append([chance * (counts[name] == 0) for name in self.tracked])
        position_, margin_, total_ = np.array(position), np.array(margin), np.array(total)
        by_margin = self.merge(position_, margin_, total_, np.empty((len(total_), 0)))
        untouched_ = np.array(untouched).reshape(len(total_), len(self.tracked))
        by_position = self.merge_positions(position_, np.zeros_like(margin_), total_, untouched_)
        return (States.empty(0) if self.lengths_only else by_margin), by_position

    def end_or_move(self, states: States, ply: int, *, events: bool) -> States:
        """End the states without a legal move; move the others by the mover's policy. The
        states by position (``events``) count the events; those by margin only move."""
        legal = self.tables.child[states.position] >= 0
        over = ~legal.any(axis=1)
        if over.any():
            (self._end if events else self._score)(select(states, over), ply)
            states = select(states, ~over)
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
            counts = dict(zip(CAPTURE_COUNTS, move_counts(self.tables, position, pit).T, strict=True))
            for k, name in enumerate(POSITION_FLAGS):
                counts[name] = fired_flags[moving, k].astype(float)
            for name, count in counts.items():
                self.event_mean[name] += float(weight @ count)
            keeps = np.array([counts[name] == 0 for name in self.tracked]).reshape(len(self.tracked), len(moving)).T
            untouched = states.untouched[moving] * chances[moving, pit][:, None] * keeps
            children.append((child, np.zeros_like(child), weight, untouched))
        if not children:
            return States.empty(states.untouched.shape[1])
        merge = self.merge_positions if events else self.merge
        return merge(*(np.concatenate(parts) for parts in zip(*children, strict=True)))

    def stop_at_cap(self, margins: States, events: States, ply: int) -> None:
        """Every state still in play at the cap: the game ends there, without an end event (as
        engine.play_game counts end events only in games that end before the cap)."""
        self._score(margins, ply)
        self._count_ends(events, ply)

    def outcome(self, unresolved: float, left: States) -> ExactOutcome:
        margins = {int(m) - self.rules.total_stones: float(self.margin_mass[m]) for m in np.flatnonzero(self.margin_mass)}
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
            self.players[0].spec,
            self.players[1].spec,
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

    def _end(self, states: States, ply: int) -> None:
        """Games (by position) that end at ``ply`` because the mover has no legal move: their
        end events, length and untouched masses."""
        codes = (self.tables.flags[states.position] & END_MASK) >> END_SHIFT
        for code, name in enumerate(END_EVENTS, 1):
            mass = float(states.total[codes == code].sum())
            self.end_fires[name] += mass
            self.event_mean[name] += mass
        self._count_ends(states, ply)

    def _count_ends(self, states: States, ply: int) -> None:
        self.plies[ply] += float(states.total.sum())
        self.untouched_at_end += states.untouched.sum(axis=0)

    def _score(self, states: States, ply: int) -> None:
        """The final margins of games (by margin) ending at ``ply``: the margin so far plus South's
        row minus North's."""
        rows = self.own_row[states.position].astype(np.int64) - self.other_row[states.position]
        final = states.margin + (rows if ply % 2 == 0 else -rows)  # at even plies South is the mover
        self.margin_mass += np.bincount(final + self.rules.total_stones, weights=states.total, minlength=len(self.margin_mass))


def _plays_every_unsettled_move(player: PolicyTable, tables: PositionTables) -> bool:
    """Whether ``player``'s far classes give every legal move a chance at the positions that
    _Run.deepen would mark as varying (perfect's dials, whose every move has a chance): then the
    graph of the states reachable is the same deepened or not, and deepening at once spares
    finding it a second time."""
    floor = player.sparse_floor()
    if floor == player.far_from:
        return True  # deepening changes nothing of this player's
    at = np.flatnonzero(player.unsettled(floor) & (player.far != player.varies))
    legal = tables.child[at] >= 0
    return bool((player.chances(player.far[at].astype(np.int64)) > 0)[legal].all())


class _Steady:
    """The plies before run.steady_until, where a state's moves and their chances do not depend
    on the ply but only on its parity (South moves at even plies): one sparse matrix product a
    ply and chain.

    The states reachable from those in play are found once, breadth first (engine.exact.graph.Graph);
    a ply then maps the masses of one parity's states to the other's through a matrix with a row
    per child state, a column per state and the move's chance as entry. The positions marked
    VARIES in a policy (perfect's positions whose choice changes with the plies left) keep their
    moves out of the matrices: those are weighted each ply with the chances of that ply.
    """

    def __init__(self, run: _Run, margins: States, events: States, ply: int) -> None:
        self.run, self.ply = run, ply
        parity = ply % 2
        s = (margins.margin + run.captured[margins.position]) // 2
        self.by_margin = Graph(run, margins.position, s, parity, by_margin=True)
        self.by_position = Graph(run, events.position, np.zeros_like(events.position), parity, by_margin=False)
        x = np.bincount(self.by_margin.start, weights=margins.total, minlength=self.by_margin.count[parity])
        self.x = x.astype(np.float64, copy=False)  # bincount's of nothing (exact_lengths: no margins) are integers
        # The chain by position holds a row per column: the total, then each TRACKED event's untouched mass.
        self.masses = np.zeros((1 + len(run.tracked), self.by_position.count[parity]))
        self.masses[:, self.by_position.start] = np.column_stack([events.total, events.untouched]).T

    def propagate(self, tolerance: float, report: Callable[[ExactProgress], None]) -> tuple[States, States, int, bool]:
        """Propagate up to run.steady_until or until the mass in play is below ``tolerance``:
        the states then in play, by margin and by position, the ply reached and whether it stopped."""
        ply, x, masses = self.ply, self.x, self.masses
        del self.x, self.masses  # each ply's masses replace the last
        tail = Tail(self.run, (self.by_margin.moves, self.by_position.moves), tolerance)
        while True:
            x, masses = tail.before(ply, x, masses)
            x = self.by_margin.step_margins(x, ply, tail.moves(MARGIN, ply))
            masses = self.by_position.step_events(masses, ply, tail.moves(POSITION, ply))
            ply += 1
            mass = float(masses[0].sum())
            stopped = mass == 0 or mass < tolerance
            report(ExactProgress(ply, self.run.rules.ply_cap, mass, PROPAGATING))
            if stopped or ply >= self.run.steady_until:
                x, masses = tail.end(ply, x, masses)
                self.by_position.count_events()
                return self.by_margin.states(x, ply % 2), self.by_position.states(masses, ply % 2), ply, stopped
