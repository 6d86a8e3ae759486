"""The progress bars of ``modiar study run``: time left from work, games done beside."""

from __future__ import annotations

import re

from engine import Rules
from pipeline.progress import CachesBar, GamesBar, game_seconds
from pipeline.runner import plan
from pipeline.study import parse_study


def test_a_game_costs_more_the_stronger_the_search():
    rules = Rules()
    table_strategies = ("greedy", "heuristic", "alphabeta(depth=6)", "perfect(epsilon=0.1)")
    batched = {game_seconds("random", spec, rules) for spec in table_strategies}
    assert len(batched) == 1  # every table strategy plays from its policy table in engine.play_batch
    costs = [
        batched.pop(),
        game_seconds("random", "mcts(playouts=100)", rules),
        game_seconds("alphabeta(depth=6)", "mcts(playouts=100)", rules),  # the scalar alphabeta beside mcts
        game_seconds("mcts(playouts=100)", "mcts(playouts=400)", rules),
    ]
    assert costs == sorted(costs) and len(set(costs)) == len(costs)
    assert game_seconds("heuristic", "perfect", rules) == game_seconds("perfect", "heuristic", rules)


def test_the_games_bar_moves_by_work_and_counts_games(capsys):
    study = parse_study({"name": "bars", "seed": 1, "games_per_seat": 300, "strategies": ["random", "mcts(playouts=100)"]})
    chunks = plan(study)
    bar = GamesBar(chunks, study.name, disable=False)
    fast = [chunk for chunk in chunks if chunk.pairing.south == chunk.pairing.north == "random"]
    for chunk in fast:
        bar.done(chunk.name, len(chunk))
    assert bar.bar.n < 0.01 * bar.bar.total  # all random-vs-random games: a sliver of the work
    for chunk in chunks:
        if chunk not in fast:
            bar.done(chunk.name, len(chunk))
    bar.close()
    games = sum(map(len, chunks))
    assert bar.bar.n == bar.bar.total
    last = capsys.readouterr().err.split("\r")[-1]
    assert last.startswith("bars: 100%|██████████| [") and last.rstrip().endswith(f"<00:00, {games:,} of {games:,} games]")
    assert bar.ticker.thread is not None and not bar.ticker.thread.is_alive()


def test_the_caches_bar_names_the_rule_sets_in_progress(capsys):
    rule_sets = [Rules(), Rules(stones_per_pit=5), Rules(stones_per_pit=4)]
    bar = CachesBar(rule_sets, jobs=2, disable=False)
    assert bar.bar.postfix == "building modiar, modiar-stones5"
    bar.built("modiar")
    assert bar.bar.postfix == "building modiar-stones5, modiar-stones4"
    bar.close()
    assert re.search(r"1/3 rule sets \[\d\d:\d\d, building modiar-stones5, modiar-stones4\]", capsys.readouterr().err)
    assert bar.ticker.thread is not None and not bar.ticker.thread.is_alive()


def test_quiet_bars_start_no_thread():
    bar = GamesBar([], "quiet", disable=True)
    bar.close()
    assert bar.ticker.thread is None
