"""Exact game quality: how a game between two table strategies goes, measured against perfect play.

The chain of engine.exact_outcome (states: position and South's margin so far, pushed forward
ply by ply with each move's exact chance) carries here, beside each state's mass, a few sums
that make the path-dependent measures exact without a second pass (docs/quality.md):

    mass                      the probability of the state
    behind[S], behind[N]      mass times the plies so far at which South (North) was behind
    behind_by[S], [N]         the same, each ply weighed by |F| there
    never_behind[S], [N]      the mass of the paths on which South (North) was never behind
    last_off[w], w = -1, 0, 1 the mass times (1 + the last ply whose forecast's sign was not w)

where the forecast F_t = m_t + V(p_t, cap - t) (engine.exact.judge) is the margin the game ends
with under perfect play from ply t, and "behind" means F_t's sign is the side's loss. Each sum
is linear in the mass, so the chain's sparse products move them as they move the mass; when a
game ends with margin sign w they are read off for that w: the plies and |F| summed where the
eventual winner was behind (drama), whether it ever was (comeback), and the ply from which the
sign stayed w (decided). The measures that depend on one turn only (a move's loss, a mistake, a
decision, a lead change) are expectations of a term of the state, summed over the plies.

Far from the cap the terms of a position do not change from ply to ply; a ply recomputes only
those of the positions whose children's values or mover's chances may still change
(engine.exact.judge.Judge.dirty_from). The graph and its matrices are engine.exact.graph's; the
last plies, where a policy's classes change at every position (alphabeta's depth), merge the
children of the states in play instead, as engine.exact_outcome does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.exact.graph import Graph, Merger, States
from engine.exact.judge import POSITION_TERMS, Judge, Moves, Solved, forecasts, lead_changes, position_terms
from engine.exact.outcome import BUILDING, PROPAGATING, TOLERANCE, ExactProgress, check_tolerance
from engine.exact.sums import (
    BEHIND,
    BEHIND_BY,
    LAST_OFF,
    MASS,
    NEVER_BEHIND,
    SUMS,
    Marks,
    RowMarks,
    Side,
    signed_rows,
    visit_rows,
)
from engine.exact.thinning import CHAIN, Thinning
from engine.game import ROW, Board, Rules, check_rules
from engine.players import SCALE, NearCap, PolicyTable, Strategy, policy_table, solution
from engine.tables import PositionTables, checked_start, first_moves, kept_tables, row_differences, row_stones, table_rules

DEFAULT_RULES = Rules()
SIDES = ("south", "north")
MEASURES = (
    "lead_changes",
    "comeback",
    "drama_plies",
    "drama_severity",
    "decided_ply",
    "stones_lost_south",
    "stones_lost_north",
    "mistakes_south",
    "mistakes_north",
    "decisions",
    "only_move",
    "free_choice",
    "stake",
    "plies",
)
CURVES = ("in_play", "forecast", "forecast_squares", "south_ahead", "north_ahead", "stones_lost", "mistakes")


@dataclass(frozen=True)
class ExactQuality:
    """The exact quality of ``south`` against ``north`` under ``rules``: each measure's
    expectation over their games (MEASURES; docs/quality.md defines them), the outcome, and
    the curves by ply (``frame``)."""

    south: str
    north: str
    rules: Rules
    measures: dict[str, float]
    south_win: float
    draw: float
    north_win: float
    curves: dict[str, np.ndarray]  # each CURVES name: a sum over the states at each ply
    unresolved: float
    timings: dict[str, float] = field(default_factory=dict, compare=False)

    def as_dict(self) -> dict[str, float]:
        return dict(self.measures)

    def frame(self) -> Any:
        """The curves by ply as a polars frame: the mass in play, the mean forecast and its
        standard deviation over the games in play, the share of them that South and North
        lead, and the mean stones lost and mistakes of the ply's moves (per game in play)."""
        import polars as pl  # loaded only when asked for, as the engine's other frames

        mass = self.curves["in_play"]
        plies = int(np.flatnonzero(mass)[-1]) + 1 if mass.any() else 0
        mass = mass[:plies]

        def per_game(name: str) -> np.ndarray:
            share: np.ndarray = self.curves[name][:plies] / mass
            return share

        return pl.DataFrame(
            {
                "ply": np.arange(plies),
                "in_play": mass,
                "mean_forecast": per_game("forecast"),
                "forecast_sd": np.sqrt(np.maximum(per_game("forecast_squares") - per_game("forecast") ** 2, 0)),
                "south_ahead": per_game("south_ahead"),
                "north_ahead": per_game("north_ahead"),
                "stones_lost": per_game("stones_lost"),
                "mistakes": per_game("mistakes"),
            }
        )


def exact_quality(
    south: str | Strategy,
    north: str | Strategy,
    *,
    rules: Rules = DEFAULT_RULES,
    tables: PositionTables | None = None,
    tolerance: float = TOLERANCE,
    progress: Callable[[ExactProgress], None] | None = None,
    start: Board | None = None,
) -> ExactQuality:
    """The exact game quality of ``south`` against ``north``, two table strategies; the
    arguments are engine.exact_outcome's, and so is the stop: at the cap, or once the mass in
    play is below ``tolerance`` (then ``unresolved``)."""
    check_rules(rules)
    check_tolerance(tolerance)
    tables = kept_tables(rules) if tables is None else tables
    if table_rules(tables.rules) != table_rules(rules):
        raise ValueError(f"the tables are those of {tables.rules.name}, not of the rules asked for, {rules.name}")
    players = (policy_table(south, rules, tables=tables), policy_table(north, rules, tables=tables))
    run = _Quality(rules, tables, players, checked_start(rules, start), tolerance, progress or (lambda _: None))
    return run.result()


class _Quality:
    """One propagation: the chain's states and the sums read off as games end."""

    def __init__(
        self,
        rules: Rules,
        tables: PositionTables,
        players: tuple[PolicyTable, PolicyTable],
        start: Board | None,
        tolerance: float,
        report: Callable[[ExactProgress], None],
    ) -> None:
        self.rules, self.tables, self.players, self.tolerance, self.report = rules, tables, players, tolerance, report
        self.cap = rules.ply_cap
        solved = Solved.of(solution(rules))
        self.judges = [Judge(solved, tables, player) for player in players]
        own, other = row_stones(tables.index)
        self.captured = rules.total_stones - own - other
        self.rows = row_differences(rules.total_stones).astype(np.int64)
        self.merge = Merger(self.captured)
        self.totals = dict.fromkeys(MEASURES, 0.0)
        self.outcome = np.zeros(3)  # North wins, draw, South wins
        self.plies = np.zeros(self.cap + 1)
        self.curves = {name: np.zeros(self.cap + 1) for name in CURVES}
        self.unresolved = 0.0
        self.set_aside = {CHAIN: 0.0}  # the mass engine.exact.thinning set aside in the tail
        # The graph's needs (engine.exact.graph._Run). As in engine.exact_outcome, the first graph
        # holds the far moves; if mass is left where a policy's classes start to change, and
        # perfect's values say which positions change when (sparse_floor), a second graph holds
        # every move of those, corrected ply by ply.
        self.floors = [player.far_from for player in players]
        self.varying = [player.far == player.varies for player in players]
        self.deepened = False
        self.near = [NearCap(player) for player in players]
        self.flag_bits = np.zeros(0, dtype=np.int64)
        self.event_mean: dict[str, float] = {}
        self.steady_until = self._first_below()
        self._start = start

    def _first_below(self) -> int:
        """The first ply whose mover has fewer plies left than its floor (the cap if none)."""
        cap = self.cap
        return next((ply for ply in range(1, cap) if cap - ply < self.floors[ply % 2]), cap)

    def _deepen(self) -> bool:
        """Once: the floors of perfect's values (engine.exact.outcome._Run.deepen); whether
        steady_until moved."""
        if self.deepened:
            return False
        self.deepened = True
        floors = [player.sparse_floor() for player in self.players]
        if floors == self.floors:
            return False
        self.floors = floors
        self.varying = [player.unsettled(floor) for player, floor in zip(self.players, floors, strict=True)]
        until, self.steady_until = self.steady_until, self._first_below()
        return self.steady_until > until

    def _score(self, states: States, ply: int) -> None:  # the graph's protocol; the steps here read ends themselves
        raise NotImplementedError

    def _end(self, states: States, ply: int) -> None:
        raise NotImplementedError

    def result(self) -> ExactQuality:
        states = self._first_move()
        ply = 1
        while states is not None and len(states.position):
            mass = float(states.total.sum())
            if ply >= self.cap:
                self._finish(states, ply)
                break
            if mass < self.tolerance:
                self.unresolved += mass
                break
            if ply < self.steady_until:
                states, ply = self._steady(states, ply)
                continue
            if self._deepen():
                continue
            states = self._merged_ply(states, ply)
            ply += 1
            self.report(ExactProgress(ply, self.cap, 0.0 if states is None else float(states.total.sum()), PROPAGATING))
        self.unresolved += self.set_aside[CHAIN]
        north, draw, south = (float(p) for p in self.outcome)
        measures = dict(self.totals)
        measures["plies"] = float(np.arange(self.cap + 1) @ self.plies)
        return ExactQuality(
            self.players[0].spec, self.players[1].spec, self.rules, measures, south, draw, north, self.curves, self.unresolved
        )

    # The first move: the forfeit of its captures makes it a position of its own (engine.tables.first_move).
    def _first_move(self) -> States | None:
        first = first_moves(self.rules, self._start)
        judge = self.judges[0]
        children = first.children
        if not len(children):
            self.read_ends(_fresh(1), np.array([first.start_rows]), 0)
            return None
        after = judge.solution.values_of(children, self.cap - 1).astype(np.int64)
        values = np.full((1, ROW), np.iinfo(np.int64).min)
        values[0, first.pits] = first.captured - after
        legal = np.zeros((1, ROW), dtype=bool)
        legal[0, first.pits] = True
        moves = Moves(values, legal, values.max(axis=1))
        chances = self.players[0].chances(np.array([self.players[0].first_class(first)])) / SCALE
        self._turn_terms(moves, chances, np.ones(1), 0)
        forecast = forecasts(moves, np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), True)
        self.totals["lead_changes"] += float(lead_changes(moves, chances, np.zeros(1, dtype=np.int64), forecast, True)[0])
        sums = _fresh(1)
        self._curves(sums[MASS], forecast, 0)
        visit_rows(sums.T, sums[MASS], RowMarks(Marks(np.sign(forecast), np.abs(forecast))), 0)
        chance = chances[0, first.pits]
        moving = chance > 0
        columns = sums[:, [0] * int(moving.sum())] * chance[moving]
        return self.merge(children[moving], first.captured[moving], columns[MASS], columns[1:].T)

    def _turn_terms(self, moves: Moves, chances: np.ndarray, mass: np.ndarray, ply: int) -> None:
        """Add the turn's terms of positions with ``mass`` at ``ply`` (POSITION_TERMS) to the totals."""
        terms = mass @ position_terms(moves, chances)
        self.add_terms(terms, ply)

    def add_terms(self, terms: np.ndarray, ply: int) -> None:
        side = SIDES[ply % 2]
        for name, value in zip(POSITION_TERMS, terms.tolist(), strict=True):
            key = f"{name}_{side}" if name in ("stones_lost", "mistakes") else name
            self.totals[key] += value
        self.curves["stones_lost"][ply] += terms[0]
        self.curves["mistakes"][ply] += terms[1]

    def _curves(self, mass: np.ndarray, forecast: np.ndarray, ply: int) -> None:
        self.curves["in_play"][ply] += float(mass.sum())
        self.curves["forecast"][ply] += float(mass @ forecast)
        self.curves["forecast_squares"][ply] += float(mass @ forecast**2)
        self.curves["south_ahead"][ply] += float(mass[forecast > 0].sum())
        self.curves["north_ahead"][ply] += float(mass[forecast < 0].sum())

    def read_ends(self, sums: np.ndarray, final: np.ndarray, ply: int) -> None:
        """Games that end at ``ply`` with South's ``final`` margins: their outcome, length and
        the sums read off for their winner (module docstring)."""
        w = np.sign(final).astype(np.int64)
        mass = sums[MASS]
        self.outcome += np.bincount(w + 1, weights=mass, minlength=3)
        self.plies[ply] += float(mass.sum())
        won = w > 0  # South won: South behind is drama
        lost = w < 0
        self.totals["drama_plies"] += float(sums[BEHIND, won].sum() + sums[BEHIND + 1, lost].sum())
        self.totals["drama_severity"] += float(sums[BEHIND_BY, won].sum() + sums[BEHIND_BY + 1, lost].sum())
        self.totals["comeback"] += float((mass[won] - sums[NEVER_BEHIND, won]).sum())
        self.totals["comeback"] += float((mass[lost] - sums[NEVER_BEHIND + 1, lost]).sum())
        self.totals["decided_ply"] += float(sums[LAST_OFF + 1 + w, np.arange(len(w))].sum())

    def _finish(self, states: States, ply: int) -> None:
        """The states in play at the cap: their games end there."""
        sums = _sums(states)
        final = states.margin + signed_rows(self.rows[states.position], ply)
        self._curves(sums[MASS], final.astype(float), ply)
        self.read_ends(sums, final, ply)

    def _merged_ply(self, states: States, ply: int) -> States | None:
        """One ply of the states in play, each computed at its plies left (the last plies)."""
        plies_left, south = self.cap - ply, ply % 2 == 0
        judge = self.judges[ply % 2]
        sums = _sums(states)
        at, owner = np.unique(states.position, return_inverse=True)
        moves = judge.moves(at, plies_left)
        chances = judge.chances(at, plies_left)
        playable = np.asarray(moves.legal.any(axis=1))
        over = ~playable[owner]
        forecast = forecasts(moves, owner, states.margin, south)
        self._curves(sums[MASS], forecast.astype(float), ply)
        if over.any():
            self.read_ends(sums[:, over], forecast[over], ply)
        self._turn_terms(moves, chances, np.bincount(owner, weights=sums[MASS], minlength=len(at)), ply)
        self.totals["lead_changes"] += float(sums[MASS] @ lead_changes(moves, chances, owner, forecast, south))
        visit_rows(sums.T, sums[MASS], RowMarks(Marks(np.sign(forecast), np.abs(forecast))), ply)
        parts = []
        sign = 1 if south else -1
        for pit in range(ROW):
            chance = chances[owner, pit] * moves.legal[owner, pit]
            moving = np.flatnonzero(chance > 0)
            if not len(moving):
                continue
            position = states.position[moving]
            child = self.tables.child[position, pit].astype(np.int64)
            margin = states.margin[moving] + sign * self.tables.captured[position, pit].astype(np.int64)
            parts.append((child, margin, sums[:, moving] * chance[moving]))
        if not parts:
            return None
        child, margin, moved = (np.concatenate(part, axis=-1) for part in zip(*parts, strict=True))
        return self.merge(child, margin, moved[MASS], moved[1:].T)

    def _steady(self, states: States, ply: int) -> tuple[States, int]:
        """The plies before steady_until by sparse products over the graph of the states reachable."""
        self.report(ExactProgress(ply, self.cap, float(states.total.sum()), BUILDING))
        s = (states.margin + self.captured[states.position]) // 2
        graph = Graph(self, states.position, s, ply % 2, by_margin=True)
        parity = ply % 2
        sums = np.zeros((graph.count[parity], SUMS))  # a row per state, for the sparse products
        columns = _sums(states)
        for row in range(SUMS):
            sums[:, row] = np.bincount(graph.start, weights=columns[row], minlength=graph.count[parity])
        thinning = Thinning(self, graph, [Side(self, graph, q) for q in (0, 1)], self.tolerance)
        while True:
            sums = thinning.before(ply, sums)
            sums = thinning.side(ply).step(sums, ply)
            ply += 1
            mass = float(sums[:, MASS].sum())
            self.report(ExactProgress(ply, self.cap, mass, PROPAGATING))
            if mass == 0 or mass < self.tolerance or ply >= self.steady_until:
                break
        sums = thinning.whole_sums(ply, sums)
        alive = np.flatnonzero(sums[:, MASS])
        q = ply % 2
        position = graph.position[q][alive].astype(np.int64)
        margin = 2 * graph.s[q][alive].astype(np.int64) - self.captured[position]
        return States(position, margin, sums[alive, MASS], sums[alive, 1:]), ply


def _fresh(count: int) -> np.ndarray:
    """The sums of ``count`` states of mass 1 before any ply: never behind, nothing else."""
    sums = np.zeros((SUMS, count))
    sums[[MASS, NEVER_BEHIND, NEVER_BEHIND + 1]] = 1
    return sums


def _sums(states: States) -> np.ndarray:
    return np.vstack([states.total[None, :], states.untouched.T])
