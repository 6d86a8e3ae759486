"""An exact outcome as ``modiar exact`` gives it: a JSON record (``exact_record``) or a page of
text (``exact_text``), with the summaries of the length distribution (median, percentiles) and
the mean final margin that engine.ExactOutcome does not hold itself."""

from __future__ import annotations

import math

import numpy as np

import engine
from engine.game import EVENT_BY_NAME

# modiar exact: the float sums of a length distribution may fall short of a cumulative probability
# they reach exactly (engine.exact.outcome: its rounding stays far below 1e-12).
ROUNDING = 1e-12
# modiar exact's text: an exact outcome's figures carry float error (a mean of 7.5 computed as
# 7.500000001, 6 as 5.999999999); within NOISE of 1 or of a whole number a figure prints as that,
# and a probability nearer than SMALLEST to 0 or 1 as "< 0.000001" or "> 0.999999".
NOISE = 1e-8
SMALLEST = 1e-6


def exact_record(outcome: engine.ExactOutcome, seconds: dict[str, float]) -> dict[str, object]:
    """Everything ``modiar exact --json`` prints, in a fixed order."""
    rules = outcome.rules
    return {
        "south": outcome.south,
        "north": outcome.north,
        "rules": {"name": rules.name, "fields": {name: getattr(rules, name) for name in engine.Rules.__dataclass_fields__}},
        "engine_version": engine.ENGINE_VERSION,
        "south_win": float(outcome.south_win),
        "draw": float(outcome.draw),
        "north_win": float(outcome.north_win),
        "first_player_score": float(outcome.first_player_score),
        "margin_mean": _margin_mean(outcome),
        "margin": {str(margin): float(p) for margin, p in sorted(outcome.margin.items())},
        "length": _length_summary(outcome),
        "plies": [float(p) for p in outcome.plies],
        "event_fires": {name: float(outcome.event_fires[name]) for name in engine.EVENTS},
        "event_mean": {name: float(outcome.event_mean[name]) for name in engine.EVENTS},
        "unresolved": float(outcome.unresolved),
        "seconds": seconds,
    }


def exact_text(outcome: engine.ExactOutcome, seconds: dict[str, float]) -> str:
    """The outcome as a page a researcher reads: every probability by ``probability``, the rule
    events the rule set allows by their words in the reports (engine.game.Event.short)."""
    length, cap = _length_summary(outcome), outcome.rules.ply_cap
    likely = sorted(outcome.margin.items(), key=lambda item: (-item[1], item[0]))[:3]
    lines = [
        f"exact outcome: {outcome.south} (South) against {outcome.north} (North), rules {outcome.rules.name}",
        "",
        f"{'result':<32}{'probability':>14}",
        f"{'South wins':<32}{probability(outcome.south_win):>14}",
        f"{'draws':<32}{probability(outcome.draw):>14}",
        f"{'North wins':<32}{probability(outcome.north_win):>14}",
        f"{'first-player score':<32}{probability(outcome.first_player_score):>14}"
        "   (South's expected score, a draw counting 1/2)",
        "",
        "game length (plies)",
        f"{'  mean':<32}{length['mean']:>14.3f}",
        f"{'  standard deviation':<32}{length['standard_deviation']:>14.3f}",
        f"{'  median':<32}{_ply_text(length['median']):>14}",
        f"{'  1st percentile':<32}{_ply_text(length['percentile_1']):>14}",
        f"{'  99th percentile':<32}{_ply_text(length['percentile_99']):>14}",
        f"{f'  reaches the cap of {cap}':<32}{probability(float(outcome.plies[cap])):>14}",
        "",
        "final margin (South's score minus North's)",
        f"{'  mean':<32}{_margin_mean(outcome):>14.3f}",
        f"{'  most likely':<32}{'   '.join(f'{margin:+d} ({probability(p)})' for margin, p in likely)}",
        "",
        f"{'rule event':<32}{'fires at least once':>22}{'mean per game':>18}",
    ]
    for name in engine.possible_events(outcome.rules):
        event = EVENT_BY_NAME[name]
        lines.append(f"{event.short:<32}{probability(outcome.event_fires[name]):>22}{mean(outcome.event_mean[name]):>18}")
    total = seconds["tables"] + seconds["propagation"]
    lines += [
        "",
        "rounded to 4 decimals, or to 2 significant digits near 0 and 1; --json gives every figure in full",
        f"unresolved: {probability(outcome.unresolved)} (the mass of games still in play when the propagation stopped,"
        " or set aside in the tail)",
        f"time: {total:.2f} s (tables, read or built: {seconds['tables']:.2f} s; propagation: {seconds['propagation']:.2f} s)",
    ]
    return "\n".join(lines)


def probability(p: float) -> str:
    """A probability as a paper prints it, never with an exponent: 4 decimals (0.7141, 0.0396),
    or 2 significant digits of its distance from 0 or 1 where 4 decimals would round it away
    (0.000083, 0.9999917); 0 for 0 and 1 for 1 within NOISE, and "< 0.000001" or "> 0.999999"
    nearer than SMALLEST to them."""
    if p <= 0:
        return "0"
    if p >= 1 - NOISE:
        return "1"
    if p < SMALLEST:
        return f"< {SMALLEST:.6f}"
    if 1 - p < SMALLEST:
        return f"> {1 - SMALLEST:.6f}"
    return f"{p:.{_decimals(min(p, 1 - p))}f}"


def mean(value: float) -> str:
    """A mean count per game, as ``probability`` prints a small one: 4 decimals (33.2729, 0.0826),
    2 significant digits below a thousandth, a whole number within NOISE as one (6, not 5.999999999)."""
    if abs(value - round(value)) <= NOISE * max(1.0, abs(value)):
        return str(round(value))
    return f"< {SMALLEST:.6f}" if value < SMALLEST else f"{value:.{_decimals(value)}f}"


def _decimals(gap: float) -> int:
    """The decimals that show 2 significant digits of ``gap``, and at least 4."""
    return max(4, 1 - math.floor(math.log10(gap)))


def _length_summary(outcome: engine.ExactOutcome) -> dict[str, float | int | None]:
    """Mean, standard deviation, median, 1st and 99th percentiles and the probability of reaching the
    cap of the game's length; a percentile is the smallest k with P(length <= k) >= q (None when
    the mass resolved never reaches q)."""
    plies = outcome.plies
    k = np.arange(len(plies))
    mean = float(k @ plies)
    cumulative = np.cumsum(plies)

    def percentile(q: float) -> int | None:
        reached = np.flatnonzero(cumulative >= q - ROUNDING)
        return int(reached[0]) if len(reached) else None

    return {
        "mean": mean,
        "standard_deviation": float(np.sqrt(((k - mean) ** 2) @ plies)),
        "median": percentile(0.5),
        "percentile_1": percentile(0.01),
        "percentile_99": percentile(0.99),
        "at_cap": float(plies[outcome.rules.ply_cap]),
    }


def _margin_mean(outcome: engine.ExactOutcome) -> float:
    return float(sum(margin * p for margin, p in outcome.margin.items()))


def _ply_text(value: float | int | None) -> str:
    return "beyond" if value is None else str(value)
