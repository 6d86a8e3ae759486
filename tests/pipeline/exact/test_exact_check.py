"""The report of a study with exact outcomes: exact values beside the sampled ones and in the
headlines, and every sampled figure tested against its exact value (pipeline.exact.check),
checked here against z values computed straight from the Parquet with pandas; a changed exact
value opens the report with the alarm of a possible bug."""

from __future__ import annotations

import hashlib
import math
import re
import shutil

import numpy as np
import pandas as pd
import polars as pl
import pytest
from intervals import sign_test
from sealing import edit_manifest

import engine
from pipeline.cli import main
from pipeline.exact import check as checking
from pipeline.exact.check import FLAG_P, QUANTITIES, binomial_p, exact_check, least_count_variance, z_score
from pipeline.runs.records import parquet_bytes, read_study_manifest, scan_exact, scan_games
from pipeline.study.report import ReportData, compose, compute
from pipeline.study.report.words import short

# Four stones a pit and a cap of 60 plies: the exact outcomes take a second. greedy v heuristic
# plays 20 games only (an approximate z); the mcts pairings have no exact outcome.
CONFIG = """name = "checked"
seed = 17
games_per_seat = 200
strategies = ["random", "greedy", "heuristic", "mcts(playouts=4)"]
exact = true

[rules]
stones_per_pit = 4
ply_cap = 60

[games]
"random vs random" = 1000
"greedy vs heuristic" = 20
"mcts(playouts=4)" = 20
"""
EXACT_PAIRINGS = [(south, north) for south in ("random", "greedy", "heuristic") for north in ("random", "greedy", "heuristic")]
ALARM = "POSSIBLE BUG"


def run(folder, config, name):
    (folder / f"{name}.toml").write_text(config)
    assert main(["study", "run", str(folder / f"{name}.toml"), "--out", str(folder / name), "--quiet", "--jobs", "1"]) == 0
    return folder / name


def report(study, out):
    assert main(["study", "report", str(study), "--out", str(out), "--quiet"]) == 0
    return (out / "report.md").read_text(encoding="utf-8"), (out / "index.html").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp("exact-report")
    study = run(folder, CONFIG, "checked")
    text, page = report(study, folder / "report")
    games = pd.concat([pd.read_parquet(path) for path in sorted((study / "games").glob("*.parquet"))])
    exact = scan_exact(study).collect()
    return study, folder / "report", text, page, games, exact


def exact_of(exact, south, north):
    return exact.filter((pl.col("south") == south) & (pl.col("north") == north)).row(0, named=True)


# ---------------------------------------------------------------------------------------------
# The test itself, on hand-made games


def hand_made(winners, *, events=None, plies=10, exact_changes=None):
    """Games of random v random with these winners (and event counts), and an exact outcome of
    South and North winning half the games each, every game lasting ``plies`` plies."""
    n = len(winners)
    games = pl.DataFrame(
        {
            "rules": ["modiar"] * n,
            "south": ["random"] * n,
            "north": ["random"] * n,
            "winner": winners,
            "plies": [plies] * n,
            **{name: (events or {}).get(name, [0] * n) for name in engine.EVENTS},
        }
    )
    exact = {
        "rules": ["modiar"],
        "south": ["random"],
        "north": ["random"],
        **{name: [0.0] for name in QUANTITIES},
        "plies": [[0.0] * plies + [1.0]],
    }
    exact.update(south_win=[0.5], north_win=[0.5], first_player_score=[0.5], mean_plies=[float(plies)])
    exact.update({name: [value] for name, value in (exact_changes or {}).items()})
    return exact_check(games.lazy(), pl.DataFrame(exact))


def figure(check, quantity):
    return check.filter(pl.col("quantity") == quantity).row(0, named=True)


def test_sixty_south_wins_in_a_hundred_against_one_half_is_z_two():
    check = hand_made(["south"] * 60 + ["north"] * 40)
    assert check.height == len(QUANTITIES) and check["quantity"].to_list() == list(QUANTITIES)
    south = figure(check, "south_win")
    assert (south["games"], south["sampled"], south["exact"]) == (100, 0.6, 0.5)
    assert south["se"] == pytest.approx(0.05) and south["z"] == pytest.approx(2.0)
    assert south["se_from"] == "exact" and not south["approximate"] and not south["flagged"]
    assert figure(check, "north_win")["z"] == pytest.approx(-2.0)
    # The score (1 or 0 a game here) has the exact variance 1/4 too.
    score = figure(check, "first_player_score")
    assert score["se"] == pytest.approx(0.05) and score["z"] == pytest.approx(2.0)
    # Every game lasts 10 plies, exactly as the exact law says: no spread, no difference.
    length = figure(check, "mean_plies")
    assert (length["se"], length["z"], length["flagged"]) == (0.0, 0.0, False)
    assert not check["flagged"].any()


def test_more_than_four_standard_errors_is_flagged():
    check = hand_made(["south"] * 71 + ["north"] * 29)  # z = 0.21 / 0.05 = 4.2
    assert figure(check, "south_win")["z"] == pytest.approx(4.2) and figure(check, "south_win")["flagged"]
    assert figure(check, "first_player_score")["flagged"] and figure(check, "north_win")["flagged"]
    assert not figure(check, "draw")["flagged"]  # no draw, as the exact law says
    assert not hand_made(["south"] * 69 + ["north"] * 31)["flagged"].any()  # z = 3.8


def test_what_the_exact_law_rules_out_is_flagged_with_an_infinite_z():
    """An event that cannot fire (exact probability 0) fires once: se = 0, z infinite, flagged."""
    capture = [0] * 99 + [2]
    check = hand_made(["south", "north"] * 50, events={"capture": capture})
    for quantity in ("fires_capture", "mean_capture"):
        row = figure(check, quantity)
        assert row["se"] == 0.0 and row["z"] == math.inf and row["flagged"], quantity
    assert figure(check, "fires_capture")["p"] == 0.0
    assert z_score(0.25, 0.25, 0.0) == 0.0 and z_score(0.2, 0.25, 0.0) == -math.inf


def test_a_certain_outcome_whose_exact_value_carries_rounding_is_not_a_huge_z():
    """perfect against greedy: South wins every game, and the float sums give an exact score of
    1 - 1e-16 with a standard error of rounding; the games' 1 equals it (z = 0, not -316)."""
    certain = {"south_win": 1.0 - 1.1e-16, "north_win": 1.1e-16, "first_player_score": 1.0 - 1.1e-16}
    check = hand_made(["south"] * 100, exact_changes=certain)
    assert figure(check, "first_player_score")["z"] == 0.0 and figure(check, "south_win")["z"] == 0.0
    assert not check["flagged"].any()


def test_a_rare_event_is_tested_by_its_exact_binomial_tail():
    """Exact probability 1e-4: one firing game in 100 lies 9.9 standard errors out, but such a
    game comes in 2% of samples; five are a one-in-10^13 event."""
    rare = {"fires_grand_slam_end": 1e-4, "mean_grand_slam_end": 1e-4}
    once = hand_made(["south", "north"] * 50, events={"grand_slam_end": [1] + [0] * 99}, exact_changes=rare)
    row = figure(once, "fires_grand_slam_end")
    assert row["z"] == pytest.approx((0.01 - 1e-4) / math.sqrt(1e-4 * (1 - 1e-4) / 100))
    assert row["approximate"] and row["p"] == pytest.approx(2 * (1 - (1 - 1e-4) ** 100))
    assert not row["flagged"] and not figure(once, "mean_grand_slam_end")["flagged"]
    five = hand_made(["south", "north"] * 50, events={"grand_slam_end": [1] * 5 + [0] * 95}, exact_changes=rare)
    assert figure(five, "fires_grand_slam_end")["flagged"] and figure(five, "fires_grand_slam_end")["p"] < FLAG_P


def test_a_pairing_of_few_games_is_approximate():
    check = hand_made(["south"] * 12 + ["north"] * 8)
    assert check["approximate"].all() and not check["flagged"].any()
    assert figure(check, "south_win")["p"] == pytest.approx(binomial_p(12, 20, 0.5))


def test_the_least_variance_of_a_count():
    assert least_count_variance(0.0, 0.0) == 0.0
    assert least_count_variance(1.0, 1.0) == 0.0  # fires once in every game: always 1
    assert least_count_variance(0.25, 0.25) == pytest.approx(0.25 * 0.75)  # 0 or 1
    assert least_count_variance(2.5, 1.0) == pytest.approx(0.25)  # 2 or 3, half and half
    counts = np.array([0, 0, 1, 3])  # mean 1, fires 1/2: the least is 0 or 2, half and half, variance 1
    assert least_count_variance(1.0, 0.5) == pytest.approx(1.0) and counts.var() >= 1.0


# ---------------------------------------------------------------------------------------------
# The report of a study with exact outcomes


def markdown_tables(text):
    """Every table of report.md by its bold caption: a list of rows as dicts."""
    found, lines = {}, text.splitlines()
    for i, line in enumerate(lines):
        caption = re.match(r"^\*\*(.+?)\*\*", line)
        if caption and i + 2 < len(lines) and lines[i + 2].startswith("|"):
            header = cells(lines[i + 2])
            found[caption.group(1)] = [dict(zip(header, cells(row), strict=True)) for row in _rows_after(lines, i + 4)]
    return found


def _rows_after(lines, start):
    for line in lines[start:]:
        if not line.startswith("|"):
            return
        yield line


def cells(line):
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def test_exact_values_stand_beside_the_sampled_ones(built):
    _, _, text, _, _, exact = built
    tables = markdown_tables(text)
    outcomes = {(row["South"], row["North"]): row for row in tables["Outcomes per pairing"]}
    assert len(outcomes) == 16
    for (south, north), row in outcomes.items():
        if "mcts" in south + north:
            assert row["first-player score, exact"] == row["South wins, exact (%)"] == "n/a"
            continue
        values = exact_of(exact, south, north)
        assert row["first-player score, exact"] == f"{values['first_player_score']:.6f}"
        assert row["South wins, exact (%)"] == f"{100 * values['south_win']:.3f}"
        assert row["draws, exact (%)"] == f"{100 * values['draw']:.3f}"
        assert "North wins, exact (%)" not in row and "North wins (%)" not in row  # the rest of the games
    lengths = {(row["South"], row["North"]): row for row in tables["Game length per pairing"]}
    for south, north in EXACT_PAIRINGS:
        assert lengths[south, north]["mean plies, exact"] == f"{exact_of(exact, south, north)['mean_plies']:.4f}"
    events = {row["event"]: row for row in tables["Rule events"]}
    random = exact_of(exact, "random", "random")
    assert list(events) == [short(name) for name in engine.EVENTS]
    for name, row in zip(engine.EVENTS, events.values(), strict=True):
        assert row["fires, exact (%)"] == f"{100 * random[f'fires_{name}']:.4f}"
        assert row["mean, exact"] == f"{random[f'mean_{name}']:.6f}"


def test_the_headline_gives_the_exact_values(built):
    _, _, text, _, _, exact = built
    headline = next(line for line in text.splitlines() if line.startswith("**modiar-stones4-cap60, random (South) v random"))
    random = exact_of(exact, "random", "random")
    # exact values to the digits that mean something: no float noise (0.463581707) in a headline
    assert f"First-player score {random['first_player_score']:.4f} (exact; its games give " in headline
    assert f"South wins {100 * random['south_win']:.2f}%, draws {100 * random['draw']:.2f}% (exact)" in headline
    assert f"Mean length {random['mean_plies']:.2f} plies (exact)" in headline
    assert f"captures {100 * random['fires_capture']:.2f}" in headline  # the event under its short name
    assert "sign test against 1/2" not in headline


def test_every_sampled_figure_is_tested_and_an_honest_study_passes(built):
    _, out, text, page, _, _ = built
    check = pl.read_csv(out / "tables" / "exact_check.csv")
    assert check.height == len(EXACT_PAIRINGS) * len(QUANTITIES) == 9 * (5 + 2 * len(engine.EVENTS))
    assert set(zip(check["south"], check["north"], strict=True)) == set(EXACT_PAIRINGS)
    assert check.filter(pl.col("z").abs() >= 4).is_empty() and not check["flagged"].any()
    few = check.filter((pl.col("south") == "greedy") & (pl.col("north") == "heuristic"))
    assert (few["games"] == 20).all() and few["approximate"].all()
    assert ALARM not in text and 'class="alarm"' not in page
    section = text[text.index("## Sampled against exact") :]
    assert f"**{check.height:,} figures of 9 pairings tested: none flagged.**" in section
    assert "one-sample z test" in section and "approximate" in section
    assert (out / "figures" / "sampled_against_exact.svg").is_file()
    exact = pl.read_csv(out / "tables" / "exact.csv")
    assert exact.height == 9 and not any(dtype.is_nested() for dtype in exact.dtypes)


def test_the_z_values_are_those_of_the_games(built):
    """Every share's z from the Parquet with pandas: (k / n - p) / sqrt(p (1 - p) / n)."""
    _, out, _, _, games, exact = built
    check = pl.read_csv(out / "tables" / "exact_check.csv")
    for south, north in EXACT_PAIRINGS:
        part = games[(games.south == south) & (games.north == north)]
        values = exact_of(exact, south, north)
        n = len(part)
        shares = {"south_win": (part.winner == "south").mean(), "draw": (part.winner == "draw").mean()}
        shares |= {f"fires_{name}": (part[name] > 0).mean() for name in engine.EVENTS}
        for quantity, sampled in shares.items():
            row = check.filter((pl.col("south") == south) & (pl.col("north") == north) & (pl.col("quantity") == quantity))
            p = values[quantity]
            assert row["sampled"][0] == pytest.approx(sampled, abs=1e-9)
            se = math.sqrt(max(p * (1 - p), 0.0) / n)
            if se > 0:
                assert row["z"][0] == pytest.approx((sampled - p) / se, rel=1e-6, abs=1e-6), (south, north, quantity)
        plies = np.arange(len(values["plies"]))
        variance = float(np.dot(values["plies"], (plies - values["mean_plies"]) ** 2))
        length = check.filter((pl.col("south") == south) & (pl.col("north") == north) & (pl.col("quantity") == "mean_plies"))
        if variance > 0:
            z = (part.plies.mean() - values["mean_plies"]) / math.sqrt(variance / n)
            assert length["z"][0] == pytest.approx(z, rel=1e-6, abs=1e-6)


def test_the_sampled_figures_do_not_depend_on_the_order_of_the_games():
    """The check's figures come from exact sums: the games read in any order give the same bits
    (a float's running standard deviation changed in its last digit from one report to the next),
    and the standard deviation is the sample's (n - 1), as NumPy computes it."""
    rng = np.random.default_rng(5)
    n = 5_000
    games = pl.DataFrame(
        {
            "rules": ["modiar"] * n,
            "south": ["random"] * n,
            "north": ["greedy"] * n,
            "winner": rng.choice(["south", "draw", "north"], n).tolist(),
            "plies": rng.integers(1, 400, n),
            **{name: rng.integers(0, 60, n).astype(np.uint16) for name in engine.EVENTS},
        }
    )
    sampled = checking._sampled(games.lazy())
    for seed in (1, 2):
        shuffled = games.sample(fraction=1.0, shuffle=True, seed=seed)
        assert checking._sampled(shuffled.lazy()).equals(sampled)
    for name in engine.EVENTS:
        assert sampled[f"sd_{name}"][0] == pytest.approx(float(np.std(games[name].to_numpy(), ddof=1)), rel=1e-12)


def won_by_south(margins: pl.Series) -> list[dict[str, float]]:
    """0.1 of North's likeliest winning margin given to South instead, by as many stones: the
    outcome stays one that adds up (pipeline.runs.sanity), only another than the engine's."""
    rows = [dict(row) for row in margins]
    lost = max((row for row in rows if row["margin"] < 0), key=lambda row: row["probability"])
    assert lost["probability"] > 0.1
    lost["probability"] -= 0.1
    won = next((row for row in rows if row["margin"] == -lost["margin"]), None)
    if won is None:
        rows.append(won := {"margin": -lost["margin"], "probability": 0.0})
    won["probability"] += 0.1
    return sorted(rows, key=lambda row: row["margin"])


def test_a_changed_exact_value_opens_the_report_in_red(built, tmp_path):
    """exact.parquet rewritten with random v random's South wins 10 points higher, its margins
    moved to match (and the manifest vouching for it): the report's first words are the alarm,
    naming the figure. One that does not add up is refused before (tests/pipeline/runs/test_sanity.py)."""
    study = tmp_path / "study"
    shutil.copytree(built[0], study)
    exact = scan_exact(study).collect()
    mask = (pl.col("south") == "random") & (pl.col("north") == "random")
    shifted = exact.with_columns(
        pl.when(mask).then(pl.col("south_win") + 0.1).otherwise("south_win").alias("south_win"),
        pl.when(mask).then(pl.col("north_win") - 0.1).otherwise("north_win").alias("north_win"),
        pl.when(mask).then(pl.col("first_player_score") + 0.1).otherwise("first_player_score").alias("first_player_score"),
        pl.when(mask).then(pl.col("margin").map_elements(won_by_south, return_dtype=exact.schema["margin"])).otherwise("margin"),
    )
    data = parquet_bytes(shifted.to_arrow())
    (study / "exact.parquet").write_bytes(data)
    edit_manifest(study, lambda manifest: manifest["exact"].update(sha256=hashlib.sha256(data).hexdigest(), bytes=len(data)))
    text, page = report(study, tmp_path / "report")
    lines = [line for line in text.splitlines() if line]
    assert lines[0] == "# Study report: checked" and lines[1].startswith(f"**{ALARM}: 3 sampled figures of this study lie")
    named = lines[2:5]
    assert all(line.startswith("**random v random, ") and line.endswith("**") for line in named)
    assert [line.split(", ")[1].split(":")[0] for line in named] == ["South wins", "North wins", "first-player score"]
    assert all("exact" in line and "z = " in line for line in named)
    alarm = page.index('class="alarm"')
    assert alarm < page.index("<h2>") and alarm < page.index("Study <strong>checked</strong>")
    assert 'style="color: #b00000"' in page[alarm - 60 : alarm + 200]
    assert "random v random, South wins: sampled" in page[alarm : page.index("<h2>")]
    flagged = markdown_tables(text)["Flagged figures: possible bugs"]
    assert [row["figure"] for row in flagged] == ["South wins", "North wins", "first-player score"]
    assert "3 flagged" in text[text.index("## Sampled against exact") :]


def test_a_study_without_exact_gets_no_exact_part(tmp_path, small_study_run):
    study = small_study_run
    text, page = report(study, tmp_path / "report")
    assert "Sampled against exact" not in text and ", exact" not in text and "(exact" not in text
    assert ALARM not in text and 'class="alarm"' not in page
    assert not (tmp_path / "report" / "tables" / "exact.csv").exists()
    assert not (tmp_path / "report" / "figures" / "sampled_against_exact.svg").exists()
    data = compute(scan_games(study), read_study_manifest(study))
    assert data.exact is None and data.exact_check is None
    assert compose(read_study_manifest(study), data).alarm == []


def test_report_data_with_exact_from_the_library(built):
    study = built[0]
    data = compute(scan_games(study), read_study_manifest(study), exact=scan_exact(study))
    assert isinstance(data, ReportData) and data.exact is not None and data.exact_check is not None
    assert {"exact", "exact_check"} <= dict(data.tables()).keys()
    written = pl.read_csv(built[1] / "tables" / "exact_check.csv")
    assert data.exact_check.select("rules", "south", "north", "quantity").equals(
        written.select("rules", "south", "north", "quantity")
    )
    assert np.allclose(data.exact_check["z"].to_numpy(), written["z"].to_numpy(), rtol=1e-8, atol=1e-8)


def test_seat_effects_pool_both_orders_and_weigh_unequal_ones_equally(built):
    """greedy v heuristic played 20 games and heuristic v greedy 200: pooled, heuristic's strength
    would weigh ten times more in one order, so the seat effect is the mean of the two orders."""
    _, report, _, _, games, exact = built
    table = pl.read_csv(report / "tables" / "seat_effect.csv")
    row = table.filter((pl.col("strategy_a") == "greedy") & (pl.col("strategy_b") == "heuristic")).row(0, named=True)
    scores = []
    for south, north in (("greedy", "heuristic"), ("heuristic", "greedy")):
        part = games[(games.south == south) & (games.north == north)]
        scores.append(((part.winner == "south") + (part.winner == "draw") / 2).mean())
    assert row["seat_effect"] == pytest.approx(sum(scores) / 2 - 0.5, abs=1e-12)
    assert row["seat_effect_test"] == "normal, orders weighted equally"
    both = [exact_of(exact, "greedy", "heuristic"), exact_of(exact, "heuristic", "greedy")]
    assert row["seat_effect_exact"] == pytest.approx(sum(line["first_player_score"] for line in both) / 2 - 0.5, abs=1e-9)
    # random and greedy: 200 games each way, pooled, tested by the sign test on the decisive games
    row = table.filter((pl.col("strategy_a") == "random") & (pl.col("strategy_b") == "greedy")).row(0, named=True)
    pooled = games[
        ((games.south == "random") & (games.north == "greedy")) | ((games.south == "greedy") & (games.north == "random"))
    ]
    first, draws, second = (int((pooled.winner == side).sum()) for side in ("south", "draw", "north"))
    assert (row["games"], row["first_player_wins"], row["draws"], row["second_player_wins"]) == (
        len(pooled),
        first,
        draws,
        second,
    )
    score, low, high, p = sign_test(first, draws, second)
    assert (row["seat_effect"], row["seat_effect_low"], row["seat_effect_high"], row["seat_effect_p"]) == pytest.approx(
        (score - 0.5, low - 0.5, high - 0.5, p), abs=1e-12
    )
    assert row["seat_effect_test"] == "sign test"


def test_coverage_of_the_intervals_is_measured_against_the_exact_values(built):
    _, report, text, _, _, exact = built
    coverage = pl.read_csv(report / "tables" / "coverage.csv")
    random = exact_of(exact, "random", "random")
    score = coverage.filter(pl.col("figure") == "first-player score")
    assert score["exact"].to_list() == pytest.approx([random["first_player_score"]] * 2)
    assert coverage.filter(pl.col("interval") == "report")["coverage"].min() >= 0.9
    assert "**Coverage of the 95% intervals (%)** (tables/coverage.csv)" in text
