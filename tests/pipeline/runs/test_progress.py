"""The progress bars of ``modiar study run``: time left from work, games done beside."""

from __future__ import annotations

import itertools
import logging
import re

import pytest

import engine
from engine import ExactProgress, Rules
from engine.exact.outcome import BUILDING, PROPAGATING
from pipeline.exact import progress as exact_progress
from pipeline.exact.progress import ExactBar, ExactLine, Reporter
from pipeline.runs.progress import CachesBar, GamesBar, StepsBar, TasksBar, game_seconds, makespan
from pipeline.study.config import parse_study
from pipeline.study.run import plan


def test_a_game_costs_more_the_stronger_the_search():
    rules = Rules()
    table_strategies = ("greedy", "heuristic", "alphabeta(depth=6)", "perfect(epsilon=0.1)")
    batched = {game_seconds("random", spec, rules) for spec in table_strategies}
    assert len(batched) == 1  # every table strategy plays from its policy table in engine.play_batch
    costs = [
        batched.pop(),
        game_seconds("random", "mcts(playouts=100)", rules),
        game_seconds("mcts(playouts=100)", "mcts(playouts=100)", rules),
        game_seconds("mcts(playouts=100)", "mcts(playouts=400)", rules),
    ]
    assert costs == sorted(costs) and len(set(costs)) == len(costs)
    # mcts's searches are batched against any engine strategy: its opponent's search is a table
    assert game_seconds("alphabeta(depth=6)", "mcts(playouts=100)", rules) == game_seconds("random", "mcts(playouts=100)", rules)
    assert game_seconds("heuristic", "perfect", rules) == game_seconds("perfect", "heuristic", rules)


def test_the_games_bar_moves_by_work_and_counts_games(capsys):
    study = parse_study({"name": "bars", "seed": 1, "games_per_seat": 300, "strategies": ["random", "mcts(playouts=100)"]})
    chunks = plan(study)
    bar = GamesBar(chunks, study.name, progress=True)
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
    assert last.startswith("bars: 100%|██████████| [") and last.rstrip().endswith(f", {games:,} of {games:,} games]")
    assert bar.ticker.thread is not None and not bar.ticker.thread.is_alive()


def test_the_games_bars_time_left_starts_from_the_estimate_and_goes_over_to_the_measured_pace():
    """Work estimated at 400 s on two workers: 200 s left at the start, less the time spent;
    once a tenth of the work is done the measured pace alone (here a tenth in 10 s: 90 s left),
    and between the two a blend (a twentieth in 10 s: the halfway point of 190 and 190 s)."""
    study = parse_study({"name": "bars", "seed": 1, "games_per_seat": 300, "strategies": ["random", "mcts(playouts=100)"]})
    bar = GamesBar(plan(study), study.name, progress=False, jobs=2)
    bar.work_total = 400_000_000  # 400 s of estimated work, in microseconds
    assert bar.seconds_left(now=bar.started) == pytest.approx(200.0)
    assert bar.seconds_left(now=bar.started + 30) == pytest.approx(170.0)
    bar.work_done = 40_000_000  # a tenth done in 10 s
    assert bar.seconds_left(now=bar.started + 10) == pytest.approx(90.0)
    bar.work_done = 20_000_000  # a twentieth done in 10 s: measured 190 s, estimated 190 s
    assert bar.seconds_left(now=bar.started + 10) == pytest.approx(190.0)
    bar.work_done = 20_000_000  # a twentieth in 40 s: measured 760 s, estimated 160 s, half each
    assert bar.seconds_left(now=bar.started + 40) == pytest.approx(460.0)
    bar.close()


def test_a_tasks_bar_says_its_time_left_from_the_plan_then_from_the_pace(capsys):
    """Tasks planned at 100, 100 and 200 s of wall time: 400 s left at the start, less the time
    spent; the 200 s one done in 100 s (half the work, so the measured pace alone): 100 s left."""
    bar = TasksBar("atlas", {"a": 100.0, "b": 100.0, "c": 200.0}, progress=True)
    assert bar.seconds_left(now=bar.started) == pytest.approx(400.0)
    assert bar.seconds_left(now=bar.started + 30) == pytest.approx(370.0)
    assert "about 7 min left" in capsys.readouterr().err  # drawn before any task is done
    bar.done("c", "c (100 s)")
    assert bar.seconds_left(now=bar.started + 100) == pytest.approx(100.0)
    bar.done("a", "a (50 s)")
    bar.done("b", "b (50 s)")
    bar.close()
    last = capsys.readouterr().err.split("\r")[-1]
    assert "100%" in last and "last done: b (50 s)" in last and "left" not in last


def test_the_caches_bar_names_the_rule_sets_in_progress(capsys):
    rule_sets = [Rules(), Rules(stones_per_pit=5), Rules(stones_per_pit=4)]
    bar = CachesBar(rule_sets, jobs=2, progress=True)
    assert bar.bar.postfix == "building modiar, modiar-stones5"
    bar.built("modiar")
    assert bar.bar.postfix == "building modiar-stones5, modiar-stones4"
    bar.close()
    assert re.search(r"1/3 rule sets \[\d\d:\d\d, building modiar-stones5, modiar-stones4\]", capsys.readouterr().err)
    assert bar.ticker.thread is not None and not bar.ticker.thread.is_alive()


def test_the_caches_bar_says_the_time_left_from_the_estimates_at_the_measured_pace():
    """Three rule sets estimated at 60, 30 and 30 s on two workers: 60 s before any is built;
    the first built in 30 s (half its estimate) leaves the other two at that pace, 15 s each
    on two workers, less the time since."""
    rule_sets = [Rules(), Rules(stones_per_pit=5), Rules(stones_per_pit=4)]
    seconds = {"modiar": 60.0, "modiar-stones5": 30.0, "modiar-stones4": 30.0}
    bar = CachesBar(rule_sets, jobs=2, progress=False, seconds=seconds)
    assert bar.seconds_left(now=bar.started) == pytest.approx(60.0)
    assert bar._building() == "building modiar, modiar-stones5; about 60 s left"
    bar.started -= 30.0  # modiar took 30 s
    bar.built("modiar")
    assert bar.seconds_left(now=bar.last) == pytest.approx(15.0, abs=0.1)
    assert bar.seconds_left(now=bar.last + 5) == pytest.approx(10.0, abs=0.1)
    assert bar.seconds_left(now=bar.last + 100) == 0.0
    bar.close()
    assert CachesBar(rule_sets, jobs=2, progress=False).seconds_left() is None  # no estimates, no time left said


def test_a_steps_bar_names_the_step_running_and_the_time_left(capsys, monkeypatch):
    """Steps estimated at 10, 20 and 30 s: 60 s left at the start; the first done in 5 s (half
    its estimate) leaves the other two at that pace, 25 s, less the time spent in the second.
    The bar's clock is the test's, so that a busy machine cannot move its figures."""
    clock = [1000.0]
    monkeypatch.setattr("pipeline.runs.progress.time.time", lambda: clock[0])
    bar = StepsBar("report of default", [("a", 10.0), ("b", 20.0), ("c", 30.0)], progress=True)
    bar.step("a")
    assert bar.seconds_left(now=bar.step_started) == pytest.approx(60.0)
    assert bar.bar.postfix == "a; about 60 s left"
    clock[0] += 5.0  # step a took 5 s
    bar.step("b")
    assert bar.seconds_left(now=bar.step_started) == pytest.approx(25.0, abs=0.1)
    assert bar.seconds_left(now=bar.step_started + 4) == pytest.approx(21.0, abs=0.1)
    bar.close()
    assert re.search(r"report of default: 1/3 steps \[\d\d:\d\d, b; about 2\d s left\]", capsys.readouterr().err)
    assert bar.ticker.thread is not None and not bar.ticker.thread.is_alive()


def test_a_step_past_its_estimate_says_so_rather_than_nearly_done(monkeypatch):
    """A report's step estimated at 60 s still running after 4 min (its estimate was the only
    one: the pace is 1) says how long it has run and that this is past its estimate, then the
    time of the steps after it; a step estimated at 0 (its work cached) that takes a while says
    its time so far, not that it overran."""
    clock = [1000.0]
    monkeypatch.setattr("pipeline.runs.progress.time.time", lambda: clock[0])
    bar = StepsBar("report of default", [("judging", 60.0), ("drawing", 10.0)], progress=True)
    bar.step("judging")
    clock[0] += 59.0
    bar._redraw()
    assert bar.overrun() == 0.0
    assert bar.bar.postfix == "judging; about 11 s left"
    clock[0] += 181.0
    bar._redraw()
    assert bar.overrun() == pytest.approx(180.0)
    assert bar.bar.postfix == "judging; 4 min so far, longer than its estimate, then about 10 s"
    bar.close()
    bar = StepsBar("report of default", [("exploiting", 0.0), ("drawing", 10.0)], progress=True)
    bar.step("exploiting")
    clock[0] += 30.0
    bar._redraw()
    assert bar.bar.postfix == "exploiting; 30 s so far, then about 10 s"
    bar.close()


def test_tasks_take_the_longest_first_over_the_workers():
    """Two dials' self-play qualities of 513 s, random's of 238 s and two of 3 s: on two workers
    the dials run side by side and random follows one of them (751 s, not the 635 s of their sum
    over two); on one, the sum; on more workers than tasks, the longest."""
    seconds = [3.0, 513.0, 238.0, 513.0, 3.0]
    assert makespan(seconds, 2) == pytest.approx(751.0)
    assert makespan(seconds, 1) == pytest.approx(1270.0)
    assert makespan(seconds, 8) == pytest.approx(513.0)
    assert makespan([], 2) == 0.0


def test_quiet_bars_start_no_thread():
    bar = GamesBar([], "quiet", progress=False)
    bar.close()
    assert bar.ticker.thread is None


def test_a_running_pairing_is_named_with_its_ply_and_mass_in_play(capsys):
    """A worker's reports reach the bar through its folder: the bar names the pairing, its ply
    and the mass still in play, and says the time left."""
    bar = ExactBar([("random v random", 45.0), ("greedy v greedy", 1.0)], jobs=1, progress=True)
    reporter = Reporter(bar.folder, "random v random")
    reporter(ExactProgress(1, 400, 1.0, BUILDING))
    bar._read()
    assert "random v random: finding the states from ply 1" in bar.describe()
    reporter.written = 0.0  # a report is written at most every REPORT_EVERY seconds
    reporter(ExactProgress(84, 400, 2.5e-9, PROPAGATING))
    bar._read()
    assert "random v random: ply 84, 2.5e-09 in play" in bar.describe()
    assert re.search(r"about \d+ (s|min) left$", bar.describe())
    reporter.close()
    bar.done("random v random", 30.0)
    assert bar.pace() == pytest.approx(30 / 45)
    assert "random v random" not in bar.describe()
    bar.close()
    assert not bar.folder.exists()  # the reports' folder goes with the bar
    assert "exact outcomes: 1/2 pairings" in capsys.readouterr().err


def test_modiar_exacts_line_names_the_ply_and_mass_and_the_time_left(capsys):
    """``modiar exact`` computes in its own process: its line says where the propagation is and
    the time left, from the estimate until two plies were seen, then from the measured rates."""
    line = ExactLine("exact outcome of random against random", 40.0, progress=True)
    line.running.started -= 10  # ten seconds in, still finding the states
    line(ExactProgress(1, 400, 1.0, BUILDING))
    line._describe()
    assert line.bar.desc == "exact outcome of random against random: finding the states from ply 1; about 30 s left"
    for ply in range(30, 51):  # a decade every 10 plies at 0.1 s a ply: 100 plies, 10 s, to the tolerance
        line.running.take(0.1 * ply, ExactProgress(ply, 400, 10.0 ** (-ply / 10), PROPAGATING))
    line._describe()
    assert line.bar.desc == "exact outcome of random against random: ply 50, 1.0e-05 in play; about 10 s left"
    line.close()
    assert line.ticker.thread is not None and not line.ticker.thread.is_alive()


def test_the_time_left_follows_the_measured_rates():
    """Mass falling a decade every 10 plies at 0.1 s a ply, 1e-5 in play at ply 50: 100 plies
    to the tolerance of 1e-15, 10 s; a pairing not started takes its estimate at the pace of
    those done."""
    running = exact_progress._Running("a", started=0.0, ply=50, cap=400, in_play=1e-5, stage=PROPAGATING)
    running.history = [(0.1 * ply, ply, -ply / 10) for ply in range(30, 51)]
    assert running.seconds_left() == pytest.approx(10.0)
    running.cap = 80  # the cap comes first
    assert running.seconds_left() == pytest.approx(3.0)
    assert exact_progress._Running("b", started=0.0).seconds_left() is None  # no rate before two plies
    bar = ExactBar([("a", 100.0), ("b", 100.0), ("c", 50.0)], jobs=2, progress=False)
    bar.done("a", 50.0)  # this machine takes half the estimates
    assert bar.seconds_left() == pytest.approx((50 + 25) / 2)
    bar.close()


def test_exact_outcome_reports_every_ply(monkeypatch):
    """engine.exact_outcome calls its progress callback before each graph and after every ply,
    the mass in play never growing."""
    seen: list[ExactProgress] = []
    engine.exact_outcome("random", "perfect(epsilon=0.1)", rules=Rules(stones_per_pit=3, ply_cap=60), progress=seen.append)
    assert seen[0] == ExactProgress(1, 60, seen[0].in_play, BUILDING)
    plies = [report.ply for report in seen if report.stage == PROPAGATING]
    assert plies == list(range(2, plies[-1] + 1))
    masses = [report.in_play for report in seen if report.stage == PROPAGATING]
    assert all(later <= earlier * (1 + 1e-12) for earlier, later in itertools.pairwise(masses))


def test_a_progress_that_is_no_function_is_refused_in_one_line():
    said = "progress is a function that takes an engine.ExactProgress, or None; not 'yes'"
    with pytest.raises(TypeError, match=re.escape(said)):
        engine.exact_outcome("random", "random", rules=Rules(stones_per_pit=3, ply_cap=10), progress="yes")


def test_a_message_during_a_bar_has_a_line_of_its_own(capsys):
    # An atlas run says "the run's time (--hours) is up" and its refusals while its bar is drawn;
    # written straight to stderr they ran on after the bar's text, on the bar's line.
    import pipeline.cli

    added = pipeline.cli._log_to_stderr()
    try:
        bar = TasksBar("atlas", {"a": 100.0, "b": 100.0}, progress=True)
        bar.done("a", "a (100 s)")
        logging.getLogger("pipeline.atlas.run").warning("the run's time (--hours) is up with 1 rule set left")
        bar.close()
    finally:
        for logger in added:
            logger.handlers.clear()
            logger.setLevel(logging.NOTSET)
    lines = capsys.readouterr().err.replace("\r", "\n").splitlines()
    assert "modiar: the run's time (--hours) is up with 1 rule set left" in lines
    assert any(line.startswith("atlas:") and "last done: a (100 s)" in line for line in lines)  # the bar goes on
