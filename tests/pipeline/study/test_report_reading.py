"""What a researcher would misread in a study report, held on a small study where it shows: a
pairing that one strategy wins from either seat is named as such, never counted among those
with "no seat effect"; no score is pooled over the pairings; the exact columns say why they
are missing where they are; the appendix does not give its capped games' convention Ludii's
names; numbers print without float noise or exponents; the sampled-against-exact figure is the
histogram of every z; and a best response's winnings are those of engine.exploitability.

The study: 4 stones a pit, where perfect wins every game against heuristic from either seat
(engine.exact_outcome says so below, not the report's code), with mcts, which has no exact outcome.
"""

from __future__ import annotations

import re

import polars as pl
import pytest

import engine
from pipeline.cli import main
from pipeline.report.figures import FORMATS_VARIABLE
from pipeline.runs.costs import COSTS
from pipeline.runs.records import read_study_manifest, scan_games
from pipeline.study.report import compute
from pipeline.study.report.quality import pending_seconds as quality_pending
from pipeline.study.report.sections.ratings import ratings_section

FOUR = engine.Rules(stones_per_pit=4)
CONFIG = """name = "swept"
seed = 5
games_per_seat = 30
strategies = ["random", "heuristic", "perfect", "mcts(playouts=4)"]
exact = true

[rules]
stones_per_pit = 4
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("swept")
    (folder / "swept.toml").write_text(CONFIG)
    assert main(["study", "run", str(folder / "swept.toml"), "--out", str(folder / "study"), "--quiet", "--jobs", "1"]) == 0
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(FORMATS_VARIABLE, "svg")
        assert main(["study", "report", str(folder / "study"), "--out", str(folder / "report"), "--quiet"]) == 0
    return folder / "report"


@pytest.fixture(scope="module")
def text(report):
    return (report / "report.md").read_text(encoding="utf-8")


def _section(text: str, title: str) -> str:
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else len(text)]


def test_the_pair_strength_decides_is_named_not_counted_as_no_seat_effect(text):
    as_south = engine.exact_outcome("perfect", "heuristic", rules=FOUR)
    as_north = engine.exact_outcome("heuristic", "perfect", rules=FOUR)
    assert as_south.south_win == 1.0 and as_north.north_win == 1.0  # the premise: perfect wins from either seat
    abstract = _section(text, "Abstract")
    sentence = next(line for line in abstract.splitlines() if line.startswith("Over both seat orders"))
    assert "perfect wins every game against heuristic from either seat" in sentence
    swept = int(re.search(r"in (\d+) strength decides every game", sentence).group(1))
    assert swept == 1
    # the pairs the games do not decide, but could, are the rest: 6 pairs less the significant and the swept
    significant = re.search(r"lowers the score in (\d+) and raises it in (\d+)", sentence)
    silent = re.search(r"in (\d+) the games detect none", sentence)
    counted = int(significant.group(1)) + int(significant.group(2)) + (int(silent.group(1)) if silent else 0) + swept
    assert counted == 6
    seat = _section(text, "Who gains from moving first")
    assert "perfect wins every game against heuristic from either seat" in seat


def test_no_score_is_pooled_over_pairings(text):
    assert "pooled" not in " ".join(re.findall(r"\*\*([^*]+)\*\* \(tables/", text)).lower()
    assert "No score pooled over every pairing is given" in text


def test_the_exact_columns_say_why_mcts_has_none_once_per_table(text):
    reason = "n/a where there is none (mcts(playouts=4) has none, choosing its moves by sampling)"
    assert reason in _section(text, "Game length")
    assert 'exact = "self-play"' not in text  # the config asks for every pairing: no word of self-play only


def test_the_appendix_keeps_ludii_names_for_ludii_conventions(text):
    appendix = _section(text, "Appendix")
    metrics = appendix[appendix.index("### Game metrics of every pairing") :]
    header = next(line for line in metrics.splitlines() if line.startswith("| South | North |"))
    for name in ("AdvantageP1", "Balance", "Completion", "Drawishness", "BranchingFactor", "DecisionMoves"):
        assert name not in header
    assert "first player wins" in header
    ludii = _section(text, "Ludii game metrics")
    assert "AdvantageP1" in ludii and "counted as a draw" in ludii


def test_numbers_print_without_noise_or_exponents(text):
    assert not re.search(r"\d\.\d{7,}", text), "a number with seven decimals or more"
    assert not re.search(r"\d(\.\d+)?e[-+]\d", text.replace("6.3e-05", "")), "a number with an exponent"
    headline = _section(text, "Headlines")
    exact = engine.exact_outcome("random", "random", rules=FOUR)
    assert f"First-player score {exact.first_player_score:.4f} (exact" in headline


def test_the_sampled_against_exact_figure_is_the_z_histogram(report, text):
    svg = (report / "figures" / "sampled_against_exact.svg").read_text(encoding="utf-8")
    assert "standard normal" in svg and "(sampled - exact) / standard error" in svg
    tested = int(re.search(r"\*\*([\d,]+) figures of \d+ pairings tested", text).group(1).replace(",", ""))
    drawn = int(re.search(r"([\d,]+) figures' z", svg).group(1).replace(",", ""))
    certain = int(re.search(r"left out, certain \(no variance\): ([\d,]+)", svg).group(1).replace(",", ""))
    assert drawn + certain == tested and drawn > 0  # every tested figure is drawn or counted


def test_exploitability_is_the_engines(text):
    section = _section(text, "How much a best response wins")
    rows = {
        line.split(" | ")[0].strip("| "): line for line in section.splitlines() if line.startswith("| ") and "---" not in line
    }
    assert "mcts(playouts=4)" not in rows  # no table, no exploitability
    for name in ("random", "heuristic", "perfect"):
        found = engine.exploitability(name, rules=FOUR)
        cells = [cell.strip() for cell in rows[name].strip("|").split("|")]
        assert cells[1:] == [
            _signed(found.as_south),
            _signed(found.as_north),
            _signed((found.as_south + found.as_north) / 2),
        ]
    perfect = engine.exploitability("perfect", rules=FOUR)
    assert perfect.as_south == engine.solve(FOUR).value(engine.start_board(FOUR), 0, 0)  # the solved value, +6


def _signed(value: float) -> str:
    text = f"{value:+.2f}"
    return text.lstrip("+-") if float(text) == 0 else text


def test_a_rating_the_games_barely_bound_reads_as_such(report):
    """A rating whose interval is wider than the prior's spread (perfect's in the default study,
    3303 [-18204, 24809]) is given as its half-width and named in the text, never as an interval
    that reads as a number."""
    study = report.parent / "study"
    data = compute(scan_games(study), read_study_manifest(study))
    prior = float(data.first_move["prior_sd"][0])
    wide = data.ratings.with_columns(
        pl.when(pl.col("strategy") == "perfect").then(pl.col("rating") - 20 * prior).otherwise("low").alias("low"),
        pl.when(pl.col("strategy") == "perfect").then(pl.col("rating") + 20 * prior).otherwise("high").alias("high"),
    )
    section = ratings_section(wide, data.first_move, data.ratings_fit, data)
    ladder = {row[0]: row[1] for row in section.tables[0].rows}
    perfect = wide.filter(pl.col("strategy") == "perfect").row(0, named=True)
    assert ladder["perfect"] == f"{perfect['rating']:,.0f} ± {20 * prior:,.0f} (barely bounded)"
    assert all("barely" not in cell for name, cell in ladder.items() if name != "perfect")
    assert any(paragraph.startswith("**Barely bounded: perfect.**") for paragraph in section.text)


def test_the_quality_section_gives_the_engines_exact_quality(report, text):
    """The section "Is it a good game?": each table strategy's self-play, as engine.exact_quality gives it;
    perfect's loses nothing and never changes the lead; the abstract names random's figures;
    both figures are drawn."""
    section = _section(text, "Is it a good game?")
    rows = {
        line.split(" | ")[0].strip("| "): [cell.strip() for cell in line.strip("|").split("|")]
        for line in section.splitlines()
        if line.startswith("| ") and "---" not in line
    }
    assert "mcts(playouts=4)" not in rows
    for name in ("random", "heuristic", "perfect"):
        exact = engine.exact_quality(name, name, rules=FOUR).as_dict()
        cells = rows[name]
        assert float(cells[1]) == pytest.approx(exact["lead_changes"], abs=0.001)
        assert float(cells[2]) == pytest.approx(100 * exact["comeback"], abs=0.01)
        assert float(cells[-1]) == pytest.approx(exact["plies"], abs=0.005)
    assert rows["perfect"][1] == "0" and rows["perfect"][6] == "0 / 0"
    random = engine.exact_quality("random", "random", rules=FOUR).as_dict()
    assert f"the lead changes hands {random['lead_changes']:.2f} times a game" in _section(text, "Abstract")
    for stem in ("forecast_by_ply", "stones_lost_by_ply"):
        assert (report / "figures" / f"{stem}.svg").exists()


def test_a_second_report_waits_only_for_ludiis_metrics(report):
    """Once a report has computed the self-play qualities (cached), the next one's estimate of
    its judging step is the time of Ludii's metrics of the three table strategies alone."""
    manifest = read_study_manifest(report.parent / "study")
    assert quality_pending(manifest) == pytest.approx(3 * COSTS.report_calibration_seconds_per_strategy)


def test_the_calibration_table_is_the_analysis_modules(report, text):
    """Ludii's metrics against the exact values: every row of the CSV is calibration_table's for
    the study's self-play (the exact evaluator's Drama of perfect self-play is 0: nothing happens),
    and Ludii's code, as written, prints DecisivenessMoves 0 for every strategy."""
    table = pl.read_csv(report / "tables" / "calibration.csv")
    exact_perfect = table.filter(
        (pl.col("strategy") == "perfect") & (pl.col("metric") == "Drama") & (pl.col("evaluator") == "exact")
    )
    assert exact_perfect["mean"].to_list() == [0.0]
    coded = table.filter((pl.col("metric") == "DecisivenessMoves_code") & (pl.col("evaluator") == "heuristic"))
    assert coded["mean"].to_list() == [0.0] * coded.height and coded.height == 3
    section = _section(text, "Is it a good game?")
    assert "| Ludii metric (as defined) |" in section and "prints the same value for every game" in section
