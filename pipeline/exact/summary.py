"""An exact outcome as ``modiar exact`` gives it: a JSON record (``exact_record``) or a page of
text (``exact_text``), with the summaries of the length distribution (median, percentiles) and
the mean final margin that engine.ExactOutcome does not hold itself."""

from __future__ import annotations

import numpy as np

import engine

# modiar exact: the float sums of a length distribution may fall short of a cumulative probability
# they reach exactly (engine.exact.outcome: its rounding stays far below 1e-12).
ROUNDING = 1e-12


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
    length, cap = _length_summary(outcome), outcome.rules.ply_cap
    likely = sorted(outcome.margin.items(), key=lambda item: (-item[1], item[0]))[:3]
    lines = [
        f"exact outcome: {outcome.south} (South) against {outcome.north} (North), rules {outcome.rules.name}",
        "",
        f"{'result':<32}{'probability':>14}",
        f"{'South wins':<32}{outcome.south_win:>14.9f}",
        f"{'draws':<32}{outcome.draw:>14.9f}",
        f"{'North wins':<32}{outcome.north_win:>14.9f}",
        f"{'first-player score':<32}{outcome.first_player_score:>14.9f}   (South's expected score, a draw counting 1/2)",
        "",
        "game length (plies)",
        f"{'  mean':<32}{length['mean']:>14.3f}",
        f"{'  standard deviation':<32}{length['standard_deviation']:>14.3f}",
        f"{'  median':<32}{_ply_text(length['median']):>14}",
        f"{'  1st percentile':<32}{_ply_text(length['percentile_1']):>14}",
        f"{'  99th percentile':<32}{_ply_text(length['percentile_99']):>14}",
        f"{f'  reaches the cap of {cap}':<32}{length['at_cap']:>14.9f}",
        "",
        "final margin (South's score minus North's)",
        f"{'  mean':<32}{_margin_mean(outcome):>14.3f}",
        f"{'  most likely':<32}{'   '.join(f'{margin:+d} ({p:.4f})' for margin, p in likely)}",
        "",
        f"{'rule event':<32}{'fires at least once':>22}{'mean per game':>18}",
    ]
    for name in engine.EVENTS:
        lines.append(f"{name:<32}{outcome.event_fires[name]:>22.9f}{outcome.event_mean[name]:>18.9f}")
    total = seconds["tables"] + seconds["propagation"]
    lines += [
        "",
        f"unresolved: {outcome.unresolved:.3g} (the mass of games still in play when the propagation stopped,"
        " or set aside in the tail)",
        f"time: {total:.2f} s (tables, read or built: {seconds['tables']:.2f} s; propagation: {seconds['propagation']:.2f} s)",
    ]
    return "\n".join(lines)


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
