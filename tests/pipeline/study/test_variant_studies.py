"""Studies with [variants]: a round robin per rule set, seeds that ignore the other variants, records, status, summary."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import engine
from pipeline.cli import main
from pipeline.runs.paths import STUDIES
from pipeline.runs.records import RecordError, read_study_manifest, scan_games
from pipeline.runs.seeds import pairing_key, rules_key
from pipeline.study.config import BASE, load_study, parse_study
from pipeline.study.run import chunk_seeds, plan, run_study
from pipeline.study.status import status

SMOKE = {"name": "smoke", "seed": 7, "games_per_seat": 30, "strategies": ["random", "greedy"], "rules": {}}
FEEDING_OFF = {"rules": {"feeding": False, "stones_per_pit": 4}}  # 4 stones: small tables, quick tests
STONES_5 = {"rules": {"stones_per_pit": 5}, "strategies": ["random"]}


def study(**changes):
    return parse_study({**SMOKE, **changes})


def games(folder: Path) -> pl.DataFrame:
    return scan_games(folder).collect().sort("game_id")


def snapshot(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


# ---------------------------------------------------------------------------------------------
# Configs


def test_each_rule_set_has_its_round_robin_numbered_after_the_study_own():
    swept = study(games={"greedy": 10}, variants={"off": FEEDING_OFF, "five": STONES_5})
    rows = [(p.number, p.variant, p.rules.name, p.south, p.north, p.games) for p in swept.pairings()]
    assert rows == [
        (0, BASE, "modiar", "random", "random", 30),
        (1, BASE, "modiar", "random", "greedy", 10),
        (2, BASE, "modiar", "greedy", "random", 10),
        (3, BASE, "modiar", "greedy", "greedy", 10),
        (4, "off", "modiar-stones4-feedingoff", "random", "random", 30),
        (5, "off", "modiar-stones4-feedingoff", "random", "greedy", 10),
        (6, "off", "modiar-stones4-feedingoff", "greedy", "random", 10),
        (7, "off", "modiar-stones4-feedingoff", "greedy", "greedy", 10),
        (8, "five", "modiar-stones5", "random", "random", 30),
    ]
    assert swept.total_games() == 30 * 3 + 10 * 6
    assert study(games={"greedy": 10}).pairings() == swept.pairings()[:4]


def test_variant_rules_change_the_study_rules_and_games_default_to_those_of_its_strategies():
    swept = study(
        rules={"stones_per_pit": 4},
        games={"greedy": 10},
        variants={"off": {"rules": {"feeding": False}}, "alone": {"rules": {}, **STONES_5}},
    )
    off, alone = swept.variants
    assert off.rules == engine.Rules(stones_per_pit=4, feeding=False) and off.games == (("greedy", 10),)
    assert alone.rules == engine.Rules(stones_per_pit=5) and alone.strategies == ("random",) and alone.games == ()


def test_the_config_written_out_reads_back_and_has_no_variants_key_without_variants():
    swept = study(variants={"off": FEEDING_OFF, "five": {**STONES_5, "games": {"random vs random": 7}}})
    config = swept.as_dict()
    assert list(config["variants"]) == ["off", "five"]
    assert config["variants"]["five"]["rules"]["stones_per_pit"] == 5 and config["variants"]["five"]["games"] == {
        "random vs random": 7
    }
    assert parse_study(config) == swept
    assert "variants" not in study().as_dict()


def test_the_shipped_sweep_is_valid():
    sweep = load_study(STUDIES / "variants.toml")
    labels = [rule_set.label for rule_set in sweep.rule_sets()]
    assert labels[0] == BASE and len(set(labels)) == len(labels) == 13
    assert len({rule_set.rules for rule_set in sweep.rule_sets()}) == 13
    assert all(rule_set.strategies[:2] == ("random", "greedy") for rule_set in sweep.rule_sets())
    random = [p.games for p in sweep.pairings() if p.south == p.north == "random"]
    assert len(random) == 13 and min(random) >= 100_000


# ---------------------------------------------------------------------------------------------
# Seeds and games


def first_chunk(swept, variant: str):
    """The first chunk of greedy (South) against random (North) under a rule set of the study."""
    return next(
        c
        for c in plan(swept)
        if (c.pairing.variant, c.pairing.south, c.pairing.north, c.index) == (variant, "greedy", "random", 0)
    )


def test_a_variant_seeds_come_from_its_rules_name_not_its_label_or_the_other_variants():
    one = study(variants={"off": FEEDING_OFF})
    other = study(variants={"five": STONES_5, "feeding_off": FEEDING_OFF})
    seeds = chunk_seeds(7, first_chunk(one, "off"))
    assert (seeds == chunk_seeds(7, first_chunk(other, "feeding_off"))).all()
    assert not np.isin(seeds, chunk_seeds(7, first_chunk(one, BASE))).any()
    block = np.random.SeedSequence([7, pairing_key("greedy", "random"), rules_key(engine.Rules(stones_per_pit=4, feeding=False))])
    assert seeds[0] == engine.game.rng.game_seeds(int(block.generate_state(1, dtype=np.uint64)[0]), 1)[0]


def test_variants_leave_the_study_own_games_and_files_as_they_were(tmp_path):
    alone = run_study(study(), tmp_path / "alone", progress=False)
    swept = run_study(study(variants={"off": FEEDING_OFF, "five": STONES_5}), tmp_path / "swept", progress=False)
    before = snapshot(alone)
    after = snapshot(swept)
    assert {name: digest for name, digest in after.items() if name in before and name != "manifest.json"} == {
        name: digest for name, digest in before.items() if name != "manifest.json"
    }
    frame = games(swept)
    assert frame.group_by("rules").len().sort("rules").rows() == [
        ("modiar", 120),
        ("modiar-stones4-feedingoff", 120),
        ("modiar-stones5", 30),
    ]
    assert frame["game_id"].to_list() == list(range(270))


def test_a_variant_plays_its_own_rules_and_its_games_whatever_the_other_variants(tmp_path):
    one = games(run_study(study(variants={"off": FEEDING_OFF}), tmp_path / "one", progress=False))
    two = games(run_study(study(variants={"five": STONES_5, "nofeed": FEEDING_OFF}), tmp_path / "two", progress=False))
    columns = [name for name in one.columns if name != "game_id"]
    assert (
        one.filter(pl.col("rules") == "modiar-stones4-feedingoff")
        .select(columns)
        .equals(two.filter(pl.col("rules") == "modiar-stones4-feedingoff").select(columns))
    )
    five = two.filter(pl.col("rules") == "modiar-stones5")
    assert (five["score_south"] + five["score_north"] == 30).all()
    for row in two.filter(pl.col("rules") != "modiar").sample(20, seed=3).iter_rows(named=True):
        record = engine.play_game(row["south"], row["north"], rules=engine.Rules.from_name(row["rules"]), seed=row["seed"])
        assert tuple(row["moves"]) == record.moves and row["winner"] == record.winner


def test_a_variant_plies_replay_under_its_rules(tmp_path):
    folder = run_study(study(games_per_seat=3, keep_plies=True, variants={"five": STONES_5}), tmp_path, progress=False)
    plies = scan_games(folder, "plies").collect()
    five = games(folder).filter(pl.col("rules") == "modiar-stones5")["game_id"].to_list()
    first = plies.filter(pl.col("game_id").is_in(five) & (pl.col("ply") == 0))
    assert len(first) == 3 and (first["board"] == engine.start_board(engine.Rules(stones_per_pit=5))).all()


# ---------------------------------------------------------------------------------------------
# Resume, manifest, status and summary


def test_a_stopped_sweep_resumes_to_the_same_bytes(tmp_path):
    swept = study(variants={"off": FEEDING_OFF, "five": STONES_5}, chunk_games=8)
    whole = run_study(swept, tmp_path / "whole", progress=False)
    stopped = run_study(swept, tmp_path / "stopped", progress=False, stop_after=20)
    run_study(swept, stopped, jobs=2, progress=False)
    assert snapshot(stopped) == snapshot(whole)
    assert read_study_manifest(whole)["config"]["variants"]["off"]["rules"]["feeding"] is False


def test_adding_or_removing_variants_is_another_config(tmp_path):
    run_study(study(variants={"off": FEEDING_OFF}), tmp_path, progress=False)
    with pytest.raises(RecordError, match=r"another config \(variants differs\)"):
        run_study(study(), tmp_path, progress=False)
    with pytest.raises(RecordError, match=r"another config \(variants differs\)"):
        run_study(study(variants={"off": FEEDING_OFF, "five": STONES_5}), tmp_path, progress=False)


def test_status_and_summary_of_a_sweep(tmp_path, capsys):
    folder = run_study(study(variants={"five": STONES_5}), tmp_path, progress=False)
    text = status(folder)
    assert "40 of 40 chunks done (complete), 150 of 150 games" in text and len(text.splitlines()) == 2 + 5
    assert "rules default (modiar), five (modiar-stones5)" in text.splitlines()[0]
    assert [line.split()[0] for line in text.splitlines()[2:]] == ["default"] * 4 + ["five"]
    assert main(["study", "summary", str(folder)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("rules") and any(line.startswith("modiar-stones5") for line in out.splitlines())
    assert sum(line.startswith("modiar ") for line in out.splitlines()) == 4
