"""Studies: configs checked before anything runs, seeded chunks, Parquet records, resume, the CLI."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import engine
from engine.game.rng import game_seeds
from pipeline.cli import main
from pipeline.runs.config import ConfigError
from pipeline.runs.paths import STUDIES
from pipeline.runs.records import RecordError, read_games, scan_games
from pipeline.runs.seeds import pairing_key
from pipeline.study.config import load_study, parse_study
from pipeline.study.run import SEED_BLOCK, chunk_seeds, chunk_size, plan, run_study
from pipeline.study.status import status

SMOKE = {"name": "smoke", "seed": 7, "games_per_seat": 300, "strategies": ["random", "greedy"], "rules": {}}


def study(**changes):
    return parse_study({**SMOKE, **changes})


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under a folder and the SHA-256 of its bytes."""
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def games(folder: Path) -> pl.DataFrame:
    return scan_games(folder).collect().sort("game_id")


# ---------------------------------------------------------------------------------------------
# Configs


def test_the_shipped_studies_are_valid():
    smoke = load_study(STUDIES / "smoke.toml")
    assert (smoke.name, smoke.seed, smoke.games_per_seat, smoke.strategies) == ("smoke", 7, 1000, ("random", "greedy"))
    assert smoke.rules == engine.Rules() and smoke.total_games() == 4000
    default = load_study(STUDIES / "default.toml")
    pairings = {(p.south, p.north): p.games for p in default.pairings()}
    assert pairings[("random", "random")] == 1_000_000 and pairings[("greedy", "random")] == 100_000
    assert pairings[("perfect", "mcts(playouts=100)")] == 20_000 and pairings[("heuristic", "alphabeta(depth=4)")] == 100_000
    # Every pairing without mcts gets at least 100,000 games, the skill dial included.
    assert all(games >= 100_000 for (south, north), games in pairings.items() if "mcts" not in south + north)
    assert {"perfect(epsilon=0.1)", "perfect(temperature=1.0)"} <= set(default.strategies)
    assert len(pairings) == len(default.strategies) ** 2 and default.total_games() == 8_500_000


def test_games_table_caps_expensive_strategies_and_sets_pairings():
    capped = study(strategies=["random", "greedy"], games={"greedy": 10, "greedy vs greedy": 50})
    assert {(p.south, p.north): p.games for p in capped.pairings()} == {
        ("random", "random"): 300,
        ("random", "greedy"): 10,
        ("greedy", "random"): 10,
        ("greedy", "greedy"): 50,
    }
    assert [p.number for p in capped.pairings()] == [0, 1, 2, 3]


GOOD = 'name = "smoke"\nseed = 7\ngames_per_seat = 10\nstrategies = ["random", "greedy"]\n'


@pytest.mark.parametrize(
    "text, message",
    [
        ('name = "smoke"\nseed = \n', "is not valid TOML"),
        (GOOD.replace("seed = 7\n", ""), "missing key 'seed'"),
        (GOOD.replace('"greedy"]', '"nonsense"]'), "unknown strategy 'nonsense'; known strategies: "),
        (GOOD.replace('"greedy"]', '"greedy(depth=x)"]'), "greedy(depth=x)"),
        (GOOD.replace("= 10", "= 0"), "games_per_seat must be a whole number of at least 1, not 0"),
        (GOOD.replace("= 10", "= -5"), "games_per_seat must be a whole number of at least 1, not -5"),
        (GOOD.replace("= 10", "= 2.5"), "games_per_seat must be a whole number"),
        (GOOD.replace("seed = 7", 'seed = "7"'), "seed must be a whole number from 0 to"),
        (GOOD.replace("seed = 7", "seed = -1"), "seed must be a whole number from 0 to"),
        (GOOD.replace('["random", "greedy"]', '"random"'), "strategies must be a non-empty list"),
        (GOOD.replace('["random", "greedy"]', "[]"), "strategies must be a non-empty list"),
        (GOOD.replace('"greedy"]', '"random"]'), "strategy 'random' is listed twice"),
        (GOOD.replace('"smoke"', '"../evil"'), "name '../evil' cannot be a folder name"),
        (GOOD.replace('"smoke"', '""'), "cannot be a folder name"),
        (GOOD.replace('"smoke"', "3"), "cannot be a folder name"),
        (GOOD + "keep_plies = 1\n", "keep_plies must be true or false"),
        (GOOD + "gmaes = 3\n", "unknown key 'gmaes'"),
        (GOOD + "chunk_games = 0\n", "chunk_games must be a whole number from 1 to 4194304"),
        (GOOD + "[rules]\ncolour = 'red'\n", "unknown rule 'colour' in [rules]; the rules are stones_per_pit"),
        (GOOD + "[rules]\nstones_per_pit = 0\n", "stones_per_pit must be a whole number"),
        (GOOD + "[rules]\nfeeding = 'yes'\n", "feeding must be True or False"),
        (GOOD + "[rules]\ngrand_slam = 'sometimes'\n", "grand_slam must be one of"),
        (GOOD + "rules = 3\n", "rules must be a table"),
        (GOOD + "[games]\n'mcts vs random' = 3\n", "[games] key 'mcts vs random' must be one of the strategies"),
        (GOOD + "[games]\nrandom = 0\n", "[games] 'random' must be a whole number of at least 1, not 0"),
        (GOOD + "variants = 3\n", "variants must be a table of [variants.LABEL] tables"),
        (GOOD + "[variants]\noff = 3\n", "[variants.off] must be a table with rules"),
        (GOOD + "[variants.off]\nstrategies = ['random']\n", "[variants.off]: missing key 'rules'"),
        (GOOD + "[variants.off]\nrules = {}\ncolour = 1\n", "[variants.off]: unknown key 'colour'"),
        (GOOD + "[variants.off]\nrules = { colour = 'red' }\n", "unknown rule 'colour' in [variants.off] rules; the rules are"),
        (GOOD + "[variants.off]\nrules = { stones_per_pit = 0 }\n", "[variants.off] rules: Rules.stones_per_pit must be"),
        (GOOD + "[variants.off]\nrules = { grand_slam = 'often' }\n", "grand_slam must be one of"),
        (GOOD + "[variants.off]\nrules = 'feeding'\n", "rules must be a table ([variants.off] rules)"),
        (GOOD + "[variants.off]\nrules = {}\n", "[variants.off] plays the rules modiar, as the study's own [rules] does"),
        (GOOD + "[variants.off]\nrules = { stones_per_pit = 7 }\n", "as the study's own [rules] does"),
        (
            GOOD + "[variants.off]\nrules = { feeding = false }\n[variants.off2]\nrules = { feeding = false, ply_cap = 400 }\n",
            "[variants.off2] plays the rules modiar-feedingoff, as [variants.off] does",
        ),
        (GOOD + "[variants.'no feeding']\nrules = { feeding = false }\n", "variant label 'no feeding' cannot be used"),
        (GOOD + "[variants.default]\nrules = { feeding = false }\n", "variant label 'default' cannot be used"),
        (
            GOOD + "[variants.off]\nrules = { feeding = false }\nstrategies = ['nonsense']\n",
            "[variants.off]: strategies: unknown strategy 'nonsense'",
        ),
        (
            GOOD + "[variants.off]\nrules = { feeding = false }\nstrategies = []\n",
            "[variants.off]: strategies must be a non-empty",
        ),
        (
            GOOD + "[variants.off]\nrules = { feeding = false }\nstrategies = ['random']\ngames = { greedy = 5 }\n",
            "[variants.off]: [games] key 'greedy' must be one of the strategies",
        ),
    ],
)
def test_a_bad_config_is_one_line_exit_2_and_changes_nothing(tmp_path, capsys, text, message):
    existing = tmp_path / "records"
    run_study(study(games_per_seat=5), existing, progress=False)
    before = snapshot(tmp_path)
    config = tmp_path / "bad.toml"
    config.write_text(text)
    assert main(["study", "run", str(config), "--out", str(existing), "--jobs", "1", "--quiet"]) == 2
    assert main(["study", "run", str(config), "--out", str(tmp_path / "new"), "--jobs", "1", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and err.startswith("modiar: error: ") and message in err
    assert str(config) in err.splitlines()[0]
    config.unlink()
    assert snapshot(tmp_path) == before


def test_a_missing_config_file_is_one_line(tmp_path, capsys):
    assert main(["study", "run", str(tmp_path / "nowhere.toml"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot read study config" in err


def test_another_config_in_the_same_folder_is_refused(tmp_path, capsys):
    run_study(study(), tmp_path, progress=False)
    before = snapshot(tmp_path)
    with pytest.raises(RecordError, match="another config \\(seed differs\\)"):
        run_study(study(seed=8), tmp_path, progress=False)
    config = tmp_path.parent / f"{tmp_path.name}-other.toml"
    config.write_text(GOOD)
    assert main(["study", "run", str(config), "--out", str(tmp_path), "--jobs", "1", "--quiet"]) == 2
    assert "another config" in capsys.readouterr().err
    assert snapshot(tmp_path) == before


def test_a_folder_with_other_files_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(RecordError, match=r"not empty and holds no manifest\.json"):
        run_study(study(), tmp_path, progress=False)
    assert snapshot(tmp_path) == {"notes.txt": hashlib.sha256(b"mine").hexdigest()}


# ---------------------------------------------------------------------------------------------
# Seeds and games


def test_game_seeds_do_not_depend_on_the_chunk_size():
    whole = study(strategies=["random"], games_per_seat=SEED_BLOCK + 700)
    cut = study(strategies=["random"], games_per_seat=SEED_BLOCK + 700, chunk_games=1000)
    assert len(plan(whole)) == 8 and len(plan(cut)) == 67
    seeds = np.concatenate([chunk_seeds(whole.seed, chunk) for chunk in plan(whole)])
    assert len(set(seeds.tolist())) == len(seeds) == SEED_BLOCK + 700
    assert (seeds == np.concatenate([chunk_seeds(cut.seed, chunk) for chunk in plan(cut)])).all()
    block_seed = np.random.SeedSequence([7, pairing_key("random", "random")]).generate_state(1, dtype=np.uint64)[0]
    assert seeds[12345] == game_seeds(block_seed, 12346)[-1]


def test_a_pairing_plays_the_same_games_whatever_else_the_study_holds(tmp_path):
    alone = games(run_study(study(strategies=["greedy"], games_per_seat=50), tmp_path / "alone", progress=False))
    among = games(run_study(study(strategies=["random", "greedy"], games_per_seat=50), tmp_path / "among", progress=False))
    among = among.filter((pl.col("south") == "greedy") & (pl.col("north") == "greedy"))
    assert alone.drop("game_id").equals(among.drop("game_id"))


def test_chunks_take_whole_seed_blocks_and_cut_small_pairings_for_the_workers():
    assert chunk_size(1_000_000, 1 << 18) == 2 * SEED_BLOCK
    assert chunk_size(500, 1 << 18) == 63 and chunk_size(500, 10) == 10 and chunk_size(3, 100) == 1


def test_pairings_with_mcts_are_cut_into_fewer_larger_chunks_for_its_lockstep_searches():
    assert chunk_size(20_000, 1 << 18, searches=True) == 5000 and chunk_size(20_000, 1 << 18) == 2500
    assert chunk_size(2000, 1 << 18, searches=True) == 1000 and chunk_size(2000, 600, searches=True) == 600
    assert chunk_size(1_000_000, 1 << 18, searches=True) == chunk_size(1_000_000, 1 << 18) == 2 * SEED_BLOCK
    chunks = [chunk for chunk in plan(load_study(STUDIES / "default.toml")) if "mcts" in chunk.pairing.south]
    assert {len(chunk) for chunk in chunks} == {5000} and len(chunks) == 4 * len(load_study(STUDIES / "default.toml").strategies)


def test_a_folder_whose_chunks_were_cut_otherwise_is_refused_not_misread(tmp_path, monkeypatch):
    config = {"strategies": ["mcts(playouts=2)"], "games_per_seat": 40}
    monkeypatch.setattr("pipeline.study.run.SEARCH_CHUNK", 1)  # an older cut: 8 chunks of 5 games
    run_study(study(**config), tmp_path, progress=False, stop_after=3)
    monkeypatch.undo()  # this version's: 2 chunks of 20
    with pytest.raises(RecordError, match="holds chunk p000-c00002 of 5 games, which this version of modiar does not cut"):
        run_study(study(**config), tmp_path, progress=False)
    assert len(games(tmp_path)) == 15  # nothing written is lost


def test_same_games_whatever_the_chunk_size_and_the_jobs(tmp_path):
    one = run_study(study(chunk_games=1000), tmp_path / "one", jobs=1, progress=False)
    two = run_study(study(chunk_games=7), tmp_path / "two", jobs=2, progress=False)
    assert games(one).equals(games(two))
    assert len(games(one)) == 4 * 300


def test_games_across_seed_blocks_match_whatever_the_chunks(tmp_path):
    config = {"strategies": ["random"], "games_per_seat": SEED_BLOCK + 300}
    whole = run_study(study(**config, chunk_games=SEED_BLOCK + 300), tmp_path / "whole", progress=False)
    cut = run_study(study(**config, chunk_games=5000), tmp_path / "cut", progress=False)
    assert games(whole).equals(games(cut))


def test_batched_games_are_play_game_games(tmp_path):
    batched = games(run_study(study(), tmp_path / "batched", progress=False))
    scalar = games(run_study(study(), tmp_path / "scalar", progress=False, batched=False))
    assert batched.equals(scalar)
    for row in batched.sample(40, seed=1).iter_rows(named=True):
        record = engine.play_game(row["south"], row["north"], seed=row["seed"])
        assert tuple(row["moves"]) == record.moves
        assert (row["winner"], row["score_south"], row["score_north"], row["plies"], row["end_reason"]) == record[1:6]
        assert {name: row[name] for name in engine.EVENTS} == record.events


def test_the_games_columns(tmp_path):
    frame = games(run_study(study(), tmp_path, progress=False))
    assert frame["game_id"].to_list() == list(range(1200))
    assert frame.schema["seed"] == pl.UInt64 and frame.schema["moves"] == pl.List(pl.UInt8)
    assert set(frame["winner"]) <= {"south", "north", "draw"} and set(frame["end_reason"]) <= {"no_moves", "ply_cap"}
    assert set(frame["study"]) == {"smoke"} and set(frame["rules"]) == {"modiar"} and set(frame["engine_version"]) == {"1"}
    assert (frame["score_south"] + frame["score_north"] == 42).all()
    assert (frame["moves"].list.len() == frame["plies"].cast(pl.UInt32)).all()
    assert frame.group_by("south", "north").len()["len"].to_list() == [300] * 4
    assert read_games(tmp_path).shape == frame.shape


def test_plies_replay_every_game(tmp_path):
    rules = {"feeding": False, "stones_per_pit": 4}  # a rule set of its own, and small tables
    folder = run_study(study(games_per_seat=6, keep_plies=True, rules=rules), tmp_path, progress=False)
    plies = scan_games(folder, "plies").collect().sort("game_id", "ply")
    frame = games(folder)
    assert len(plies) == frame["plies"].sum()
    first = plies.filter(pl.col("ply") == 0)
    assert (first["board"] == engine.start_board(engine.Rules(**rules))).all()
    captured = plies.group_by("game_id").agg(pl.col("captured").cast(pl.Int64).sum()).sort("game_id")
    assert captured["captured"].to_list() == frame["capture_stones"].cast(pl.Int64).to_list()
    assert plies.group_by("game_id").agg(pl.col("pit"))["pit"].to_list() == frame["moves"].to_list()
    assert set(frame["rules"]) == {"modiar-stones4-feedingoff"}


# ---------------------------------------------------------------------------------------------
# Resume and checks


def test_a_stopped_run_resumes_to_the_same_bytes(tmp_path):
    whole = run_study(study(keep_plies=True, games_per_seat=40, chunk_games=16), tmp_path / "whole", progress=False)
    stopped = tmp_path / "stopped"
    run_study(study(keep_plies=True, games_per_seat=40, chunk_games=16), stopped, progress=False, stop_after=3)
    assert len(list((stopped / "games").iterdir())) == 3
    chunk = stopped / "games" / "p000-c00001.parquet"
    chunk.write_bytes(chunk.read_bytes()[:100])  # a crash mid-write, without the atomic rename
    (stopped / "games" / ".p000-c00003.parquet.tmp-99").write_bytes(b"PAR1")  # a kill inside write_atomic
    (stopped / "plies" / "p000-c00002.parquet").unlink()
    run_study(study(keep_plies=True, games_per_seat=40, chunk_games=16), stopped, jobs=2, progress=False)
    assert snapshot(stopped) == snapshot(whole)


def test_a_finished_study_runs_again_without_playing(tmp_path, monkeypatch):
    folder = run_study(study(), tmp_path, progress=False)
    before = snapshot(folder)
    monkeypatch.setattr("pipeline.study.run.play_chunk", lambda *args, **kwargs: pytest.fail("played a finished chunk"))
    run_study(study(), folder, progress=False)
    assert snapshot(folder) == before


@pytest.mark.parametrize(
    "spoil, message",
    [
        (lambda f: (f / "games" / "p001-c00000.parquet").unlink(), "p001-c00000.parquet is missing"),
        (lambda f: (f / "games" / "p001-c00000.parquet").write_bytes(b"PAR1"), "p001-c00000.parquet does not match its checksum"),
        (lambda f: (f / "games" / "p009-c00000.parquet").write_bytes(b"PAR1"), "p009-c00000.parquet is not in the manifest"),
        (lambda f: (f / "manifest.json").write_text("{"), "manifest.json is not a readable manifest"),
        (lambda f: (f / "manifest.json").unlink(), "manifest.json not found"),
    ],
)
def test_a_spoilt_study_is_a_one_line_error_naming_the_file(tmp_path, capsys, spoil, message):
    folder = run_study(study(), tmp_path, progress=False)
    spoil(folder)
    with pytest.raises(RecordError, match=re.escape(message)) as error:
        scan_games(folder)
    assert "\n" not in str(error.value)


def test_status_counts_chunks_games_and_pairings(tmp_path, capsys):
    folder = run_study(study(), tmp_path, progress=False, stop_after=10)  # chunks of 38 games, 8 a pairing
    text = status(folder)
    assert f"study smoke in {folder}: 10 of 32 chunks done (INCOMPLETE, 22 chunks missing), 376 of 1,200 games" in text
    rows = [line.split()[2:] for line in text.splitlines()[2:6]]
    assert rows == [["300", "300"], ["76", "300", "6"], ["0", "300", "8"], ["0", "300", "8"]]
    assert text.splitlines()[-1].startswith("run 'modiar study run'")
    assert main(["study", "status", str(folder)]) == 0
    assert capsys.readouterr().out.strip() == text
    assert main(["study", "status", str(tmp_path / "none")]) == 2
    assert "manifest.json not found" in capsys.readouterr().err


def test_status_columns_fit_their_widest_name(tmp_path):
    # At a fixed 24 characters, perfect(temperature=1.0) ran into the next column.
    dial, label = "perfect(temperature=1.0)", "a_variant_label_longer_than_24"
    sweep = study(
        strategies=["random", dial], games_per_seat=10, rules={"stones_per_pit": 2}, variants={label: {"rules": {"ply_cap": 30}}}
    )
    text = status(run_study(sweep, tmp_path, progress=False))
    header, *rows = text.splitlines()[1:]
    assert header.split() == ["variant", "south", "north", "games", "of", "chunks", "missing"]
    cells = [re.split(r" {2,}", row.strip()) for row in rows]
    strategies = ("random", dial)
    assert [row[:3] for row in cells[:4]] == [["default", south, north] for south in strategies for north in strategies]
    assert [row[0] for row in cells] == ["default"] * 4 + [label] * 4 and all(row[3:] == ["10", "10"] for row in cells)
    assert header.index("south") == rows[0].index("random") == len("  ") + len(label) + 2
    assert header.index("north") == header.index("south") + len(dial) + 2


def test_modiar_study_run_writes_the_smoke_study(tmp_path, capsys):
    assert main(["study", "run", str(STUDIES / "smoke.toml"), "--out", str(tmp_path), "--jobs", "1", "--quiet"]) == 0
    assert f"study smoke: 4,000 games in {tmp_path}" in capsys.readouterr().out
    assert len(games(tmp_path)) == 4000


def test_the_dask_backend_plays_the_same_bytes(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    loky = run_study(study(), tmp_path / "loky", progress=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        dask = run_study(study(), tmp_path / "dask", backend="dask", scheduler=cluster.scheduler_address, jobs=2, progress=False)
    assert snapshot(dask) == snapshot(loky)


def test_an_unreachable_scheduler_is_one_line_and_writes_nothing(tmp_path, monkeypatch, capsys):
    pytest.importorskip("dask.distributed")
    monkeypatch.setattr("pipeline.runs.workers.CONNECT_SECONDS", 0.5)
    arguments = ["study", "run", str(STUDIES / "smoke.toml"), "--out", str(tmp_path / "out"), "--quiet"]
    assert main([*arguments, "--backend", "dask", "--scheduler", "tcp://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot reach the dask scheduler 'tcp://127.0.0.1:1'" in err
    assert not (tmp_path / "out").exists()
    assert main([*arguments, "--scheduler", "tcp://127.0.0.1:1"]) == 2
    assert "--scheduler goes with --backend dask" in capsys.readouterr().err


def test_a_bad_config_raises_config_error():
    with pytest.raises(ConfigError, match="missing key 'name'"):
        parse_study({"seed": 1})
