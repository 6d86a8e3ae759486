"""The study report's sections on strength: the rating ladder of the strategies and their agreement
with the exact values.
"""

from __future__ import annotations

import polars as pl

from pipeline.analysis.agreement import MAX_GAMES_PER_PAIRING
from pipeline.analysis.ratings import fits_poorly
from pipeline.report.document import Section, Table
from pipeline.report.prose import interval, listed, p_value, signed
from pipeline.study.report.data import ReportData
from pipeline.study.report.figures import ladder_axis
from pipeline.study.report.sections.cells import (
    anchor_text,
    rules_cells,
    rules_header,
    share_cell,
    start_values,
    start_words,
)


def ratings_section(ladder: pl.DataFrame, first_move: pl.DataFrame, fit: pl.DataFrame, data: ReportData) -> Section:
    prior = float(first_move["prior_sd"][0])
    rows = [
        [
            *rules_cells(row, data),
            row["strategy"],
            _elo(row["rating"], row["low"], row["high"], prior) if row["bounded"] else "not bounded by the games",
            f"{row['games']:,}",
            "n/a" if row["score"] is None else f"{row['score']:.3f}",
        ]
        for row in ladder.iter_rows(named=True)
    ]
    first = [
        [
            *rules_cells(row, data),
            row["strategy"],
            "n/a" if row["elo"] is None else _elo(row["elo"], row["low"], row["high"], prior),
            "n/a"
            if row["elo"] is None
            else interval(row["expected_score"], row["expected_score_low"], row["expected_score_high"]),
        ]
        for row in first_move.iter_rows(named=True)
    ]
    fits = [
        [
            *rules_cells(row, data),
            "one first-move term" if row["model"] == "shared" else "a first-move term per strategy",
            f"{row['pairings']}",
            f"{row['parameters']}",
            f"{row['deviance']:,.1f}",
            f"{row['df']}",
            "n/a" if row["dispersion"] != row["dispersion"] else f"{row['dispersion']:,.1f}",
            p_value(row["p"]),
        ]
        for row in fit.iter_rows(named=True)
    ]
    per_strategy = fit.filter(pl.col("model") == "per_strategy").row(0, named=True)
    misfit = fits_poorly(per_strategy["dispersion"])
    rules = rules_header(data)
    _, cut, unbounded = ladder_axis(ladder)
    text = [
        "A Bradley-Terry model fitted to every game of the round robin, a draw counting half a win for each side, on "
        "the Elo scale (400 points is a factor of 10 in the odds), with a first-move term for each strategy in South's "
        f"seat (Agresti, Categorical Data Analysis, section 11.6). {anchor_text(fit)} A weak Gaussian prior "
        f"(sd {first_move['prior_sd'][0]:.0f} Elo) keeps the terms of a strategy that never loses, or never wins, finite; "
        "such a term is set by the prior and says only that the games cannot bound it.",
        "**How well the model fits.** The deviance and Pearson's dispersion (chi-square over its degrees of freedom) "
        "are given for the model with one shared first-move term and for the model with one per strategy "
        "(tables/ratings_fit.csv). Every interval is widened by the square root of the dispersion when it is above 1 "
        "(quasi-likelihood; McCullagh and Nelder, Generalized Linear Models, section 4.5).",
    ]
    loose = [row["strategy"] for row in ladder.iter_rows(named=True) if row["bounded"] and (row["high"] - row["low"]) / 2 > prior]
    if loose:
        text.append(
            f"**Barely bounded: {listed(loose)}.** The games bound {'its rating' if len(loose) == 1 else 'their ratings'}, "
            f"but by so few points scored against {'it' if len(loose) == 1 else 'them'} that the 95% interval is wider "
            f"than the prior's spread ({prior:,.0f} Elo): the tables give the rating with the interval's half-width, and "
            "the figure cuts the interval at its edge. Read such a rating as far above the rest, not as a number."
        )
    if unbounded:
        text.append(
            f"**Not bounded by the games: {listed(unbounded)}.** The strategies split into groups one of which never "
            "scored a point (no win, no draw) against another, so the maximum-likelihood ratings between them are "
            "infinite (Ford 1957, American Mathematical Monthly 64:28): such a rating is the prior's number, not the "
            "games'. The table says so, the figure draws an arrow for it, and tables/ratings.csv keeps the number with "
            "its column bounded false."
        )
    if misfit:
        text.append(
            f"**The model does not fit these games** (dispersion {per_strategy['dispersion']:,.0f} with a first-move term "
            "per strategy): the strategies' results are not those of one strength each. Deterministic players beat some "
            "opponents from one seat and lose from the other, and strength is not transitive. The ratings are a rough "
            "summary with intervals widened to match; the outcome of every pairing (appendix) and the seat effects are "
            "the results, and no first-move term is headlined."
        )
    return Section(
        "Strategy ratings",
        text,
        [
            Table("Rating ladder (Elo)", [*rules, "strategy", "rating", "games", "score"], rows, "ratings"),
            Table(
                "First-move term per strategy in South's seat",
                [*rules, "strategy", "Elo", "expected score between equals"],
                first,
                "first_move",
            ),
            Table(
                "Fit of the rating models",
                [*rules, "model", "pairings", "parameters", "deviance", "df", "dispersion", "p (fit)"],
                fits,
                "ratings_fit",
            ),
        ],
        [("rating_ladder", _ladder_caption(cut, unbounded))],
    )


def _ladder_caption(cut: list[str], unbounded: list[str]) -> str:
    """The rating figure's caption, saying what its axis leaves out (figures.ladder_axis)."""
    caption = "Ratings with 95% intervals (widened by the model's dispersion); the anchor strategy is at 0."
    if cut:
        one = len(cut) == 1
        noun, runs, be, whose = ("interval", "runs", "is", "its") if one else ("intervals", "run", "are", "their")
        caption += f" The {noun} of {listed(cut)} {runs} past the axis and {be} cut at its edge (arrowheads); "
        caption += f"the table gives {whose} ends."
    if unbounded:
        caption += f" The games do not bound the rating of {listed(unbounded)}: an arrow at the edge, no point."
    return caption


def agreement_section(agreement: pl.DataFrame, data: ReportData) -> Section:
    rows = [
        [
            *rules_cells(row, data),
            row["strategy"],
            f"{row['moves']:,}",
            share_cell(row, "kept", 2),
            interval(row["loss"], row["loss_low"], row["loss_high"]),
        ]
        for row in agreement.iter_rows(named=True)
    ]
    found = start_values(agreement)
    values = (
        start_words(*found[0])
        if len(found) == 1
        else "; ".join(f"under {rules}, {start_words(rules, value)}" for rules, value in found)
    )
    rules = rules_header(data)
    section = Section(
        "Perfect play",
        [
            f"The value of the start: {values}. The value of each "
            "of South's first moves is that of the game after it, both sides then playing perfectly. Each strategy's "
            "moves against the strong solution: the share that keep the value and the value lost per move "
            f"(in stones of final margin), over the first {MAX_GAMES_PER_PAIRING:,} games (by game id) of every pairing. "
            "Moves within a game are not independent, so the intervals of the loss are somewhat narrow."
        ],
        [
            Table(
                "Agreement with perfect play",
                [*rules, "strategy", "moves", "moves that keep the value (%)", "value lost per move"],
                rows,
                "agreement",
            )
        ],
        [("perfect_play_agreement", "Share of moves that keep the game's value, 95% Wilson intervals.")],
    )
    if data.openings is not None:
        openings = [
            [*rules_cells(row, data), f"{row['pit']}", f"{row['value']:+d}", "yes" if row["best"] else "no"]
            for row in data.openings.iter_rows(named=True)
        ]
        header = [*rules, "pit", "value for South (stones)", "best"]
        section.tables.insert(0, Table("South's first moves under perfect play", header, openings, "openings"))
    return section


def exploit_section(table: pl.DataFrame, data: ReportData) -> Section:
    """What a best response wins against each table strategy (pipeline.study.report.exploits)."""
    rows = [
        [
            *rules_cells(row, data),
            row["strategy"],
            signed(row["as_south"], "{:+.2f}"),
            signed(row["as_north"], "{:+.2f}"),
            signed(row["mean"], "{:+.2f}"),
        ]
        for row in table.iter_rows(named=True)
    ]
    ranked = table.sort("mean", descending=True)
    most, least = ranked.row(0, named=True), ranked.row(-1, named=True)
    text = [
        "A strategy's **exploitability** is what the best possible counter-strategy wins against it, in stones of "
        "final margin a game, computed exactly (value iteration over every position, an expectation at the strategy's "
        "turns and a best move at the responder's; no sampling): as South, the responder moving first, and as North. "
        "A strategy that plays perfectly allows only the game's value; every other allows more. Unlike the ratings, "
        "which measure a strategy against the others of the study, it measures it against the worst case.",
        f"**{most['strategy']} is the most exploitable: a best response wins {most['mean']:.1f} stones a game against "
        f"it, on average over the seats; {least['strategy']} the least, {signed(least['mean'], '{:+.1f}')}.**"
        f"{_weaker_than_random(table)}",
    ]
    header = [*rules_header(data), "strategy", "responder as South", "responder as North", "mean"]
    return Section(
        "How much a best response wins",
        text,
        [Table("Exploitability (stones a game, exact)", header, rows, "exploitability")],
    )


def _weaker_than_random(table: pl.DataFrame) -> str:
    """The strategies a best response beats by more than it beats random, in a sentence (none: empty)."""
    random = table.filter(pl.col("strategy") == "random")
    if not random.height:
        return ""
    floor = random["mean"][0]
    worse = table.filter(pl.col("mean") > floor)["strategy"].to_list()
    if not worse:
        return ""
    return (
        f" A best response beats {listed(worse)} by more than it beats random ({floor:.1f}): a strategy can win "
        "against the field and still be easier to punish than one that plays at random."
    )


def _elo(value: float, low: float, high: float, prior: float) -> str:
    """A rating (or a first-move term) with its interval, in Elo; an interval wider than the
    prior's spread (the games barely bound it) as its half-width, which reads at a glance."""
    half = (high - low) / 2
    if half > prior:
        return f"{value:,.0f} ± {half:,.0f} (barely bounded)"
    return interval(value, low, high, ".0f")
