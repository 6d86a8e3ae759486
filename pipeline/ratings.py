"""Strategy ratings on the Elo scale, fitted to a study's pairings (pipeline.metrics.outcomes).

The model is Bradley–Terry (Bradley & Terry 1952, "Rank analysis of incomplete block designs")
with a first-move term, as the home-advantage term of paired-comparison models (Agresti,
Categorical Data Analysis, 3rd ed., section 11.6):

    P(South = i beats North = j) = logistic(theta_i - theta_j + h)

A draw counts as half a win for each side (the Elo convention), so a pairing contributes its
score south_wins + draws / 2 out of its games to a binomial likelihood. Games of a strategy
against itself say nothing of its strength but do inform h.

The fit is a MAP estimate: Newton–Raphson on the log-likelihood plus an independent Gaussian
prior N(0, prior_sd^2) on every theta and on h. The prior keeps the ratings finite under
complete separation (a strategy that never loses, such as "perfect", has an infinite maximum-
likelihood rating); with thousands of games per pairing its pull on any strategy that both wins
and loses is a fraction of an Elo point, so it matters only for separated strategies, whose
rating and interval it then sets. The prior is symmetric in the strategies, so the choice of
anchor only shifts the ratings.

Ratings are reported on the Elo scale (400 / ln 10 Elo per logit: a 400-point gap is odds of
10 to 1), relative to an anchor strategy (rating 0 by definition) or to the mean of the
ratings, with 95% Wald intervals from the inverse of the negative Hessian at the estimate.
Treating every game as a Bernoulli trial in its score makes the intervals slightly wide when
draws are common (a draw has no spread).

    ratings(pairings)  a Ratings: the ladder (one row per strategy) and the first-move term
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import polars as pl

from pipeline.stats import Z95, Estimate

ELO_PER_LOGIT = 400 / math.log(10)
PRIOR_SD = 1000.0  # Elo; weak: about 5.8 logits, odds of 300 to 1 at one standard deviation
COLUMNS = ("south", "north", "games", "south_wins", "draws", "north_wins")
_TOLERANCE = 1e-10  # logits, on the largest Newton step
_MAX_STEPS = 200
_MAX_HALVINGS = 60
_SLACK = 1e-13  # relative, in the log-posterior


class _DefaultAnchor(str):
    """The default anchor: unlike an anchor named by the caller, it may be absent from a study."""

    __slots__ = ()


DEFAULT_ANCHOR: str = _DefaultAnchor("random")


@dataclass(frozen=True)
class Ratings:
    """A fitted ladder.

    ladder: one row per strategy, strongest first, with columns
        strategy (str), rating, low, high (Elo, 95% Wald interval of the rating's contrast with
        the anchor, or with the mean rating when there is no anchor), games (i64, games against
        other strategies), score (its mean score in those games, a draw counting one half) and
        self_games (i64, games against itself, which inform only the first-move term).
    first_move: h in Elo with its 95% interval (positive: South, who moves first, is favoured).
    first_player_score: logistic(h), South's expected score between equal strategies, with the
        interval mapped from h's.
    anchor: the strategy rated 0, or None when the ratings are centred on their mean.
    prior_sd: the standard deviation of the Gaussian prior on every theta and on h, in Elo.
    """

    ladder: pl.DataFrame
    first_move: Estimate
    first_player_score: Estimate
    anchor: str | None
    prior_sd: float


def ratings(pairings: pl.DataFrame, anchor: str | None = DEFAULT_ANCHOR, prior_sd: float = PRIOR_SD) -> Ratings:
    """The Bradley–Terry ratings (with a first-move term) of the strategies of ``pairings``.

    ``pairings`` holds counts per ordered pairing in the columns of pipeline.metrics.outcomes
    (south, north, games, south_wins, draws, north_wins; other columns are ignored, repeated
    pairings are added up). The ratings are relative to ``anchor``; with ``anchor=None``, or
    when the default anchor "random" did not play, they are centred on their mean. An anchor
    named explicitly must be among the strategies. ``prior_sd`` (Elo, positive and finite) is
    the scale of the Gaussian prior that keeps separated strategies finite.

    Raises ValueError, with a one-line message, for missing columns, inconsistent or negative
    counts, no games, strategies not all connected by games between them, an absent anchor, or
    a table of several rule sets (a column rules with more than one value).
    """
    if not (prior_sd > 0 and math.isfinite(prior_sd)):
        raise ValueError(f"prior_sd must be a positive, finite number of Elo points, not {prior_sd}")
    counts = _counts(pairings)
    strategies = sorted(set(counts["south"].to_list()) | set(counts["north"].to_list()))
    _check_connected(strategies, counts)
    anchor = _anchor(anchor, strategies)
    design, scores, games = _design(counts, strategies)
    estimate, covariance = _fit(design, scores, games, (ELO_PER_LOGIT / prior_sd) ** 2)
    return Ratings(
        ladder=_ladder(strategies, anchor, estimate, covariance, counts),
        first_move=_first_move(estimate, covariance),
        first_player_score=_first_player_score(estimate, covariance),
        anchor=anchor,
        prior_sd=prior_sd,
    )


def _counts(pairings: pl.DataFrame) -> pl.DataFrame:
    """The counts per ordered pairing with games, checked and summed over repeated pairings."""
    missing = [column for column in COLUMNS if column not in pairings.columns]
    if missing:
        raise ValueError(f"ratings need the columns of pipeline.metrics.outcomes; missing: {', '.join(missing)}")
    if "rules" in pairings.columns and pairings["rules"].n_unique() > 1:
        raise ValueError("ratings are fitted one rule set at a time: filter the table to one value of its rules column")
    if pairings.select(pl.any_horizontal(pl.col(COLUMNS[2:]) < 0).any()).item():
        raise ValueError("ratings need non-negative counts of games, wins and draws")
    counts = pairings.select(COLUMNS).group_by("south", "north").agg(pl.col(COLUMNS[2:]).cast(pl.Int64).sum())
    if counts.filter(pl.col("south_wins") + pl.col("draws") + pl.col("north_wins") != pl.col("games")).height:
        raise ValueError("ratings need south_wins + draws + north_wins == games in every pairing")
    counts = counts.filter(pl.col("games") > 0).sort("south", "north")
    if counts.is_empty():
        raise ValueError("ratings need at least one game; the pairings hold none")
    return counts


def _check_connected(strategies: list[str], counts: pl.DataFrame) -> None:
    """Raise unless games between different strategies link every strategy to every other."""
    neighbours: dict[str, set[str]] = {name: set() for name in strategies}
    for south, north in counts.select("south", "north").iter_rows():
        neighbours[south].add(north)
        neighbours[north].add(south)
    reached = {strategies[0]}
    frontier = [strategies[0]]
    while frontier:
        fresh = neighbours[frontier.pop()] - reached
        reached |= fresh
        frontier.extend(fresh)
    if len(reached) < len(strategies):
        apart = sorted(set(strategies) - reached)
        raise ValueError(f"ratings need connected pairings: {', '.join(sorted(reached))} never met {', '.join(apart)}")


def _anchor(anchor: str | None, strategies: list[str]) -> str | None:
    """The anchor to use: None (mean-centred) for no anchor or a default anchor that did not play."""
    if anchor is None or anchor in strategies:
        return None if anchor is None else str(anchor)
    if isinstance(anchor, _DefaultAnchor):
        return None
    raise ValueError(f"anchor {anchor!r} is not among the strategies ({', '.join(strategies)}); name one or pass None")


def _design(counts: pl.DataFrame, strategies: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The design matrix (a row per pairing: +1 for South's theta, -1 for North's, 1 for h in the
    last column), South's scores and the games of each pairing."""
    index = {name: position for position, name in enumerate(strategies)}
    design = np.zeros((counts.height, len(strategies) + 1))
    rows = np.arange(counts.height)
    # one column per row in each statement, so += is safe; a self-play row nets 0 on theta
    design[rows, [index[name] for name in counts["south"]]] += 1.0
    design[rows, [index[name] for name in counts["north"]]] -= 1.0
    design[:, -1] = 1.0
    scores = (counts["south_wins"] + counts["draws"] / 2).to_numpy().astype(float)
    return design, scores, counts["games"].to_numpy().astype(float)


def _fit(design: np.ndarray, scores: np.ndarray, games: np.ndarray, precision: float) -> tuple[np.ndarray, np.ndarray]:
    """The MAP estimate (in logits) and its covariance, the inverse of the negative Hessian.

    Newton–Raphson with step halving; the objective is strictly concave, so it converges."""
    estimate = np.zeros(design.shape[1])
    for _ in range(_MAX_STEPS):
        gradient, information = _derivatives(estimate, design, scores, games, precision)
        step = np.linalg.solve(information, gradient)
        estimate = _damped(estimate, step, design, scores, games, precision)
        if np.max(np.abs(step)) < _TOLERANCE:
            _, information = _derivatives(estimate, design, scores, games, precision)
            return estimate, np.linalg.inv(information)
    raise ArithmeticError(f"the ratings did not converge in {_MAX_STEPS} Newton steps")


def _derivatives(
    estimate: np.ndarray, design: np.ndarray, scores: np.ndarray, games: np.ndarray, precision: float
) -> tuple[np.ndarray, np.ndarray]:
    """The gradient of the log-posterior and its negative Hessian (the information)."""
    expected = 1 / (1 + np.exp(-(design @ estimate)))
    gradient = design.T @ (scores - games * expected) - precision * estimate
    weights = games * expected * (1 - expected)
    information = design.T @ (weights[:, None] * design) + precision * np.eye(design.shape[1])
    return gradient, information


def _log_posterior(estimate: np.ndarray, design: np.ndarray, scores: np.ndarray, games: np.ndarray, precision: float) -> float:
    """The log-likelihood of the scores plus the log prior, up to a constant."""
    logits = design @ estimate
    # logaddexp(0, x) = log(1 + e^x) without overflow for confident pairings
    likelihood = -scores @ np.logaddexp(0, -logits) - (games - scores) @ np.logaddexp(0, logits)
    return float(likelihood - precision * (estimate @ estimate) / 2)


def _damped(
    estimate: np.ndarray, step: np.ndarray, design: np.ndarray, scores: np.ndarray, games: np.ndarray, precision: float
) -> np.ndarray:
    """The estimate after the Newton step, halved until the log-posterior does not fall; a full
    step from far off can overshoot when a strategy is (nearly) separated."""
    before = _log_posterior(estimate, design, scores, games, precision)
    for _ in range(_MAX_HALVINGS):
        proposal = estimate + step
        # the slack lets a step through that roundoff alone makes look downhill near the optimum
        if _log_posterior(proposal, design, scores, games, precision) >= before - _SLACK * (1 + abs(before)):
            return proposal
        step = step / 2
    return estimate


def _ladder(
    strategies: list[str], anchor: str | None, estimate: np.ndarray, covariance: np.ndarray, counts: pl.DataFrame
) -> pl.DataFrame:
    """One row per strategy, strongest first: the rating contrasts in Elo with their intervals,
    and the games and score of each strategy against the others."""
    contrasts = _contrasts(strategies, anchor)
    rating = contrasts @ estimate[:-1] * ELO_PER_LOGIT
    spread = Z95 * np.sqrt(np.clip(np.einsum("ij,jk,ik->i", contrasts, covariance[:-1, :-1], contrasts), 0, None))
    spread *= ELO_PER_LOGIT
    table = pl.DataFrame(
        {"strategy": strategies, "rating": rating, "low": rating - spread, "high": rating + spread},
        schema={"strategy": pl.String, "rating": pl.Float64, "low": pl.Float64, "high": pl.Float64},
    )
    return table.join(_records(strategies, counts), on="strategy").sort(["rating", "strategy"], descending=[True, False])


def _contrasts(strategies: list[str], anchor: str | None) -> np.ndarray:
    """Row i maps the thetas to strategy i's rating: theta_i - theta_anchor, or theta_i - mean(theta)."""
    size = len(strategies)
    if anchor is None:
        return np.eye(size) - 1 / size
    contrasts = np.eye(size)
    contrasts[:, strategies.index(anchor)] -= 1
    return contrasts


def _records(strategies: list[str], counts: pl.DataFrame) -> pl.DataFrame:
    """Per strategy: games and mean score against other strategies (null without any), and games
    against itself."""
    others = counts.filter(pl.col("south") != pl.col("north"))
    seats = pl.concat(
        [
            others.select(
                pl.col("south").alias("strategy"), "games", (pl.col("south_wins") + pl.col("draws") / 2).alias("points")
            ),
            others.select(
                pl.col("north").alias("strategy"), "games", (pl.col("north_wins") + pl.col("draws") / 2).alias("points")
            ),
        ]
    )
    played = seats.group_by("strategy").agg(
        pl.col("games").sum(), (pl.col("points").sum() / pl.col("games").sum()).alias("score")
    )
    alone = counts.filter(pl.col("south") == pl.col("north")).select(
        pl.col("south").alias("strategy"), pl.col("games").alias("self_games")
    )
    table = pl.DataFrame({"strategy": strategies}, schema={"strategy": pl.String})
    table = table.join(played, on="strategy", how="left").join(alone, on="strategy", how="left")
    return table.with_columns(pl.col("games", "self_games").fill_null(0))


def _first_move(estimate: np.ndarray, covariance: np.ndarray) -> Estimate:
    """h in Elo with its 95% Wald interval."""
    h, spread = estimate[-1], Z95 * math.sqrt(covariance[-1, -1])
    return Estimate(float(h * ELO_PER_LOGIT), float((h - spread) * ELO_PER_LOGIT), float((h + spread) * ELO_PER_LOGIT))


def _first_player_score(estimate: np.ndarray, covariance: np.ndarray) -> Estimate:
    """logistic(h) with h's interval mapped through the (increasing) logistic function."""
    h, spread = estimate[-1], Z95 * math.sqrt(covariance[-1, -1])
    return Estimate(_logistic(h), _logistic(h - spread), _logistic(h + spread))


def _logistic(logit: float) -> float:
    return float(1 / (1 + math.exp(-logit)))
