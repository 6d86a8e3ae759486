"""Calibration of Ludii's state-evaluation metrics (issue 51, part 3): Drama, LeadChange, Stability,
DecisivenessMoves and ClarityNarrowness computed as Ludii defines them from evaluators of a state
whose truth we know, and the estimated evaluators measured against the exact one.

    trial_metrics(trials)                          the metrics of each trial's sequence of state evaluations
    evaluations(games, solution, ...)              each evaluator's values of every state of self-play games
    per_game_metrics(games, solution, ...)         every self-play game measured by every evaluator (long frame)
    calibration_table(per_game, references)        mean, SE and paired bias per (strategy, metric, evaluator)
    rank_agreement(table, reference, method)       how each evaluator orders the strategies beside the reference

Ludii's files, github.com/Ludeme/Ludii under Evaluation/src/metrics (commits read: Utils.java
69b87b2, multiple/metrics/Drama.java 621312c, multiple/MultiMetricFramework.java 3589d6c,
single/stateEvaluation/LeadChange.java 845cda6, Stability.java ac26f87,
decisiveness/DecisivenessMoves.java 69b87b2, decisiveness/DecisivenessThreshold.java ac26f87,
clarity/ClarityNarrowness.java ac29f5f; Common/src/main/math/statistics/Stats.java a9fd592):

- A trial is evaluated state by state before each real move, then the move is applied: the states
  s_0 .. s_{T-1} of a game of T moves; the final state is never evaluated.
- Utils.evaluateState: a terminal state gets its utility (win 1, draw 0, loss -1); any other
  tanh(h(p) - h(opponent)), h the AlphaBetaSearch heuristic (the game's AI metadata, else
  Material weight 1 plus MobilitySimple weight 0.001: AI/src/search/minimax/AlphaBetaSearch.java,
  initAI). The range is [-1, 1] and the two players' values are opposites, so a state carries one
  number here: ``e``, Player 1's, that is South's (South moves first, as Ludii's P1).
- The winners are Utils.highestRankedPlayers: every player of the highest final utility (a draw: both).

Each metric as its description defines it, then what its code computes (``<name>_code``):

- Drama ("Difference between the winning players state evaluation and the maximum state evaluation
  of any player"; its first Javadoc: "Number of moves/severity where the eventual winner was
  behind"): per state max_p e_p minus the winners' mean, |e| - w e with w = +1 (South won), -1, 0
  (draw); per trial its Average, Maximum, Minimum (MultiMetricFramework); range [0, 2], not the
  declared [0, 1]. Code: highestRankedPlayers reads the context Utils.setupNewContext built for the
  replay, before any move, where nobody is ranked: every player holds the draw utility and counts
  as a winner, so the code measures |e| whoever wins. metricMax and metricMin start from 0.0:
  DramaMinimum_code is 0.
- LeadChange ("Percentage number of times the expected winner changes"): the leaders are the
  players of the highest evaluation (sign e); changes over the T - 1 pairs of consecutive states.
  Code: the first state is compared with an empty set of past leaders, a change every time, and
  the count is divided by T: (1 + changes) / T.
- Stability ("Average variance in each player's state evaluation"): the mean over players of the
  population variance of their evaluations, Var(e). Code: the players' variances summed, 2 Var(e).
- DecisivenessThreshold ("Maximum state evaluation value achieved by non-winning player", from -1)
  and DecisivenessMoves ("Percentage number of moves after a winning player has a state
  evaluation above the decisiveness threshold"): the first state i at which a winner's value
  exceeds the threshold (T if none), i / T. Code: ``turnAbove / size`` divides ints
  (DecisivenessMoves_intdiv: 0, or 1 if never), and with every player a winner the threshold is -1
  and i = 0: DecisivenessMoves_code is 0.
- ClarityNarrowness ("The percentage of legal moves that have an evaluation value at least 75%
  above the difference between the max move evaluation value and average move evaluation
  value"): per state the share of legal moves whose value (Utils.evaluateMove: the state after the
  move, to its mover) exceeds mean + 0.75 (max - mean); the mean over states. Code: the share is an
  int division (ClarityNarrowness_intdiv: 1 only if every move is above), and Stats.measure sets the
  maximum in an ``else if`` after the minimum, so where each value is a new minimum (one move, or
  falling values; legal moves taken in pit order here) max stays -inf, the threshold too, and
  every move counts: ClarityNarrowness_code is 1 at such states, 0 at the others.

The evaluators (``e`` of a state; a move's value to its mover after it): ``exact``, the sign of
the forecast F (pipeline.analysis.errors: the margin under perfect play from there), the utility
perfect play gets; ``exact_tanh``, tanh F, the heuristic's scale with perfect foresight;
``heuristic``, Ludii's default for a game without AI metadata, tanh(stones captured minus the
opponent's + 0.001 legal moves for the mover), its Material being the seeds in each player's hand;
``mc(playouts=N)``, flat Monte Carlo: the mean utility of N uniformly random playouts (the engine's
mcts returns pits, not a root value). Terminal states and moves that end the game get their
utility under every evaluator.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
from scipy import stats

from engine.solver import Solution
from engine.tables import PositionTables, first_moves, kept_tables
from pipeline.analysis.errors import judged_plies
from pipeline.analysis.turns import Plies, replay_games
from pipeline.runs.records import IS_SELF_PLAY

MOBILITY_WEIGHT = 0.001  # MobilitySimple's weight in AlphaBetaSearch's default heuristic
NARROWNESS = 0.75  # ClarityNarrowness: above mean + 0.75 (max - mean)
DEFINED = (
    "Drama",
    "DramaMaximum",
    "DramaMinimum",
    "LeadChange",
    "Stability",
    "DecisivenessThreshold",
    "DecisivenessMoves",
    "ClarityNarrowness",
)
AS_CODED = (
    "Drama_code",
    "DramaMaximum_code",
    "DramaMinimum_code",
    "LeadChange_code",
    "Stability_code",
    "DecisivenessThreshold_code",
    "DecisivenessMoves_intdiv",
    "DecisivenessMoves_code",
    "ClarityNarrowness_intdiv",
    "ClarityNarrowness_code",
)
METRICS = DEFINED + AS_CODED
EXACT, EXACT_TANH, HEURISTIC = "exact", "exact_tanh", "heuristic"
PLAYOUT_BLOCK = 1 << 20  # playouts run at once by the Monte-Carlo evaluator


@dataclass(frozen=True)
class Trials:
    """The state evaluations of a set of trials (games).

    ``evaluation`` (states,): South's value of the state before each move, in [-1, 1];
    ``moves`` (states, 3): each legal move's value to its mover (NaN where not legal), in pit
    order; ``offsets`` (trials + 1,): each trial's states; ``winner`` (trials,): +1 South won,
    -1 North, 0 draw.
    """

    evaluation: np.ndarray
    moves: np.ndarray
    offsets: np.ndarray
    winner: np.ndarray


def trial_metrics(trials: Trials) -> dict[str, np.ndarray]:
    """Each metric of METRICS for each trial (the module docstring defines them); Ludii's value
    of a metric is its mean over the trials. Raises ValueError for a trial without a move."""
    e = np.asarray(trials.evaluation, dtype=float)
    offsets = np.asarray(trials.offsets, dtype=np.int64)
    length = np.diff(offsets)
    if (length < 1).any():
        raise ValueError("every trial needs a move: Ludii divides each trial's sums by its moves")
    segments = _Segments(offsets)
    w = np.asarray(trials.winner, dtype=float)[segments.trial]
    metrics = _drama(e, w, segments) | _decisiveness(e, w, segments) | _narrowness(np.asarray(trials.moves, float), segments)
    changes = segments.sum(_sign_changes(e, segments))
    variance = segments.mean((e - segments.mean(e)[segments.trial]) ** 2)
    metrics |= {
        "LeadChange": np.where(length > 1, changes / np.maximum(length - 1, 1), 0.0),
        "LeadChange_code": (1 + changes) / length,
        "Stability": variance,
        "Stability_code": 2 * variance,
    }
    return {name: metrics[name] for name in METRICS}


class _Segments:
    """Per-trial reductions of per-state arrays (every trial holds a state)."""

    def __init__(self, offsets: np.ndarray) -> None:
        self.starts = offsets[:-1]
        self.length = np.diff(offsets)
        self.trial = np.repeat(np.arange(len(self.length)), self.length)
        self.local = np.arange(int(offsets[-1])) - self.starts[self.trial]

    def sum(self, values: np.ndarray) -> np.ndarray:
        return np.add.reduceat(values.astype(float), self.starts)

    def mean(self, values: np.ndarray) -> np.ndarray:
        return self.sum(values) / self.length

    def max(self, values: np.ndarray) -> np.ndarray:
        return np.maximum.reduceat(values, self.starts)

    def min(self, values: np.ndarray) -> np.ndarray:
        return np.minimum.reduceat(values, self.starts)

    def first(self, condition: np.ndarray) -> np.ndarray:
        """The first state (from 0) of each trial where ``condition`` holds, its length if none."""
        return self.min(np.where(condition, self.local, self.length[self.trial]))


def _sign_changes(e: np.ndarray, segments: _Segments) -> np.ndarray:
    """Whether the leaders (the sign of e) differ from the previous state's, within a trial."""
    sign = np.sign(e)
    changed = np.zeros(len(e), dtype=bool)
    changed[1:] = sign[1:] != sign[:-1]
    changed[segments.starts] = False
    return changed


def _drama(e: np.ndarray, w: np.ndarray, segments: _Segments) -> dict[str, np.ndarray]:
    """Drama's summaries: the eventual winners' shortfall from the best value, |e| - w e; the
    code's, every player a winner (|e|), its minimum and maximum starting from 0."""
    drama, everyone = np.abs(e) - w * e, np.abs(e)
    return {
        "Drama": segments.mean(drama),
        "DramaMaximum": segments.max(drama),
        "DramaMinimum": segments.min(drama),
        "Drama_code": segments.mean(everyone),
        "DramaMaximum_code": np.maximum(segments.max(everyone), 0.0),
        "DramaMinimum_code": np.minimum(segments.min(everyone), 0.0),
    }


def _decisiveness(e: np.ndarray, w: np.ndarray, segments: _Segments) -> dict[str, np.ndarray]:
    """DecisivenessThreshold and DecisivenessMoves with the true winners, with the int division,
    and as coded (every player a winner, the int division)."""

    def first_above(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        losers = np.where(w != 0, -w * e, -1.0)  # a non-winner's value; none in a draw
        threshold = np.maximum(segments.max(losers), -1.0)
        winners = np.where(w != 0, w * e, np.abs(e))  # the best winner's value
        return threshold, segments.first(winners > threshold[segments.trial])

    threshold, turn = first_above(w)
    threshold_code, turn_code = first_above(np.zeros_like(w))
    return {
        "DecisivenessThreshold": threshold,
        "DecisivenessMoves": turn / segments.length,
        "DecisivenessThreshold_code": threshold_code,
        "DecisivenessMoves_intdiv": (turn // segments.length).astype(float),
        "DecisivenessMoves_code": (turn_code // segments.length).astype(float),
    }


def _narrowness(moves: np.ndarray, segments: _Segments) -> dict[str, np.ndarray]:
    """ClarityNarrowness per trial: defined, with the int division, and as coded (the int
    division and Stats.measure's maximum, set only for a value that is not a new minimum)."""
    legal = ~np.isnan(moves)
    count = np.maximum(legal.sum(axis=1), 1)
    mean = np.where(legal, moves, 0.0).sum(axis=1) / count
    top = np.where(legal, moves, -np.inf).max(axis=1)
    low, high = np.full(len(moves), np.inf), np.full(len(moves), -np.inf)
    for k in range(moves.shape[1]):  # Stats.measure's scan, in move order
        value = moves[:, k]
        new_low = legal[:, k] & (value < low)
        new_high = legal[:, k] & ~new_low & (value > high)
        low, high = np.where(new_low, value, low), np.where(new_high, value, high)

    def above(maximum: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            threshold = np.where(np.isneginf(maximum), -np.inf, mean + NARROWNESS * (maximum - mean))
        return (legal & (moves > threshold[:, None])).sum(axis=1)

    return {
        "ClarityNarrowness": segments.mean(above(top) / count),
        "ClarityNarrowness_intdiv": segments.mean(above(top) // count),
        "ClarityNarrowness_code": segments.mean(above(high) // count),
    }


@dataclass(frozen=True)
class Evaluated:
    """One evaluator's view of a set of self-play games: ``games`` (game_id, strategy, plies), one
    row per trial of ``trials``, in the same order."""

    games: pl.DataFrame
    trials: Trials


def evaluations(
    games: pl.LazyFrame | pl.DataFrame,
    solution: Solution,
    *,
    playouts: Sequence[int] = (64,),
    mc_games: int | None = None,
    seed: int = 0,
) -> dict[str, Evaluated]:
    """The state evaluations of every self-play game of ``games`` (a games table of ``solution``'s
    rule set) by each evaluator, by name: exact, exact_tanh, heuristic and, for each N of
    ``playouts``, mc(playouts=N) on the first ``mc_games`` games of each strategy (all when
    None), its playouts drawn from ``seed``. Raises ValueError for games of another rule set."""
    plies = replay_games(games.lazy().filter(IS_SELF_PLAY), by=("score_south", "score_north"))
    if len(plies.replays) != 1 or plies.replays[0][1].rules.name != solution.rules.name:
        raise ValueError(f"the self-play games must all be of the solution's rule set, {solution.rules.name}")
    states = _States(plies, solution, judged_plies(plies, solution))
    every = np.arange(len(plies))
    found = {name: states.evaluated(every, e, moves) for name, (e, moves) in states.exact().items()}
    found[HEURISTIC] = states.evaluated(every, *states.heuristic())
    if playouts:
        chosen = plies.games.with_row_index("_row").group_by("south", maintain_order=True).head(mc_games or len(plies))
        rows = np.sort(chosen["_row"].to_numpy())
        rng = np.random.default_rng(seed)
        for count in playouts:
            found[f"mc(playouts={count})"] = states.evaluated(rows, *states.monte_carlo(rows, count, rng))
    return found


def per_game_metrics(
    games: pl.LazyFrame | pl.DataFrame,
    solution: Solution,
    *,
    playouts: Sequence[int] = (64,),
    mc_games: int | None = None,
    seed: int = 0,
) -> pl.DataFrame:
    """Every self-play game measured by each evaluator (``evaluations``, the same arguments): one
    row per (game_id, strategy, evaluator, metric) with its ``value`` and the game's ``plies``."""
    found = evaluations(games, solution, playouts=playouts, mc_games=mc_games, seed=seed)
    frames = []
    for evaluator, evaluated in found.items():
        frame = evaluated.games.with_columns(evaluator=pl.lit(evaluator))
        frame = frame.with_columns(pl.Series(name, values) for name, values in trial_metrics(evaluated.trials).items())
        frames.append(frame.unpivot(METRICS, index=["game_id", "strategy", "plies", "evaluator"], variable_name="metric"))
    return pl.concat(frames)


class _States:
    """The states of the replayed games and the moves legal in each, for the evaluators."""

    def __init__(self, plies: Plies, solution: Solution, judged: pl.DataFrame) -> None:
        self.plies, self.solution = plies, solution
        self.rules = solution.rules
        self.tables: PositionTables = kept_tables(self.rules)
        self.side = np.where(judged["mover"].to_numpy() == 0, 1, -1)  # +1 where South moves
        self.forecast = judged["forecast_before"].to_numpy().astype(float)
        self.margin = self.side * judged["margin"].to_numpy()  # the mover's margin so far
        self.options = judged["options"].to_numpy().astype(float)
        self.position = judged["position"].to_numpy().astype(np.int64)
        self.ply = judged["ply"].to_numpy().astype(np.int64)
        self.child, self.captured = self._moves()
        self.legal = self.child >= 0
        rows, pits = np.nonzero(self.legal)
        left = np.maximum(solution.cap - self.ply[rows] - 1, 0)
        self.after = np.full(self.child.shape, np.nan)  # each move's forecast, to its mover
        values = solution.values_of(self.child[rows, pits], left).astype(float)
        self.after[rows, pits] = self.margin[rows] + self.captured[rows, pits] - values
        scores = plies.games.select(pl.col("score_south", "score_north").cast(pl.Int64))
        self.winner = np.sign((scores["score_south"] - scores["score_north"]).to_numpy().astype(float))

    def _moves(self) -> tuple[np.ndarray, np.ndarray]:
        """Each state's three children (-1 where not legal) and captures; ply 0's are the first move's."""
        child = self.tables.child[self.position].astype(np.int64)
        captured = self.tables.captured[self.position].astype(float)
        first = self.ply == 0
        if first.any():
            first_child, first_captured = first_moves(self.rules).by_pit()
            child[first], captured[first] = first_child, first_captured
        return child, captured

    def evaluated(self, rows: np.ndarray, e: np.ndarray, moves: np.ndarray) -> Evaluated:
        """The Evaluated of the games at ``rows`` (ascending) from their states' values."""
        lengths = np.diff(self.plies.offsets)[rows]
        trials = Trials(e, moves, np.concatenate([[0], np.cumsum(lengths)]), self.winner[rows])
        games = self.plies.games[rows].select("game_id", pl.col("south").alias("strategy"), "plies")
        return Evaluated(games, trials)

    def exact(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """The exact evaluators: the forecast's sign (perfect play's utility) and its tanh."""
        return {
            EXACT: (np.sign(self.forecast), np.sign(self.after)),
            EXACT_TANH: (np.tanh(self.forecast), np.tanh(self.after)),
        }

    def heuristic(self) -> tuple[np.ndarray, np.ndarray]:
        """Ludii's default heuristic through tanh: stones captured minus the opponent's, plus
        0.001 a legal move for the player to move; a move that ends the game gets its utility."""
        e = self.side * np.tanh(self.margin + MOBILITY_WEIGHT * self.options)
        child = np.maximum(self.child, 0)
        replies = (self.tables.child[child] >= 0).sum(axis=-1)
        ends = (replies == 0) | (self.ply[:, None] + 1 >= self.solution.cap)
        moves = np.where(ends, np.sign(self.after), np.tanh(self.margin[:, None] + self.captured - MOBILITY_WEIGHT * replies))
        return e, np.where(self.legal, moves, np.nan)

    def monte_carlo(self, rows: np.ndarray, playouts: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """The flat Monte-Carlo evaluator on the states of the games at ``rows``."""
        offsets = self.plies.offsets
        states = np.concatenate([np.arange(offsets[row], offsets[row + 1]) for row in rows])
        runner = MonteCarlo(self.tables, self.solution, playouts, rng)
        e = self.side[states] * runner.values(self.position[states], self.ply[states], self.margin[states])
        at, pits = np.nonzero(self.legal[states])
        moves = np.full((len(states), 3), np.nan)
        state = states[at]
        child_margin = -(self.margin[state] + self.captured[state, pits])  # the child's mover's
        moves[at, pits] = -runner.values(self.child[state, pits], self.ply[state] + 1, child_margin)
        return e, moves


class MonteCarlo:
    """The flat Monte-Carlo evaluator: the mean utility (win 1, draw 0, loss -1) to the player to
    move of ``count`` uniformly random playouts to the end (or the cap) from a position."""

    def __init__(self, tables: PositionTables, solution: Solution, count: int, rng: np.random.Generator) -> None:
        self.tables, self.solution, self.count, self.rng = tables, solution, count, rng
        self.first = first_moves(solution.rules)

    def values(self, position: np.ndarray, ply: np.ndarray, margin: np.ndarray) -> np.ndarray:
        """The mean utility to the mover of each position at ``ply``, its margin so far ``margin``."""
        block = max(1, PLAYOUT_BLOCK // self.count)
        parts = [
            self._block(position[i : i + block], ply[i : i + block], margin[i : i + block])
            for i in range(0, len(position), block)
        ]
        return np.concatenate(parts) if parts else np.empty(0)

    def _block(self, position: np.ndarray, ply: np.ndarray, margin: np.ndarray) -> np.ndarray:
        n = self.count
        here, plies = np.repeat(position, n).astype(np.int64), np.repeat(ply, n).astype(np.int64)
        difference, sign = np.zeros(len(here)), np.ones(len(here))
        opening = np.flatnonzero(plies == 0)  # the first move is not in the tables
        pick = self.rng.integers(0, len(self.first.pits), len(opening))
        here[opening], difference[opening] = self.first.children[pick], self.first.captured[pick]
        plies[opening], sign[opening] = 1, -1
        live = np.arange(len(here))
        while len(live):
            child = self.tables.child[here[live]]
            legal = child >= 0
            options = legal.sum(axis=1)
            over = (options == 0) | (plies[live] >= self.solution.cap)
            ended = live[over]
            difference[ended] += sign[ended] * self.solution.values_of(here[ended], 0)
            live, child, legal, options = live[~over], child[~over], legal[~over], options[~over]
            nth = (self.rng.random(len(live)) * options).astype(np.int64)
            pit = np.argmax(np.cumsum(legal, axis=1) > nth[:, None], axis=1)
            difference[live] += sign[live] * self.tables.captured[here[live], pit]
            here[live], plies[live], sign[live] = child[np.arange(len(live)), pit], plies[live] + 1, -sign[live]
        utility = np.sign(np.repeat(margin, n) + difference)
        return utility.reshape(-1, n).mean(axis=1)


def calibration_table(per_game: pl.DataFrame, references: Sequence[str] = (EXACT, EXACT_TANH)) -> pl.DataFrame:
    """One row per (strategy, metric, evaluator) of per_game_metrics' frame: the ``games``, the
    ``mean`` over them and its standard error ``se``, and for each reference evaluator R the
    paired bias against it on the same games, ``bias_R`` (mean difference) and ``bias_R_se``
    (null on R's own rows)."""
    keys = ["strategy", "metric", "evaluator"]
    value = pl.col("value")
    table = per_game.group_by(keys).agg(
        pl.len().alias("games"), value.mean().alias("mean"), (value.std(ddof=1) / pl.len().sqrt()).fill_null(0.0).alias("se")
    )
    for reference in references:
        truth = per_game.filter(pl.col("evaluator") == reference).select("game_id", "strategy", "metric", value.alias("_truth"))
        paired = per_game.filter(pl.col("evaluator") != reference).join(truth, on=["game_id", "strategy", "metric"])
        difference = value - pl.col("_truth")
        bias = paired.group_by(keys).agg(
            difference.mean().alias(f"bias_{reference}"),
            (difference.std(ddof=1) / pl.len().sqrt()).fill_null(0.0).alias(f"bias_{reference}_se"),
        )
        table = table.join(bias, on=keys, how="left")
    return table.sort(keys)


def rank_agreement(table: pl.DataFrame, reference: str = EXACT, method: str = "spearman") -> pl.DataFrame:
    """For each metric and each evaluator but ``reference``: the rank agreement over the strategies
    of their means (calibration_table) with the reference's, Spearman's rho (``method`` "spearman")
    or Kendall's tau-b ("kendall") from scipy.stats, with its p-value (NaN where one side is constant)."""
    if method not in ("spearman", "kendall"):
        raise ValueError(f"method is 'spearman' or 'kendall', not {method!r}")
    truth = table.filter(pl.col("evaluator") == reference).select("strategy", "metric", pl.col("mean").alias("_truth"))
    paired = table.filter(pl.col("evaluator") != reference).join(truth, on=["strategy", "metric"])
    rows = []
    for (metric, evaluator), group in paired.group_by("metric", "evaluator", maintain_order=True):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a constant side: scipy warns and answers NaN
            statistic, p_value = _rank_test(group["mean"].to_numpy(), group["_truth"].to_numpy(), method)
        rows.append((metric, evaluator, method, group.height, statistic, p_value))
    schema = ["metric", "evaluator", "method", "strategies", "statistic", "p_value"]
    return pl.DataFrame(rows, schema=schema, orient="row").sort("metric", "evaluator")


def _rank_test(x: np.ndarray, y: np.ndarray, method: str) -> tuple[float, float]:
    """Spearman's rho or Kendall's tau-b of two samples with its p-value."""
    if method == "spearman":
        rho = stats.spearmanr(x, y)
        return float(rho.statistic), float(rho.pvalue)
    tau = stats.kendalltau(x, y)
    return float(tau.statistic), float(tau.pvalue)
