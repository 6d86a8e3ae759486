"""The study report: every number it prints equals the same number computed straight from the
Parquet, here with pandas, NumPy, pipeline.analysis.stats and the scalar engine (legal_moves, apply_move,
Solution.value), none of the polars code the report runs on."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import fields, replace

import numpy as np
import pandas as pd
import polars as pl
import pytest
from figure_formats import every_figure_format
from intervals import score_rate, sign_test
from sealing import manifest as sealed_manifest

import engine
from pipeline.analysis.ratings import ratings
from pipeline.analysis.stats import mean_interval, wilson
from pipeline.analysis.turns import END_EVENTS, TURN_FLAGS
from pipeline.cli import main
from pipeline.report.figures import FORMATS_VARIABLE
from pipeline.report.prose import figure as figure_text
from pipeline.runs.paths import ROOT
from pipeline.runs.records import read_study_manifest, scan_games
from pipeline.study.report import PAIRING_COLUMNS, ReportData, compose, compute, figure, figure_names
from pipeline.study.report.words import short

RULES = engine.Rules(stones_per_pit=3)
CONFIG = """name = "reported"
seed = 11
games_per_seat = 150
strategies = ["random", "greedy", "perfect"]

[rules]
stones_per_pit = 3

[games]
"random vs random" = 400
"""
# The tables of a study with exact outcomes only (this one has none): tests/pipeline/exact/test_exact_check.py.
EXACT_TABLES = (
    "exact",
    "exact_check",
    "coverage",
    "exploitability",
    "quality",
    "quality_curves",
    "calibration",
    "calibration_agreement",
)
FIGURES = (
    "board",
    "seat_effect",
    "pairing_scores",
    "first_player_advantage",
    "game_length",
    "rule_events",
    "events_by_ply",
    "end_events_by_ply",
    "rating_ladder",
    "perfect_play_agreement",
)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp("report")
    config = folder / "reported.toml"
    config.write_text(CONFIG)
    assert main(["study", "run", str(config), "--out", str(folder / "study"), "--quiet", "--jobs", "1"]) == 0
    with every_figure_format():
        assert main(["study", "report", str(folder / "study"), "--out", str(folder / "report"), "--quiet"]) == 0
    games = pd.concat([pd.read_parquet(path) for path in sorted((folder / "study" / "games").glob("*.parquet"))])
    return folder / "study", folder / "report", games.sort_values("game_id").reset_index(drop=True)


@pytest.fixture(scope="module")
def tables(built):
    return _markdown_tables((built[1] / "report.md").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def replayed(built):
    return {row.game_id: _replay([int(pit) for pit in row.moves]) for row in built[2].itertuples()}


def _pairings(games):
    """(south, north, the pairing's games) in the study's order (that of the game ids)."""
    order = games.groupby(["south", "north"], sort=False).game_id.min().sort_values()
    return [(south, north, games[(games.south == south) & (games.north == north)]) for south, north in order.index]


def test_outcomes_table(built, tables):
    rows = _rows(tables["Outcomes per pairing"])
    pairings = _pairings(built[2])
    assert list(rows) == [(south, north) for south, north, _ in pairings]
    for south, north, part in pairings:
        expected = _outcome_cells(part)
        del expected["North wins (%)"]  # the rest of the games: in tables/outcomes.csv, not in the page's table
        assert {**rows[south, north], "p (Holm)": None} == expected
    p_values = [sign_test(*_counts(part))[3] for _, _, part in pairings]
    holm = _holm(p_values)
    for (south, north, _), adjusted in zip(pairings, holm, strict=True):
        assert rows[south, north]["p (Holm)"] == _p(adjusted)
    # a score pooled over pairings of unequal designs means nothing: the report gives none
    assert not any("pooled" in name.lower() for name in tables)


def _counts(part):
    return tuple(int((part.winner == side).sum()) for side in ("south", "draw", "north"))


def _outcome_cells(part):
    n = len(part)
    south_wins, draws, north_wins = _counts(part)
    score, low, high, p = sign_test(south_wins, draws, north_wins)
    return {
        "games": f"{n:,}",
        "South wins (%)": _percent(wilson(south_wins, n), 1),
        "draws (%)": _percent(wilson(draws, n), 1),
        "North wins (%)": _percent(wilson(north_wins, n), 1),
        "first-player score": f"{score:.3f} [{low:.3f}, {high:.3f}]",
        "p (score = 1/2)": _p(p),
        "p (Holm)": None,
    }


def _p(p):
    return "< 0.001" if p < 0.001 else f"{p:.2g}"


def _holm(p_values):
    """Holm's adjusted p-values, by the definition: the running maximum of (m - k) p_(k) over the sorted values."""
    order = sorted(range(len(p_values)), key=p_values.__getitem__)
    adjusted, running = [0.0] * len(p_values), 0.0
    for k, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - k) * p_values[i]))
        adjusted[i] = running
    return adjusted


def test_seat_effect_table(built, tables):
    """Both seat orders of a pair pooled: the first player's wins, draws and losses, the sign test."""
    rows = {row["strategies"]: row for row in tables["Seat effect per pair of strategies"][1]}
    games = built[2]
    names = ["random", "greedy", "perfect"]
    expected_keys = [a if a == b else f"{a} and {b}" for i, a in enumerate(names) for b in names[i:]]
    assert sorted(rows) == sorted(expected_keys)
    for key in expected_keys:
        a, _, b = key.partition(" and ")
        b = b or a
        both = games[((games.south == a) & (games.north == b)) | ((games.south == b) & (games.north == a))]
        first, draws, second = _counts(both)
        score, low, high, p = sign_test(first, draws, second)
        row = rows[key]
        assert row["games"] == f"{len(both):,}"
        assert row["first player wins / draws / loses"] == f"{first:,} / {draws:,} / {second:,}"
        assert row["seat effect"] == f"{score - 0.5:+.3f} [{low - 0.5:+.3f}, {high - 0.5:+.3f}]"
        assert row["p"] == _p(p)


def test_length_table(built, tables):
    rows = _rows(tables["Game length per pairing"])
    for south, north, part in _pairings(built[2]):
        plies = part.plies.to_numpy(dtype=float)
        mean = mean_interval(plies)
        assert rows[south, north] == {
            "mean plies": f"{mean.value:.2f} [{mean.low:.2f}, {mean.high:.2f}]",
            "median": f"{np.median(plies):.1f}",
            "90th percentile": f"{np.quantile(plies, 0.9):.1f}",
            "99th percentile": f"{np.quantile(plies, 0.99):.1f}",
            "longest": f"{int(plies.max())}",
        }  # no game reaches the cap: the column at the ply cap is left out


def test_ludii_table(built, tables, replayed):
    rows = _rows(tables["Game metrics per pairing"])
    for south, north, part in _pairings(built[2]):
        south_share, north_share = (part.winner == "south").mean(), (part.winner == "north").mean()
        draw_share = (part.winner == "draw").mean()
        games = [replayed[game_id] for game_id in part.game_id]
        expected = {
            "AdvantageP1": south_share + draw_share / 2,
            "Balance": 1 - abs(south_share - north_share),
            "Completion": ((part.end_reason == "no_moves") & (part.winner != "draw")).mean(),
            "Drawishness": draw_share,
            "Duration": part.plies.mean(),
            "BranchingFactor": np.mean([np.mean(game["options"]) for game in games]),
            "DecisionMoves": np.mean([np.mean(np.array(game["options"]) > 1) for game in games]),
            "PositionalRepetition": np.mean([1 - len(set(game["states"])) / len(game["states"]) for game in games]),
        }
        repetition = expected.pop("PositionalRepetition")
        # under names of our own: a capped game keeps its winner here, unlike Ludii's metrics
        names = {"AdvantageP1": "first player wins", "Balance": "balance of wins", "Completion": "decisive"}
        names |= {"Drawishness": "drawn", "Duration": "mean plies", "BranchingFactor": "moves a turn"}
        names |= {"DecisionMoves": "turns with a choice"}
        assert rows[south, north] == {
            **{names[name]: f"{value:.4f}" for name, value in expected.items()},
            "positions repeated": figure_text(repetition, 3),  # never an exponent: 0.000008, not 8e-06
        }


def test_events_table(built, tables):
    rows = {row["event"]: row for row in tables["Rule events"][1]}
    part = _pairings(built[2])[0][2]  # random v random: the pairing with the most games
    assert list(rows) == [short(name) for name in engine.EVENTS]
    for name in engine.EVENTS:
        counts = part[name].to_numpy(dtype=float)
        mean = score_rate(counts, np.ones(len(counts)))
        rate = [100 * value for value in score_rate(counts, part.plies.to_numpy(dtype=float))]
        assert rows[short(name)] == {
            "event": short(name),
            "games where it fired": f"{int((counts > 0).sum()):,}",
            "count": f"{int(counts.sum()):,}",
            "games where it fires (%)": _percent(wilson(int((counts > 0).sum()), len(counts)), 2),
            "mean per game": "{:.4f} [{:.4f}, {:.4f}]".format(*mean),
            "per 100 turns": "{:.3f} [{:.3f}, {:.3f}]".format(*rate),
        }


def test_events_by_ply_csv(built, replayed):
    """The figure's numbers: per pairing, ply and event, the turns, positions and firings."""
    found = pl.read_csv(built[1] / "tables" / "events_by_ply.csv")
    expected: dict[tuple[str, str, str, int], list[int]] = defaultdict(lambda: [0, 0, 0])
    for row in built[2].itertuples():
        game = replayed[row.game_id]
        for ply, fired in enumerate(game["turn_events"]):
            for name in TURN_FLAGS:
                counts = expected[row.south, row.north, name, ply]
                counts[0] += 1
                counts[2] += fired[name] > 0
        for name in END_EVENTS:
            for ply in range(row.plies + 1):
                counts = expected[row.south, row.north, name, ply]
                counts[1] += 1
                counts[2] += ply == row.plies and game["end"] == name
    for line in found.iter_rows(named=True):
        turns, positions, fired = expected.get((line["south"], line["north"], line["event"], line["ply"]), [0, 0, 0])
        assert line["fired"] == fired, line
        assert line["turns" if line["event"] in engine.TURN_EVENTS else "positions"] == (turns or positions), line
        assert line["share"] == pytest.approx(fired / (turns or positions), abs=1e-9)
    fired_total = found.group_by("south", "north", "event").agg(pl.col("fired").sum())
    for south, north, name, fired in fired_total.iter_rows():
        assert fired == sum(v[2] for k, v in expected.items() if k[:3] == (south, north, name))


def test_ratings_tables(built, tables):
    counts = (
        built[2]
        .assign(
            games=1, south_wins=built[2].winner == "south", draws=built[2].winner == "draw", north_wins=built[2].winner == "north"
        )
        .groupby(["south", "north"], as_index=False)[["games", "south_wins", "draws", "north_wins"]]
        .sum()
    )
    fitted = ratings(pl.from_pandas(counts), first_move="per_strategy")
    ladder = tables["Rating ladder (Elo)"][1]
    assert [row["strategy"] for row in ladder] == ["random", "greedy", "perfect"]  # the study's order
    by_name = {line["strategy"]: line for line in fitted.ladder.iter_rows(named=True)}
    for row in ladder:
        line = by_name[row["strategy"]]
        assert row["rating"] == f"{line['rating']:.0f} [{line['low']:.0f}, {line['high']:.0f}]"
        against_others = built[2][
            (built[2].south != built[2].north) & ((built[2].south == row["strategy"]) | (built[2].north == row["strategy"]))
        ]
        assert row["games"] == f"{len(against_others):,}"
        points = np.where(
            against_others.winner == "draw", 0.5, (against_others.winner == "south") == (against_others.south == row["strategy"])
        )
        assert row["score"] == f"{points.mean():.3f}"
    first = {row["strategy"]: row for row in tables["First-move term per strategy in South's seat"][1]}
    for line in fitted.first_moves.iter_rows(named=True):
        assert first[line["strategy"]]["Elo"] == f"{line['elo']:.0f} [{line['low']:.0f}, {line['high']:.0f}]"
    fits = {row["model"]: row for row in tables["Fit of the rating models"][1]}
    assert fits["a first-move term per strategy"]["deviance"] == f"{fitted.fit.deviance:,.1f}"
    assert fits["a first-move term per strategy"]["df"] == f"{fitted.fit.df}"
    shared = ratings(pl.from_pandas(counts)).fit
    assert fits["one first-move term"]["deviance"] == f"{shared.deviance:,.1f}"


def test_agreement_table(built, tables, replayed):
    solution = engine.solve(RULES)
    moves: Counter[str] = Counter()
    kept: Counter[str] = Counter()
    losses: dict[str, list[int]] = defaultdict(list)
    for row in built[2].itertuples():
        for ply, (value, worth) in enumerate(_values(solution, [int(pit) for pit in row.moves])):
            strategy = row.south if ply % 2 == 0 else row.north
            moves[strategy] += 1
            kept[strategy] += worth == value
            losses[strategy].append(value - worth)
    rows = {row["strategy"]: row for row in tables["Agreement with perfect play"][1]}
    assert set(rows) == set(moves)
    for strategy, row in rows.items():
        loss = mean_interval(np.array(losses[strategy], dtype=float))
        assert row["moves"] == f"{moves[strategy]:,}"
        assert row["moves that keep the value (%)"] == _percent(wilson(kept[strategy], moves[strategy]), 2)
        assert row["value lost per move"] == f"{loss.value:.3f} [{loss.low:.3f}, {loss.high:.3f}]"
    assert rows["perfect"]["moves that keep the value (%)"].startswith("100.00")
    text = (built[1] / "report.md").read_text(encoding="utf-8")
    value = solution.start_value()
    assert f"The value of the start: North (second) wins by {-value} stones with perfect play" in text


def test_headlines_repeat_the_tables(built, tables):
    text = (built[1] / "report.md").read_text(encoding="utf-8")
    headline = next(line for line in text.splitlines() if line.startswith(f"**{RULES.name}, random (South) v random (North)"))
    outcome = _rows(tables["Outcomes per pairing"])["random", "random"]
    assert f"{outcome['games']} games" in headline
    p = _p_words(outcome["p (score = 1/2)"])
    assert f"First-player score {outcome['first-player score']} (two-sided sign test against 1/2: p {p})" in headline
    assert f"South wins {outcome['South wins (%)']}%, draws {outcome['draws (%)']}%" in headline
    length = _rows(tables["Game length per pairing"])["random", "random"]
    assert f"Mean length {length['mean plies']} plies" in headline
    events = {row["event"]: row for row in tables["Rule events"][1]}
    for name in (*TURN_FLAGS, *END_EVENTS):
        if not name.endswith(("_stones", "_pits")):
            assert f"{short(name)} {events[short(name)]['games where it fires (%)']}" in headline


def _p_words(cell):
    return cell if cell.startswith("<") else f"= {cell}"


def test_headline_and_files(built):
    study, report, games = built
    text = (report / "report.md").read_text(encoding="utf-8")
    assert f"{len(games):,} games under 1 rule set ({RULES.name})" in text
    assert sealed_manifest(study)["study"] == "reported"
    for name in FIGURES:
        for suffix in ("svg", "pdf", "png"):
            assert (report / "figures" / f"{name}.{suffix}").stat().st_size > 1000, (name, suffix)
    # Every table of ReportData is a CSV (this study has them all but the exact ones: ratings and agreement too).
    tables = sorted(field.name for field in fields(ReportData) if field.name not in EXACT_TABLES)
    assert sorted(path.stem for path in (report / "tables").glob("*.csv")) == tables


def test_csv_tables_match_the_markdown(built):
    """The CSVs are the report's tables at full precision: the same pairings, the same values."""
    outcomes = pl.read_csv(built[1] / "tables" / "outcomes.csv")
    assert outcomes.columns[:3] == list(PAIRING_COLUMNS)
    for south, north, part in _pairings(built[2]):
        line = outcomes.filter((pl.col("south") == south) & (pl.col("north") == north)).row(0, named=True)
        assert line["games"] == len(part)
        score = ((part.winner == "south") + (part.winner == "draw") / 2).mean()
        assert line["first_player_score"] == pytest.approx(score, abs=1e-9)


def test_html_is_one_offline_file(built):
    page = (built[1] / "index.html").read_text(encoding="utf-8")
    assert page.count("<svg") == len(FIGURES)
    assert not re.search(r"<(script|link|img)\b", page), "the page must not load anything"
    assert not re.search(r'(src|href)\s*=\s*"(https?:)?//', page) and "url(http" not in page and "@import" not in page
    for caption in ("Outcomes per pairing", "Rating ladder (Elo)", "Agreement with perfect play"):
        assert caption in page


def test_the_same_study_gives_the_same_report(built, tmp_path):
    with every_figure_format():
        assert main(["study", "report", str(built[0]), "--out", str(tmp_path / "again"), "--quiet"]) == 0
    for path in sorted(built[1].rglob("*")):
        if path.is_file() and path.suffix != ".png":
            assert (tmp_path / "again" / path.relative_to(built[1])).read_bytes() == path.read_bytes(), path


def test_a_draft_report_saves_svg_only_and_links_no_other_format(built, tmp_path, monkeypatch):
    assert "([PDF](figures/board.pdf), [PNG](figures/board.png))" in (built[1] / "report.md").read_text(encoding="utf-8")
    monkeypatch.setenv(FORMATS_VARIABLE, "SVG")
    assert main(["study", "report", str(built[0]), "--out", str(tmp_path / "draft"), "--quiet"]) == 0
    assert sorted(path.name for path in (tmp_path / "draft" / "figures").iterdir()) == [f"{name}.svg" for name in sorted(FIGURES)]
    for page in ("report.md", "index.html"):
        text = (tmp_path / "draft" / page).read_text(encoding="utf-8")
        assert "PDF" not in text and "PNG" not in text, page
    assert (tmp_path / "draft" / "index.html").read_text(encoding="utf-8").count("<svg") == len(FIGURES)


def test_an_unknown_figure_format_is_one_line_before_any_work(built, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(FORMATS_VARIABLE, "svg, jpeg")
    assert main(["study", "report", str(built[0]), "--out", str(tmp_path / "bad"), "--quiet"]) == 2
    error = capsys.readouterr().err
    assert error == "modiar: error: $MODIAR_FIGURE_FORMATS names 'jpeg': figures are saved as svg, pdf, png\n"
    assert not (tmp_path / "bad").exists()


def test_report_data_from_the_library(built):
    """compute gives the tables by name; a figure whose table is missing is one ValueError."""
    data = compute(scan_games(built[0]), read_study_manifest(built[0]))
    assert [name for name, _ in data.tables()] == [field.name for field in fields(ReportData) if field.name not in EXACT_TABLES]
    assert data.outcomes.select(PAIRING_COLUMNS).equals(pl.read_csv(built[1] / "tables" / "outcomes.csv").select(PAIRING_COLUMNS))
    assert "perfect_play_agreement" in figure_names(data)
    without = replace(data, agreement=None)
    assert "perfect_play_agreement" not in figure_names(without) and "agreement" not in dict(without.tables())
    with pytest.raises(ValueError, match="no agreement table to draw from: the study never played perfect"):
        figure("perfect_play_agreement", without)
    with pytest.raises(ValueError, match="no figure 'nothing'"):
        figure("nothing", data)


def test_a_quick_look_leaves_out_the_replays_and_the_solutions_not_given(built):
    """compute(per_ply=False, solutions=...): the tables of aggregates as the report's, the
    per-ply ones None (and no report from them), agreement only by the solutions given."""
    games, manifest = scan_games(built[0]), read_study_manifest(built[0])
    quick = compute(games, manifest, per_ply=False, solutions={})
    assert (quick.ludii_plies, quick.ludii_comparable, quick.events_by_ply, quick.agreement, quick.openings) == (None,) * 5
    assert quick.outcomes.equals(pl.read_csv(built[1] / "tables" / "outcomes.csv", schema=quick.outcomes.schema))
    assert quick.rule_sets["start_value"].null_count() == quick.rule_sets.height
    assert set(figure_names(quick)) == set(FIGURES) - {"events_by_ply", "end_events_by_ply", "perfect_play_agreement"}
    with pytest.raises(ValueError, match="no events_by_ply table to draw from: compute\\(per_ply=False\\) leaves it out"):
        figure("events_by_ply", quick)
    with pytest.raises(ValueError, match="a report needs the per-ply tables"):
        compose(manifest, quick)
    judged = compute(games, manifest, per_ply=False, solutions={RULES.name: engine.solve(RULES, progress=False)})
    assert judged.agreement is not None and judged.agreement.equals(
        pl.read_csv(built[1] / "tables" / "agreement.csv", schema=judged.agreement.schema)
    )


def test_rule_events_link_to_the_reports_own_copy_of_rules_md(built):
    """The rule events are explained by RULES.md, which every report carries and links beside
    its pages: the link holds in an installed copy, or a report moved or mailed elsewhere."""
    assert "How often each rule of [RULES.md](RULES.md) fires" in (built[1] / "report.md").read_text(encoding="utf-8")
    page = (built[1] / "index.html").read_text(encoding="utf-8")
    assert 'How often each rule of <a href="RULES.md">RULES.md</a> fires' in page
    assert (built[1] / "RULES.md").read_bytes() == (ROOT / "RULES.md").read_bytes()
    assert [link for link in re.findall(r'href="([^"]+)"', page) if link.startswith("../")] == []


def test_bad_folder_is_one_line(tmp_path, capsys):
    assert main(["study", "report", str(tmp_path / "nowhere")]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("modiar: error:") and "\n" not in error and "manifest.json" in error


# ---------------------------------------------------------------------------------------------


def _replay(moves: list[int]) -> dict[str, object]:
    board, options, turn_events, states = engine.start_board(RULES), [], [], []
    states.append((board, 0))
    for ply, pit in enumerate(moves):
        mover = ply % 2
        options.append(len(engine.legal_moves(board, mover, ply, RULES)))
        result = engine.apply_move(board, mover, pit, ply, RULES)
        turn_events.append(result.events)
        board = result.board
        states.append((board, 1 - mover))
    end = engine.end_event(board, len(moves) % 2, len(moves), RULES)
    return {"options": options, "turn_events": turn_events, "states": states, "end": end}


def _values(solution, moves):
    """(value of the position, worth of the move played) at every ply, from Solution.value."""
    board = engine.start_board(RULES)
    for ply, pit in enumerate(moves):
        mover = ply % 2
        result = engine.apply_move(board, mover, pit, ply, RULES)
        yield solution.value(board, mover, ply), result.captured - solution.value(result.board, 1 - mover, ply + 1)
        board = result.board


def _markdown_tables(text: str) -> dict[str, tuple[list[str], list[dict[str, str]]]]:
    """Every table of report.md by its bold caption: the header and the rows as dicts."""
    found = {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        caption = re.match(r"^\*\*(.+?)\*\*", line)
        if caption and i + 2 < len(lines) and lines[i + 2].startswith("|"):
            header = _cells(lines[i + 2])
            rows = []
            for row in lines[i + 4 :]:
                if not row.startswith("|"):
                    break
                rows.append(dict(zip(header, _cells(row), strict=True)))
            found[caption.group(1)] = (header, rows)
    return found


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _rows(table):
    return {(row["South"], row["North"]): {k: v for k, v in row.items() if k not in ("South", "North")} for row in table[1]}


def _percent(estimate, digits):
    return f"{100 * estimate.value:.{digits}f} [{100 * estimate.low:.{digits}f}, {100 * estimate.high:.{digits}f}]"


def _plain(estimate, digits):
    return f"{estimate.value:.{digits}f} [{estimate.low:.{digits}f}, {estimate.high:.{digits}f}]"


# ---------------------------------------------------------------------------------------------
# A study of several rule sets: the variant sweep's report

VARIANTS = """name = "swept"
seed = 5
games_per_seat = 300
strategies = ["random", "greedy", "perfect"]

[rules]
stones_per_pit = 3

[games]
"perfect" = 100

[variants.feeding_off]
rules = { feeding = false }

[variants.stones4]
rules = { stones_per_pit = 4 }
strategies = ["random", "greedy"]
"""
SWEPT = {
    "default": engine.Rules(stones_per_pit=3),
    "feeding_off": engine.Rules(stones_per_pit=3, feeding=False),
    "stones4": engine.Rules(stones_per_pit=4),
}


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    folder = tmp_path_factory.mktemp("swept")
    config = folder / "swept.toml"
    config.write_text(VARIANTS)
    assert main(["study", "run", str(config), "--out", str(folder / "study"), "--quiet", "--jobs", "1"]) == 0
    assert main(["study", "report", str(folder / "study"), "--out", str(folder / "report"), "--quiet"]) == 0
    games = pd.concat([pd.read_parquet(path) for path in sorted((folder / "study" / "games").glob("*.parquet"))])
    text = (folder / "report" / "report.md").read_text(encoding="utf-8")
    return folder / "report", games.sort_values("game_id").reset_index(drop=True), _markdown_tables(text)


def test_variant_rule_sets_table(swept):
    _, games, found = swept
    rows = found["Rule sets"][1]
    assert [row["variant"] for row in rows] == list(SWEPT)
    for row, (label, rules) in zip(rows, SWEPT.items(), strict=True):
        played = games[games.rules == rules.name]
        assert row == {
            "variant": label,
            "rules": rules.name,
            "games": f"{len(played):,}",
            "value of the start (perfect play)": f"{engine.solve(rules, progress=False).start_value():+d}"
            if "perfect" in set(played.south)
            else "n/a",
        }


def test_variant_self_play_and_events(swept):
    report, games, found = swept
    self_play = found["Self-play per rule set"][1]
    expected = []
    for label, rules in SWEPT.items():
        played = games[(games.rules == rules.name) & (games.south == games.north)]
        for strategy in played.drop_duplicates("south").south:
            part = played[played.south == strategy]
            n, south, draws = len(part), int((part.winner == "south").sum()), int((part.winner == "draw").sum())
            length = mean_interval(part.plies.to_numpy(dtype=float))
            expected.append(
                {
                    "variant": label,
                    "strategy": strategy,
                    "games": f"{n:,}",
                    "first-player score": "{:.3f} [{:.3f}, {:.3f}]".format(*sign_test(south, draws, n - south - draws)[:3]),
                    "draws (%)": _percent(wilson(draws, n), 1),
                    "mean plies": f"{length.value:.2f} [{length.low:.2f}, {length.high:.2f}]",
                }
            )
    assert self_play == expected
    events = found["Games where each rule fires"][1]
    for row in events:
        rules = SWEPT[row["variant"]]
        south, north = row["pairing"].split(" v ")
        part = games[(games.rules == rules.name) & (games.south == south) & (games.north == north)]
        assert (south, north) == ("random", "random")
        name = next(name for name in engine.EVENTS if short(name) == row["event"])
        assert row["games where it fires (%)"] == _percent(wilson(int((part[name] > 0).sum()), len(part)), 2)
    assert {row["variant"] for row in events} == set(SWEPT)
    for label, rules in SWEPT.items():  # an event the rule set rules out has no row, never a 0 (RULES.md: Rule events)
        listed = [row["event"] for row in events if row["variant"] == label]
        assert listed == [
            short(name) for name in engine.EVENTS if name in engine.possible_events(rules) and short(name) in listed
        ]
        assert ("feeding forced a move" in listed) == rules.feeding and "opponent's row empty" in listed
    for name in ("variant_first_player_advantage", "variant_game_length", "variant_rule_events", "game_length"):
        assert (report / "figures" / f"{name}.svg").is_file(), name
    assert not (report / "figures" / "first_player_advantage.svg").exists()


def test_the_abstract_gives_the_solved_result_and_the_footer_how_to_rebuild(built):
    study, report, _ = built
    text = (report / "report.md").read_text(encoding="utf-8")
    abstract = text[text.index("## Abstract") : text.index("## Contents")]
    solution = engine.solve(RULES)
    start = engine.start_board(RULES)
    best = solution.best_moves(start, 0, 0)
    value = solution.start_value()
    assert value < 0 and len(best) == 1  # 3 stones a pit: North wins, and South has one best first move
    assert f"North, who moves second, wins by {-value} stones" in abstract
    assert f"South's only best first move is pit {best[0]}" in abstract
    for pit, worth in zip(engine.legal_moves(start, 0, 0, RULES), solution.move_values(start, 0, 0), strict=True):
        assert f"pit {pit} {'loses' if worth < 0 else 'wins'} by {abs(worth)}" in abstract or worth == 0
    assert "**Moving first is a disadvantage for every strategy.**" in abstract  # South scores 0.106, 0 and 0 here
    footer = text[text.rindex("---") :]
    assert f"Rebuild it with: modiar study report {study} --out <the folder of this report>" in footer
    assert "engine version 1" in footer
