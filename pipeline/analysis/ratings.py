"""Strategy ratings on the Elo scale, fitted to a study's pairings (pipeline.analysis.metrics.outcomes).

The model is Bradley–Terry (Bradley & Terry 1952, "Rank analysis of incomplete block designs")
with a first-move term, as the home-advantage (order) term of paired-comparison models (Agresti,
Categorical Data Analysis, 3rd ed., section 11.6). It comes in two forms, chosen by ``first_move``:

    shared        P(South = i beats North = j) = logistic(theta_i - theta_j + h)
    per_strategy  P(South = i beats North = j) = logistic(theta_i - theta_j + h_i)

In the per-strategy form the first-move term belongs to the strategy in South's seat (a home
advantage that depends on the team at home): a strategy may gain more from moving first than
another. Games of a strategy against itself say nothing of its strength (theta cancels) but
inform h, or h_i directly.

A draw counts as half a win for each side (the Elo convention), so a pairing contributes its
score y = south_wins + draws / 2 out of its n games to a binomial likelihood.

The fit is a MAP estimate: Newton–Raphson on the log-likelihood plus an independent Gaussian
prior N(0, prior_sd^2) on every theta and on every first-move term. The prior keeps the ratings
finite under complete separation (a strategy that never loses, such as "perfect", has an
infinite maximum-likelihood rating); with thousands of games per pairing its pull on any
strategy that both wins and loses is a fraction of an Elo point, so it matters only for
separated strategies, whose rating and interval it then sets. The prior is symmetric in the
strategies, so the choice of anchor only shifts the ratings.

Which ratings the games bound is exact, not a judgement of the prior's pull: the maximum-likelihood
ratings are finite if and only if the strategies cannot be split into two groups with one group
never scoring (no win, no draw) against the other (Ford 1957, "Solution of a ranking problem
from binary comparisons", American Mathematical Monthly 64:28; Zermelo 1929), that is, if the
graph "i scored against j" is strongly connected. A strategy's rating, a contrast with the
anchor's, is bounded when it lies in the anchor's strongly connected component (with no anchor,
when the whole graph is one component); the ladder's column ``bounded`` says so, and a rating
that is not bounded is the prior's number, not the games'.

Goodness of fit (McCullagh & Nelder, Generalized Linear Models, 2nd ed., chapter 4 on binary
data with section 4.5 on over-dispersion, and chapter 9 on quasi-likelihood), with mu = n p the fitted
expected score of a pairing and 0 log 0 = 0:

    deviance    D = 2 sum[y log(y / mu) + (n - y) log((n - y) / (n - mu))]
    pearson     X^2 = sum (y - mu)^2 / (n p (1 - p))
    df          pairings with games - parameters, where parameters is the rank of the design
                matrix: strategies - 1 for the ratings plus the first-move terms (1 shared, or
                one per strategy that played South), fewer only if the games leave some unidentified
    dispersion  phi = X^2 / df, NaN when df <= 0 (a saturated model leaves nothing to measure it)
    p           P(chi^2_df > D), the deviance test of the model against the saturated one; NaN
                when df <= 0
    scale       sqrt(max(1, phi)), 1 when df <= 0

Both statistics are taken at the MAP estimate, which with the weak default prior is the
maximum-likelihood estimate except for separated strategies. The chi-square reference needs
fair counts in each pairing; with the thousands of games of a study it has them.

Ratings are reported on the Elo scale (400 / ln 10 Elo per logit: a 400-point gap is odds of
10 to 1), relative to an anchor strategy (rating 0 by definition) or to the mean of the
ratings, with 95% Wald intervals from the inverse of the negative Hessian at the estimate, each
half-width multiplied by ``scale``: the quasi-likelihood remedy for over-dispersion, which
widens the intervals when the model leaves more spread between pairings than binomial sampling
explains (phi > 1), and never narrows them. Treating every game as a Bernoulli trial in its
score makes the intervals slightly wide when draws are common (a draw has no spread), and phi
slightly low for the same reason.

    ratings(pairings)  a Ratings: the ladder (one row per strategy), the first-move terms and the fit
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np
import polars as pl
from scipy.sparse import csr_array
from scipy.sparse.csgraph import connected_components
from scipy.special import expit, log_expit, xlogy
from scipy.stats import chi2

from pipeline.analysis.stats import Z95, Estimate, points

ELO_PER_LOGIT = 400 / math.log(10)
PRIOR_SD = 1000.0  # Elo; weak: about 5.8 logits, odds of 300 to 1 at one standard deviation
COLUMNS = ("south", "north", "games", "south_wins", "draws", "north_wins")
FirstMove = Literal["shared", "per_strategy"]
FIRST_MOVES: tuple[str, ...] = get_args(FirstMove)
FIRST_MOVE_SCHEMA = {
    "strategy": pl.String,
    "elo": pl.Float64,
    "low": pl.Float64,
    "high": pl.Float64,
    "expected_score": pl.Float64,
    "expected_score_low": pl.Float64,
    "expected_score_high": pl.Float64,
    "games": pl.Int64,
}
# Pearson's dispersion above which the model does not describe the games (twice the binomial
# spread): its ratings are a rough summary and no first-move term should be read from it.
MISFIT_DISPERSION = 2.0
_TOLERANCE = 1e-10  # logits, on the largest Newton step
_MAX_STEPS = 200
_MAX_HALVINGS = 60
_SLACK = 1e-13  # relative, in the log-posterior


class _DefaultAnchor(str):
    """The default anchor: unlike an anchor named by the caller, it may be absent from a study."""

    __slots__ = ()


DEFAULT_ANCHOR: str = _DefaultAnchor("random")


@dataclass(frozen=True)
class Fit:
    """How well the model fits the pairings; the module docstring gives the formulas.

    pairings: ordered pairings with games, the binomial observations.
    parameters: the free parameters, the rank of the design matrix.
    df: pairings - parameters.
    deviance, pearson: the binomial deviance and Pearson's chi-square of the scores at the estimate.
    dispersion: pearson / df, or NaN when df <= 0.
    p: the chi-square upper tail of the deviance on df, or NaN when df <= 0.
    scale: the factor on every Wald half-width, sqrt(max(1, dispersion)), or 1 when df <= 0.
    """

    pairings: int
    parameters: int
    df: int
    deviance: float
    pearson: float
    dispersion: float
    p: float
    scale: float


@dataclass(frozen=True)
class Ratings:
    """A fitted ladder. Every interval is a 95% Wald interval with its half-width multiplied by
    fit.scale (wider when the pairings are over-dispersed around the model).

    ladder: one row per strategy, strongest first, with columns
        strategy (str), rating, low, high (Elo, the rating's contrast with the anchor, or with
        the mean rating when there is no anchor), bounded (bool: the games bound the rating, see
        the module docstring; False means rating, low and high are set by the prior), games
        (i64, games against other strategies), score (its mean score in those games, a draw
        counting one half) and self_games (i64, games against itself, which inform only the
        first-move terms).
    first_move: h in Elo (positive: South, who moves first, is favoured). In the per-strategy
        model, the mean of the h_i of the strategies that played South.
    first_player_score: logistic(first_move), South's expected score between equal strategies,
        with the interval mapped from first_move's.
    anchor: the strategy rated 0, or None when the ratings are centred on their mean.
    prior_sd: the standard deviation of the Gaussian prior on every theta and first-move term, in Elo.
    first_moves: the first-move terms, with the columns of FIRST_MOVE_SCHEMA: strategy (null for
        the shared term; otherwise the strategy in South's seat, in name order), elo, low, high,
        expected_score, expected_score_low, expected_score_high (logistic of elo, low and high:
        the first player's expected score between equals) and games (i64, the games that inform
        the term). A strategy that never played South keeps its row with null values.
    fit: the goodness of fit, and the scale of the intervals.
    first_move_model: "shared" (one h) or "per_strategy" (an h_i for each strategy in South's seat).
    """

    ladder: pl.DataFrame
    first_move: Estimate
    first_player_score: Estimate
    anchor: str | None
    prior_sd: float
    first_moves: pl.DataFrame
    fit: Fit
    first_move_model: FirstMove


def ratings(
    pairings: pl.DataFrame, anchor: str | None = DEFAULT_ANCHOR, prior_sd: float = PRIOR_SD, first_move: FirstMove = "shared"
) -> Ratings:
    """The Bradley–Terry ratings (with a first-move term) of the strategies of ``pairings``.

    ``pairings`` holds counts per ordered pairing in the columns of pipeline.analysis.metrics.outcomes
    (south, north, games, south_wins, draws, north_wins; other columns are ignored, repeated
    pairings are added up). The ratings are relative to ``anchor``; with ``anchor=None``, or
    when the default anchor "random" did not play, they are centred on their mean. An anchor
    named explicitly must be among the strategies. ``prior_sd`` (Elo, positive and finite) is
    the scale of the Gaussian prior that keeps separated strategies finite. ``first_move`` is
    "shared" (one term h for every pairing) or "per_strategy" (a term h_i for the strategy i in
    South's seat). The intervals are widened by the fit's scale when the data are over-dispersed.

    Raises ValueError, with a one-line message, for missing columns, inconsistent or negative
    counts, no games, strategies not all connected by games between them, an absent anchor, an
    unknown first_move, or a table of several rule sets (a column rules with more than one value).
    """
    _check_options(prior_sd, first_move)
    counts = _counts(pairings)
    strategies = sorted(set(counts["south"].to_list()) | set(counts["north"].to_list()))
    _check_connected(strategies, counts)
    anchor = _anchor(anchor, strategies)
    design, scores, games = _design(counts, strategies, first_move)
    estimate, covariance = _fit(design, scores, games, (ELO_PER_LOGIT / prior_sd) ** 2)
    fit = _goodness(design, scores, games, estimate)
    size = len(strategies)
    terms, spread = estimate[size:], covariance[size:, size:]
    mean = _mean_term(_mean_weights(strategies, counts, first_move), terms, spread, fit.scale)
    return Ratings(
        ladder=_ladder(strategies, anchor, estimate[:size], covariance[:size, :size], fit.scale, counts),
        first_move=_elo(*mean),
        first_player_score=_expected_score(*mean),
        anchor=anchor,
        prior_sd=prior_sd,
        first_moves=_first_moves(strategies, first_move, terms, spread, fit.scale, counts),
        fit=fit,
        first_move_model=first_move,
    )


def fits_poorly(dispersion: float) -> bool:
    """Whether a fit's dispersion (Fit.dispersion) says the model does not describe the games:
    above MISFIT_DISPERSION. The report and the notebooks headline no first-move term then."""
    return math.isfinite(dispersion) and dispersion > MISFIT_DISPERSION


def _check_options(prior_sd: float, first_move: str) -> None:
    """Raise for a prior scale that is not a positive finite number or an unknown first-move model."""
    if not (prior_sd > 0 and math.isfinite(prior_sd)):
        raise ValueError(f"prior_sd must be a positive, finite number of Elo points, not {prior_sd}")
    if first_move not in FIRST_MOVES:
        raise ValueError(f"first_move must be one of {', '.join(map(repr, FIRST_MOVES))}, not {first_move!r}")


def _counts(pairings: pl.DataFrame) -> pl.DataFrame:
    """The counts per ordered pairing with games, checked and summed over repeated pairings."""
    missing = [column for column in COLUMNS if column not in pairings.columns]
    if missing:
        raise ValueError(f"ratings need the columns of pipeline.analysis.metrics.outcomes; missing: {', '.join(missing)}")
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


def _design(counts: pl.DataFrame, strategies: list[str], first_move: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The design matrix, South's scores and the games of each pairing.

    A row per pairing: +1 for South's theta and -1 for North's in the first len(strategies)
    columns, then 1 in the column of the first-move term (the only one when shared, South's own
    when per strategy)."""
    index = {name: position for position, name in enumerate(strategies)}
    size = len(strategies)
    south = np.array([index[name] for name in counts["south"]], dtype=np.int64)
    design = np.zeros((counts.height, size + (1 if first_move == "shared" else size)))
    rows = np.arange(counts.height)
    # one column per row in each statement, so += is safe; a self-play row nets 0 on theta
    design[rows, south] += 1.0
    design[rows, [index[name] for name in counts["north"]]] -= 1.0
    design[rows, size + (0 if first_move == "shared" else south)] = 1.0
    scores = points(counts["south_wins"], counts["draws"]).to_numpy().astype(float)
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


def _goodness(design: np.ndarray, scores: np.ndarray, games: np.ndarray, estimate: np.ndarray) -> Fit:
    """The deviance, Pearson's chi-square and the dispersion of the scores at the estimate."""
    logits = design @ estimate
    deviance, pearson = _deviance(scores, games, logits), _pearson(scores, games, logits)
    parameters = int(np.linalg.matrix_rank(design))
    df = len(scores) - parameters
    if df <= 0:
        return Fit(len(scores), parameters, df, deviance, pearson, math.nan, math.nan, 1.0)
    dispersion = pearson / df
    p = float(chi2.sf(deviance, df))
    return Fit(len(scores), parameters, df, deviance, pearson, dispersion, p, math.sqrt(max(1.0, dispersion)))


def _deviance(scores: np.ndarray, games: np.ndarray, logits: np.ndarray) -> float:
    """2 sum[y log(y / (n p)) + (n - y) log((n - y) / (n (1 - p)))], with 0 log 0 = 0."""
    losses = games - scores
    # y log(y / (n p)) = y log(y / n) - y log p: finite however close p comes to 0 or 1
    scored = xlogy(scores, scores / games) - scores * log_expit(logits)
    lost = xlogy(losses, losses / games) - losses * log_expit(-logits)
    return 2 * float(np.sum(scored + lost))


def _pearson(scores: np.ndarray, games: np.ndarray, logits: np.ndarray) -> float:
    """sum (y - n p)^2 / (n p (1 - p))."""
    chance = expit(logits)
    return float(np.sum((scores - games * chance) ** 2 / (games * chance * expit(-logits))))


def _ladder(
    strategies: list[str], anchor: str | None, thetas: np.ndarray, covariance: np.ndarray, scale: float, counts: pl.DataFrame
) -> pl.DataFrame:
    """One row per strategy, strongest first: the rating contrasts in Elo with their intervals
    (half-widths times ``scale``), and the games and score of each strategy against the others."""
    contrasts = _contrasts(strategies, anchor)
    rating = contrasts @ thetas * ELO_PER_LOGIT
    spread = Z95 * np.sqrt(np.clip(np.einsum("ij,jk,ik->i", contrasts, covariance, contrasts), 0, None))
    spread *= scale * ELO_PER_LOGIT
    table = pl.DataFrame(
        {
            "strategy": strategies,
            "rating": rating,
            "low": rating - spread,
            "high": rating + spread,
            "bounded": _bounded(strategies, anchor, counts),
        },
        schema={"strategy": pl.String, "rating": pl.Float64, "low": pl.Float64, "high": pl.Float64, "bounded": pl.Boolean},
    )
    return table.join(_records(strategies, counts), on="strategy").sort(["rating", "strategy"], descending=[True, False])


def _bounded(strategies: list[str], anchor: str | None, counts: pl.DataFrame) -> np.ndarray:
    """Per strategy, whether the games bound its rating (Ford's condition, module docstring): it
    shares the anchor's strongly connected component of the graph "scored against" (a win or a
    draw, in either seat, against another strategy); with no anchor, every strategy is bounded
    when the graph is one component, and none otherwise."""
    index = {name: position for position, name in enumerate(strategies)}
    scored = np.zeros((len(strategies), len(strategies)), dtype=bool)
    for south, north, south_wins, draws, north_wins in counts.select(
        "south", "north", "south_wins", "draws", "north_wins"
    ).iter_rows():
        scored[index[south], index[north]] |= south_wins + draws > 0
        scored[index[north], index[south]] |= north_wins + draws > 0
    np.fill_diagonal(scored, False)
    components, labels = connected_components(csr_array(scored), directed=True, connection="strong")
    if anchor is None:
        return np.full(len(strategies), components == 1)
    return labels == labels[index[anchor]]


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
                pl.col("south").alias("strategy"), "games", points(pl.col("south_wins"), pl.col("draws")).alias("points")
            ),
            others.select(
                pl.col("north").alias("strategy"), "games", points(pl.col("north_wins"), pl.col("draws")).alias("points")
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


def _mean_weights(strategies: list[str], counts: pl.DataFrame, first_move: str) -> np.ndarray:
    """The weights that make first_move of the first-move terms: the shared term itself, or the
    mean of the terms of the strategies that played South."""
    if first_move == "shared":
        return np.ones(1)
    played = np.isin(strategies, counts["south"].to_list()).astype(float)
    return played / played.sum()


def _mean_term(weights: np.ndarray, terms: np.ndarray, covariance: np.ndarray, scale: float) -> tuple[float, float]:
    """The weighted sum of the first-move terms and the half-width of its interval, in logits."""
    return float(weights @ terms), float(Z95 * scale * math.sqrt(weights @ covariance @ weights))


def _first_moves(
    strategies: list[str], first_move: str, terms: np.ndarray, covariance: np.ndarray, scale: float, counts: pl.DataFrame
) -> pl.DataFrame:
    """One row per first-move term (the shared one, or one per strategy in South's seat) with its
    interval in Elo and as an expected score, and the games that inform it."""
    halves = Z95 * scale * np.sqrt(np.diag(covariance))
    names: list[str | None] = [None] if first_move == "shared" else list(strategies)
    games = [_south_games(name, counts) for name in names]
    rows = [
        (name, *_elo(term, half), *_expected_score(term, half), played)
        for name, term, half, played in zip(names, terms.tolist(), halves.tolist(), games, strict=True)
    ]
    table = pl.DataFrame(rows, schema=FIRST_MOVE_SCHEMA, orient="row")
    # without a game in South's seat a strategy's term is the prior's alone: no estimate at all
    return table.with_columns(pl.when(pl.col("games") > 0).then(pl.all().exclude("strategy", "games")))


def _south_games(name: str | None, counts: pl.DataFrame) -> int:
    """The games with ``name`` in South's seat, or all games for the shared term (name None)."""
    return int((counts if name is None else counts.filter(pl.col("south") == name))["games"].sum())


def _elo(logit: float, half: float) -> Estimate:
    """A term and its interval, given in logits, in Elo."""
    return Estimate(logit * ELO_PER_LOGIT, (logit - half) * ELO_PER_LOGIT, (logit + half) * ELO_PER_LOGIT)


def _expected_score(logit: float, half: float) -> Estimate:
    """logistic of a term, with its interval mapped through the (increasing) logistic function."""
    return Estimate(_logistic(logit), _logistic(logit - half), _logistic(logit + half))


def _logistic(logit: float) -> float:
    return float(expit(logit))
