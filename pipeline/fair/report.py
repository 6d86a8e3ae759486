"""The report of a fairness search (pipeline.fair.run): reports/fair/<rule set>/.

index.html, report.md     the findings in words, with tables and figures
tables/starts.csv         every start within the moved stones: counts, value, first moves'
                          values, pie value, komi, natural rank, exact figures, Pareto front
tables/balance.csv        the rule set's own start: value, pie rule, komi, exact figures
figures/*.svg|pdf|png     the values of the starts one stone away, the count of starts by
                          value, the most natural fair start, and the Pareto front
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.cm import ScalarMappable
from matplotlib.colors import BoundaryNorm, ListedColormap
from matplotlib.figure import Figure

import engine
from engine.exact import TOLERANCE
from engine.game import EVENT_BY_NAME
from engine.solver import PLAY
from pipeline.analysis.fairness import EXACT_COLUMNS, EXACT_EVENTS, PARETO_COLUMNS, no_first_move
from pipeline.fair.quality import start_drama_figure, start_quality_section
from pipeline.fair.run import FairSearch
from pipeline.report import figures as plot
from pipeline.report.document import Section, Table
from pipeline.report.folder import check_report_out, publish_pages, staging, write_error
from pipeline.report.prose import listed, plural, signed
from pipeline.runs.paths import REPORTS

# Each figure of EXACT_COLUMNS in words; an event's are its declaration's (engine.game.Event.brief).
WORDS = {
    "random_first_player_score": "random: first player's score",
    "random_mean_plies": "random: mean plies",
    **{f"random_{name}_fires": f"random: {EVENT_BY_NAME[name].brief}" for name in EXACT_EVENTS},
    "perfect_mean_plies": "perfect: mean plies",
}
# ... and in a sentence, as the Pareto front's text names the figures it compares.
PHRASES = {
    **{f"random_{name}_fires": f"the share of random games in which {EVENT_BY_NAME[name].clause}" for name in EXACT_EVENTS},
    "perfect_mean_plies": "perfect play's mean length",
}
SHOWN_FAIR = 20  # fair starts listed in the page (every one is in tables/starts.csv)
MOST_TICKS = 13  # value labels the histogram's axis holds at its width


def default_out(rules: engine.Rules, exact_within: int, quality: bool = False) -> Path:
    """reports/fair/<rule set>/, or .../<rule set>-exact-within-<n>/ when fair starts were played
    exactly, with -quality when their exact quality was measured too: each command its own
    folder, so that one never overwrites the other's figures."""
    name = rules.name if exact_within == 0 else f"{rules.name}-exact-within-{exact_within}"
    return REPORTS / "fair" / (name + ("-quality" if quality else ""))


def build_fair_report(search: FairSearch, out: Path | None = None) -> Path:
    """Write the report of ``search``; returns its folder (default ``default_out``), with
    manifest.json saying what made it (the command's settings and the engine's version)."""
    out = check_report_out(out if out is not None else default_out(search.rules, search.exact_within, search.quality))
    sections, figures = _sections(search)
    title = report_title(search)
    command = f"modiar fair --rules {search.rules.name} --moved {search.moved} --exact-within {search.exact_within}"
    command += " --quality" if search.quality else ""
    footer = [f"Made by {command}, engine version {engine.ENGINE_VERSION}."]
    manifest = {
        "kind": "fair",
        "rules": search.rules.name,
        "moved": search.moved,
        "exact_within": search.exact_within,
        "quality": search.quality,
        "engine": engine.ENGINE_VERSION,
        "command": command,
    }
    with staging(out) as folder:
        try:
            for stem, figure in figures.items():
                plot.save(figure, folder / "figures", stem)
        except OSError as error:  # a full disk: name the report, as publish_pages does
            raise write_error(out, error) from None
        publish_pages(
            folder,
            out,
            title,
            _text(search),
            sections,
            _tables(search),
            abstract=_abstract(search),
            footer=footer,
            manifest=manifest,
        )
    return out


def report_title(search: FairSearch) -> str:
    """The report's title, which says what it holds: a search with exact play (and its quality)
    from the fair starts is titled apart from one without, as each is published."""
    held = f"Starts of {search.rules.name} fair under perfect play, within {plural(search.moved, 'stone')} moved: values, "
    if not search.exact_within:
        return held + "the pie rule and komi"
    within = plural(search.exact_within, "stone")
    played = "exact random and perfect play" + (" and its quality" if search.quality else "")
    return held + f"the pie rule, komi and {played} from those within {within} moved"


def _tables(search: FairSearch) -> dict[str, pl.DataFrame]:
    balance = search.balance
    own = {
        "rules": search.rules.name,
        "value": balance.value,
        "pie_value": balance.pie_value,
        "komi": balance.komi,
        **search.own,
    }
    return {"starts": search.starts, "balance": pl.DataFrame([own])}


def _abstract(search: FairSearch) -> list[str]:
    starts, balance = search.starts, search.balance
    fair = starts.filter(pl.col("value") == 0)
    by_moved = {moved: fair.filter(pl.col("moved") == moved) for moved in range(1, search.moved + 1)}
    of_moved = {moved: starts.filter(pl.col("moved") == moved).height for moved in range(1, search.moved + 1)}
    counted = "; ".join(
        f"{by_moved[m].height} of the {of_moved[m]} starts with {plural(m, 'stone')} moved are fair under perfect play"
        + _split(by_moved[m], search.rules.ply_cap)
        for m in by_moved
    )
    natural = fair.filter(pl.col("natural_rank").is_not_null()).sort("natural_rank").head(3)["start"].to_list()
    most_natural = (
        "The most natural: " + ", ".join(natural) + " (South's pits 0 1 2 / North's 3 4 5, in the order of sowing)."
        if natural
        else f"None of them is fair by play: the {search.rules.ply_cap}-ply cap decides every one."
    )
    pie = (
        f"The pie rule changes nothing: {no_first_move(search.rules)}"
        if balance.pie_value is None
        else f"With the pie rule it is worth {balance.pie_value:+d}"
    )
    return [
        f"Under perfect play the start of {search.rules.name} is worth {balance.value:+d} to the first player (South). "
        f"{pie}; a komi of {balance.komi:+d} stones to South makes it a draw, and "
        f"{balance.komi + 0.5:+.1f} or {balance.komi - 0.5:+.1f} decide every game. {_decided(search)}",
        f"Moving stones between pits gives starts that perfect play draws: {counted}. {most_natural}",
        _fair_for_whom(search),
    ]


def _fair_for_whom(search: FairSearch) -> str:
    """That the fair starts are fair under perfect play only, with random play's first-player
    score from them where the search played them (else from the own start alone)."""
    score = "random_first_player_score"
    own = f"{search.own[score]:.3f}"
    played = search.starts.filter((pl.col("value") == 0) & pl.col(score).is_not_null())
    if not played.height:
        return (
            f"Fair here means fair under perfect play only, not for players who err: random self-play from the rule "
            f"set's own start gives the first player a score of {own}, and this report plays no game from the fair starts."
        )
    return (
        f"Fair here means fair under perfect play only, not for players who err: random self-play from the "
        f"{played.height} fair starts within {plural(search.exact_within, 'stone')} moved gives the first player "
        f"{_random_scores(search, played)}."
    )


def _random_scores(search: FairSearch, played: pl.DataFrame) -> str:
    """ "a score from 0.447 to 0.493 (0.464 from the rule set's own start)": random self-play's
    first-player score over the ``played`` starts, beside the own start's."""
    score = "random_first_player_score"
    scores = [float(found) for found in played[score].to_list()]
    return f"a score from {min(scores):.3f} to {max(scores):.3f} ({search.own[score]:.3f} from the rule set's own start)"


def _split(fair: pl.DataFrame, cap: int) -> str:
    """ ", of which N by play and M only at the cap" for fair starts some of which the cap decides."""
    at_cap = fair.filter(pl.col("decided_by") != PLAY).height
    if not at_cap:
        return " (every one decided by play)" if fair.height else ""
    return f" ({fair.height - at_cap} fair by play, {at_cap} only at the {cap}-ply cap)"


def _decided(search: FairSearch) -> str:
    """Whether play or the cap decides the own start's verdict, in words (docs/remoteness.md)."""
    found, cap = search.verdict, search.rules.ply_cap
    if found.decided_by != PLAY:
        return f"The {cap}-ply cap decides this verdict, not play: " + (
            "some value-keeping game runs to the cap." if found.value == 0 else "the side ahead cannot make play end before it."
        )
    side = "North" if found.value < 0 else "South" if found.value > 0 else "either side"
    return (
        f"Play decides it: {side} can make the game end by ply {found.remoteness} (its remoteness, the side "
        f"ahead hurrying and the other delaying; the longest value-keeping game lasts {found.longest} plies)."
    )


def _text(search: FairSearch) -> list[str]:
    return [
        "Every value here is exact: a lookup in the strong solution of the rule set, which holds every "
        "position of its stones, with the first move's forfeit applied as at the rule set's own start. "
        "The figures of play from a start are exact too: every game of the two strategies weighed by its "
        "probability, not a sample of games."
    ]


def _sections(search: FairSearch) -> tuple[list[Section], dict[str, Figure]]:
    figures = {"fair_one_stone": _one_stone_figure(search), "fair_values": _values_figure(search)}
    fair = search.starts.filter(pl.col("value") == 0).sort("natural_rank", nulls_last=True)
    sections = [_balance_section(search), _starts_section(search, fair)]
    if fair.height:
        figures["fair_natural_start"] = plot.board(
            [int(fair[f"pit_{pit}"][0]) for pit in range(6)], title=f"The most natural fair start: {fair['start'][0]}"
        )
        sections[-1].figures.append(("fair_natural_start", "The most natural fair start, drawn as RULES.md draws boards."))
    exact = fair.filter(pl.col("perfect_mean_plies").is_not_null())
    if exact.height:
        figures["fair_pareto"] = _pareto_figure(search, exact)
        sections.append(_exact_section(search, exact))
    if search.quality:
        measured = fair.filter(pl.col("perfect_t1_comeback").is_not_null())
        figures["fair_drama"] = start_drama_figure(search, measured)
        sections.append(start_quality_section(search, measured))
    sections.append(_methods_section(search))
    return sections, figures


def _balance_section(search: FairSearch) -> Section:
    balance = search.balance
    rows = [
        ["value under perfect play", f"{balance.value:+d}"],
        ["value with the pie rule", "none: South has no first move" if balance.pie_value is None else f"{balance.pie_value:+d}"],
        ["komi for a draw (stones to South)", f"{balance.komi:+d}"],
        ["half-stone komi (no draws)", f"{balance.komi - 0.5:+.1f} (North wins) or {balance.komi + 0.5:+.1f} (South wins)"],
        ["decided by", "play" if search.verdict.decided_by == PLAY else f"the {search.rules.ply_cap}-ply cap"],
        ["remoteness (plies, the side ahead hurrying)", _plies(search.verdict.remoteness)],
        ["longest value-keeping game (plies)", _plies(search.verdict.longest)],
        ["the value is the same under every cap from", f"{search.verdict.stable_from} plies"],
        [
            f"value under a cap of {search.rules.ply_cap - 1} and {search.rules.ply_cap + 1} plies",
            f"{search.verdict.value_one_less:+d} and {search.verdict.value_one_more:+d}",
        ],
    ]
    rows += [[WORDS[column], _figure(column, search.own[column])] for column in EXACT_COLUMNS]
    text = [
        "South moves first. The pie rule lets North, after South's first move, take South's side: "
        "a first move worth v to South is then worth |v| to North, so South opens with a move of "
        "least |v| and the pie rule's value is -min |v|, never above 0. Komi adds stones to the "
        "first player's final total: it shifts every final margin alike, so the perfect-play value "
        "moves by the komi and a komi of minus the value draws."
    ]
    table = Table("The rule set's own start", ["", search.rules.name], rows, name="balance")
    return Section("The rule set's own start", text, [table])


def _plies(plies: int | None) -> str:
    return "none: the cap stops it" if plies is None else str(plies)


def _starts_section(search: FairSearch, fair: pl.DataFrame) -> Section:
    header = ["rank", "start", "moved", "rows keep their stones", "mirrored", "first moves' values", "pie", "remoteness"]
    rows = [
        [
            "fair only at the cap" if row["natural_rank"] is None else str(row["natural_rank"]),
            row["start"],
            str(row["moved"]),
            "yes" if row["rows_equal"] else "no",
            "yes" if row["mirrored"] else "no",
            " ".join(_signed(row[f"first_move_{pit}_value"]) for pit in range(3)),
            _signed(row["pie_value"]),
            "cap" if row["remoteness"] is None else str(row["remoteness"]),
        ]
        for row in fair.head(SHOWN_FAIR).iter_rows(named=True)
    ]
    text = [
        f"A start here is the rule set's own with 1 to {search.moved} stones moved between pits of either row, "
        f"the same {search.rules.total_stones} stones in all. A fair start is one whose value under perfect "
        "play is 0. The fair starts are ranked by how natural they are: fewest stones moved, then starts "
        "whose rows keep their stones (each player moved stones within the own row), then mirrored ones "
        "(both players see the same row), then the most pits equal to the pit facing them in play. Only "
        "starts whose verdict play decides are ranked: a start whose value is 0 only because the "
        f"{search.rules.ply_cap}-ply cap stops a game that could go on is fair by the cap's scoring, not by play "
        "(docs/remoteness.md). Remoteness: the plies perfect play lasts, the side ahead hurrying."
    ]
    caption = f"The starts fair under perfect play, most natural first (the first {SHOWN_FAIR}; all of them in tables/starts.csv)"
    figures = [
        (
            "fair_one_stone",
            "The value to South under perfect play of every start with one stone moved: the stone is taken from the "
            "pit of a row and put into the pit of a column. South's pits are 0, 1 and 2, North's 3, 4 and 5 (RULES.md), "
            "parted by the lines; 0 is fair.",
        ),
        ("fair_values", "How many starts have each value to South under perfect play, by the stones moved; 0 is fair."),
    ]
    return Section("Fair starts", text, [Table(caption, header, rows, name="starts")], figures)


def _exact_section(search: FairSearch, exact: pl.DataFrame) -> Section:
    header = ["start", *(WORDS[column] for column in EXACT_COLUMNS), "Pareto"]
    own = ["the rule set's own", *(_figure(column, search.own[column]) for column in EXACT_COLUMNS), ""]
    rows = [own] + [
        [row["start"], *(_figure(column, row[column]) for column in EXACT_COLUMNS), "yes" if row["pareto"] else ""]
        for row in exact.iter_rows(named=True)
    ]
    words = listed([PHRASES[column] for column in PARETO_COLUMNS])
    text = [
        f"Exact play from every fair start within {search.exact_within} moved "
        f"{'stone' if search.exact_within == 1 else 'stones'}: random self-play and perfect self-play "
        f"(ties at random). These starts are fair under perfect play only: random self-play from them gives the first "
        f"player {_random_scores(search, exact)}. A start is on the Pareto "
        "front when play decides its fairness and no other such start is at least as close to the rule set's own "
        f"start on each of {words} and closer on one: the "
        "designer's menu of fair starts that change the game least. A start fair only at the cap (some "
        "value-keeping game cycles on to it) is played and listed, but is on no front."
    ]
    figures = [
        (
            "fair_pareto",
            "The fair starts played exactly, on two of the front's three figures (the third, the grand-slam ban, is in the "
            "table): the Pareto front filled and named, the starts fair only at the cap crossed in grey, the rule set's "
            "own start ringed.",
        )
    ]
    return Section("Play from the fair starts", text, [Table("Exact play from the fair starts", header, rows)], figures)


def _methods_section(search: FairSearch) -> Section:
    return Section(
        "Methods",
        [
            "The values come from the strong solution of the rule set, capped at its ply cap; a start's value is "
            "the best of its first moves, each worth its capture (none, with the first move's forfeit) minus the "
            "value of the position it leaves. The figures of play carry each position's probability from ply to ply, "
            f"from the start until the cap or until less than {_power_of_ten(TOLERANCE)} of the probability is still in play.",
            "FairKalah (Neller et al., Computers and Games 2022) made the same search for Kalah(6,4), a first-player "
            "win by 10, and found 254 fair starts with one or two seeds moved (323 with empty captures off).",
        ],
        appendix=True,
    )


def _one_stone_figure(search: FairSearch) -> Figure:
    one = search.starts.filter(pl.col("moved") == 1)
    standard = search.rules.stones_per_pit
    values: dict[tuple[int, int], float] = {}
    for row in one.iter_rows(named=True):
        counts = [row[f"pit_{pit}"] for pit in range(6)]
        source = next(pit for pit, count in enumerate(counts) if count < standard)
        target = next(pit for pit, count in enumerate(counts) if count > standard)
        values[source, target] = float(row["value"])
    taken, put = "a stone taken from", "and put into"
    rows = [
        {taken: pit_name(source), put: pit_name(target), "value": values.get((source, target))}
        for source in range(engine.game.PITS)
        for target in range(engine.game.PITS)
    ]
    figure = plot.heatmap(
        pl.DataFrame(rows, schema={taken: pl.String, put: pl.String, "value": pl.Float64}),
        row=taken,
        column=put,
        value="value",
        title="The value to South under perfect play of each start with one stone moved (0: fair)",
        colour_label="value to South",
        fmt="{:.0f}",
        diverging=0.0,
    )
    axes = figure.axes[0]  # the grid (the colour bar's axes come after it)
    half = engine.game.PITS / 2 - 0.5  # between South's last pit and North's first
    axes.axhline(half, color="0.2", linewidth=1.0)
    axes.axvline(half, color="0.2", linewidth=1.0)
    return figure


def pit_name(pit: int) -> str:
    """A pit with its owner, as the one-stone figure labels it: "South's pit 0", "North's pit 3"."""
    return f"{'South' if pit < engine.game.PITS // 2 else 'North'}'s pit {pit}"


def _values_figure(search: FairSearch) -> Figure:
    """Bars of the starts by value (a number line: values are even, as the stones are), one
    colour per count of stones moved: the palette's while it has enough, else the steps of a
    sequential colour map read on a colour bar (more classes than a palette tells apart, in order)."""
    counts = search.starts.group_by("moved", "value").agg(pl.len().alias("starts")).sort("moved", "value")
    ticks = value_ticks(int(counts["value"].min()), int(counts["value"].max()))  # type: ignore[arg-type]
    stepped = search.moved > len(plot.OKABE_ITO)
    colours = ListedColormap(colormaps["cividis"](np.linspace(0, 1, search.moved))) if stepped else None
    with plot.style():
        figure = Figure(figsize=(plot.COLUMN, 2.4))
        axes = figure.subplots()
        width = 1.6 / search.moved
        for place, moved in enumerate(range(1, search.moved + 1)):
            found = counts.filter(pl.col("moved") == moved)
            x = found["value"].to_numpy() + (place - (search.moved - 1) / 2) * width
            colour = plot.OKABE_ITO[place] if colours is None else colours(place)
            axes.bar(x, found["starts"].to_numpy(), width, label=f"{plural(moved, 'stone')} moved", color=colour)
        axes.set_xticks(ticks, [_signed(tick) for tick in ticks])
        axes.set_xlabel("value to South under perfect play (0: fair)")
        axes.set_ylabel("starts")
        if colours is None:
            axes.legend(frameon=False)
        else:
            _moved_colour_bar(figure, axes, colours, search.moved)
    return figure


def value_ticks(low: int, high: int) -> list[int]:
    """The values the histogram labels: every even value from ``low`` to ``high`` (a start's value
    is even, as the stones are), or every fourth, sixth, ... past MOST_TICKS of them; always the
    multiples of the step, so that 0, the fair value, is labelled whenever it is in range."""
    step = 2 * max(1, -(-(high - low) // (2 * (MOST_TICKS - 1))))
    first = -(-low // step) * step
    return list(range(first, high + 1, step))


def _moved_colour_bar(figure: Figure, axes: Axes, colours: ListedColormap, most: int) -> None:
    """A colour bar of one step a count of stones moved, 1 to ``most``, labelled at most 8 times."""
    norm = BoundaryNorm(np.arange(0.5, most + 1.5), colours.N)
    labelled = range(1, most + 1, -(-most // 8))
    bar = figure.colorbar(ScalarMappable(norm, colours), ax=axes, ticks=list(labelled), pad=0.02)
    bar.set_label("stones moved")
    bar.outline.set_visible(False)


def _pareto_figure(search: FairSearch, exact: pl.DataFrame) -> Figure:
    x, y = "perfect_mean_plies", "random_feeding_forced_fires"
    with plot.style():
        figure = Figure(figsize=(plot.COLUMN, 2.8))
        axes = figure.subplots()
        front = exact.filter(pl.col("pareto"))
        rest = exact.filter(~pl.col("pareto") & (pl.col("decided_by") == PLAY))
        capped = exact.filter(pl.col("decided_by") != PLAY)
        axes.scatter(rest[x], rest[y], s=18, facecolors="none", edgecolors=plot.OKABE_ITO[0], label="fair by play")
        if capped.height:
            axes.scatter(capped[x], capped[y], s=14, marker="x", color="0.6", linewidths=0.8, label="fair only at the cap")
        axes.scatter(front[x], front[y], s=22, color=plot.OKABE_ITO[0], label="on the Pareto front")
        axes.scatter([search.own[x]], [search.own[y]], s=80, facecolors="none", edgecolors=plot.OKABE_ITO[3], label="own start")
        axes.set_xlabel(WORDS[x])
        axes.set_ylabel(WORDS[y])
        for row in front.iter_rows(named=True):
            axes.annotate(row["start"], (row[x], row[y]), xytext=(4, 3), textcoords="offset points", fontsize=5.5)
        axes.legend(frameon=False, fontsize=6.5, scatterpoints=1)
    return figure


def _figure(column: str, value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}" if column.endswith("plies") else f"{value:.4f}"


def _power_of_ten(value: float) -> str:
    """1e-15 as a page prints it: 10⁻¹⁵."""
    return "10" + str(round(math.log10(value))).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))


def _signed(value: int | None) -> str:
    return "-" if value is None else signed(value, "{:+d}")
