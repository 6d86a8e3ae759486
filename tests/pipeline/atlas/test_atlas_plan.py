"""Which worker takes which rule set of an atlas run (pipeline.atlas.plan): what a rule set
should cost from the rows kept alike, how many workers share the machine for it, in what order,
and which no worker holds. Plain data in, plain data out: no rule set is analysed here."""

from __future__ import annotations

from pathlib import Path

import pytest

import engine
from engine.tables import positions_of
from pipeline.atlas import run as atlas_run
from pipeline.atlas.analyse import estimated_bytes
from pipeline.atlas.plan import (
    KILLS_REFUSED,
    PEAK_MARGIN,
    completion_bytes,
    completion_seconds,
    expected_bytes,
    expected_seconds,
    plan,
    run_order,
    task_seconds,
)
from pipeline.atlas.rows import Cost
from pipeline.runs.costs import COSTS

GB = 2**30
# The kinds met on this project's machine (23.5 GB, 2026-12-04), as kept rows record them: RULES.md's
# rules (3.7 GB), and singletons with sowing past the origin, whose resident peak of 19.5 GB
# counted the solver's log, which the system can write out.
ORDINARY = "modiar-feedingoff"
LARGE = "modiar-min1-originoff-rowsopponent"
KEPT = {"modiar": Cost(450.0, round(3.7 * GB), unshared=True), LARGE: Cost(1657.0, 20_973_424_640)}
MACHINE = {2: 25_276_071_936 // 2, 1: 25_276_071_936}  # --jobs 2


FOLDER = Path("atlas")  # the atlas's folder, whose STARTED marks a refusal names


def mark(name: str) -> Path:
    return FOLDER / "rows" / f"{name}.started"


def rule_sets(*names: str) -> list[engine.Rules]:
    return [engine.Rules.from_name(name) for name in names]


def test_a_run_takes_the_kind_of_a_killed_rule_set_after_the_others() -> None:
    """2026-12-04: modiar-originoff-rowsown-slamallowed outgrew a worker of `--jobs 2` (12.6 GB)
    as its kind, sowing past the origin with captures in the own row, had outgrown one of 25 GB:
    rule sets alike in the fields that set a game's length wait for the others, the killed last."""
    names = [
        "modiar-originoff-rowsown",
        "modiar-feedingoff",
        "modiar-originoff-rowsown-slamallowed",
        "modiar-min1",
        "modiar-stones3",
    ]
    killed = {"modiar-originoff-rowsown": (1, 25 << 30)}
    order = [rules.name for rules in run_order([engine.Rules.from_name(name) for name in names], killed)]
    assert order == [
        "modiar-feedingoff",
        "modiar-min1",
        "modiar-stones3",
        "modiar-originoff-rowsown-slamallowed",
        "modiar-originoff-rowsown",
    ]
    assert [rules.name for rules in run_order([engine.Rules.from_name(name) for name in names], {})][-1] == "modiar-stones3"


def test_a_rule_sets_expected_memory_is_the_most_a_kept_row_alike_held() -> None:
    """modiar-originoff-rowsown passed 13 GB where the size of its index said 4.4, and the run
    was killed by the system: the kept rows of its kind now say what it needs, so that it is
    refused up front where a worker has less."""
    rules = engine.Rules(sow_origin=False, capture_rows="own")
    size_only = estimated_bytes(rules)
    assert expected_bytes(rules, {}) == size_only
    peak = 13 * 2**30
    kept = {
        "modiar-originoff-rowsown-feedingoff": Cost(900.0, peak),
        "modiar-originoff-rowsown-slamallowed": Cost(900.0, peak // 2),
        "modiar-originoff": Cost(300.0, 2 * peak),  # not alike: another capture rule
        "modiar-originoff-rowsown-forfeitoff": Cost(900.0, None),  # a record without it
    }
    assert expected_bytes(rules, kept) == round(PEAK_MARGIN * peak)
    small = {"modiar-originoff-rowsown-feedingoff": Cost(900.0, 2**20)}
    assert expected_bytes(rules, small) == size_only  # never below the size's estimate


def test_a_kinds_unshared_peak_is_taken_over_older_resident_ones() -> None:
    """2026-12-04: rows kept before the solver's log went to files record its pages in their peak
    (21 GB for modiar-min1-originoff-rowsopponent); a row measured since counts only the memory
    the system cannot take back, which is what decides whether two workers fit."""
    rules = engine.Rules.from_name("modiar-min1-originoff-rowsopponent-feedingoff")
    old = {LARGE: Cost(1657.0, 21 * GB)}
    assert expected_bytes(rules, old) == round(PEAK_MARGIN * 21 * GB)
    new = old | {"modiar-min1-originoff-rowsopponent-slamallowed": Cost(1200.0, 8 * GB, unshared=True)}
    assert expected_bytes(rules, new) == round(PEAK_MARGIN * 8 * GB)


def test_a_rule_set_too_large_for_a_worker_of_the_many_runs_after_the_others_with_fewer() -> None:
    """2026-12-04: `modiar atlas run --jobs 2` refused 19 rule sets that one worker holds, and
    the grid waited for a second run with --jobs 1 by hand; the run now takes them itself."""
    missing = rule_sets(LARGE + "-feedingoff", ORDINARY, "modiar-slamallowed")
    planned = plan(missing, MACHINE, KEPT, {}, FOLDER)
    assert [(phase.workers, phase.room, [rules.name for rules in phase.rule_sets]) for phase in planned.phases] == [
        (2, MACHINE[2], [ORDINARY, "modiar-slamallowed"]),
        (1, MACHINE[1], [LARGE + "-feedingoff"]),
    ]
    assert planned.refused == {}


def test_a_rule_set_no_worker_here_holds_is_refused_in_one_line() -> None:
    stones10 = engine.Rules.from_name("modiar-stones10")
    planned = plan([stones10, *rule_sets(ORDINARY)], MACHINE, KEPT, {}, FOLDER)
    assert [phase.workers for phase in planned.phases] == [2]
    message = planned.refused[stones10.name]
    assert "90,858,768 positions" in message and "a worker has at most 23.5 GB here" in message and "\n" not in message
    assert f"{estimated_bytes(stones10) / GB:.1f} GB" in message


def test_a_rule_set_killed_twice_goes_to_a_worker_with_more_room_than_the_last() -> None:
    """One kill may be the user's kill -9: the rule set is tried again where it was, last. After
    KILLS_REFUSED in a row it needs a worker with more room than the last run's, or is refused,
    naming its STARTED mark (deleting it tries again)."""
    missing = rule_sets(ORDINARY, "modiar-slamallowed")
    once = plan(missing, MACHINE, KEPT, {ORDINARY: (1, MACHINE[2])}, FOLDER)
    assert [rules.name for rules in once.phases[0].rule_sets] == ["modiar-slamallowed", ORDINARY]
    twice = plan(missing, MACHINE, KEPT, {ORDINARY: (KILLS_REFUSED, MACHINE[2])}, FOLDER)
    assert [(phase.workers, [rules.name for rules in phase.rule_sets]) for phase in twice.phases] == [
        (2, ["modiar-slamallowed"]),
        (1, [ORDINARY]),
    ]
    alone = plan(missing, MACHINE, KEPT, {ORDINARY: (KILLS_REFUSED, MACHINE[1])}, FOLDER)
    message = alone.refused[ORDINARY]
    assert "killed before it ended in the last 2 runs" in message and str(mark(ORDINARY)) in message


def test_a_cluster_whose_workers_cannot_change_refuses_what_they_do_not_hold() -> None:
    """On dask a run cannot give a task more of a worker's memory: one phase, with the cluster's room."""
    planned = plan(rule_sets(LARGE + "-feedingoff", ORDINARY), {4: MACHINE[2]}, KEPT, {}, FOLDER)
    assert [(phase.workers, len(phase.rule_sets)) for phase in planned.phases] == [(4, 1)]
    assert list(planned.refused) == [LARGE + "-feedingoff"]


def test_the_runs_bar_says_the_plans_wall_time_left_before_any_rule_set_is_done(capsys) -> None:
    """An ordinary rule set shares the machine with another worker, a large one has it alone: the
    bar plans the first at half its expected seconds, the second at all of them, and says the
    sum as the time left from its first draw (it said "?" until a rule set of hours was done)."""
    ordinary, large = rule_sets(ORDINARY, LARGE)
    planned = plan([ordinary, large], MACHINE, KEPT, {}, FOLDER)
    assert [phase.workers for phase in planned.phases] == [2, 1]
    bar = atlas_run._bar("atlas", planned, KEPT, {}, progress=True)
    seconds = expected_seconds(ordinary, KEPT) / 2 + expected_seconds(large, KEPT)
    assert bar.seconds_left(now=bar.started) == pytest.approx(seconds, abs=1)
    bar.close()
    assert f"about {round(seconds / 60)} min left" in capsys.readouterr().err


def test_a_run_takes_the_longest_first_by_what_the_kept_rows_alike_took() -> None:
    """Rule sets of 7 stones a pit are all one size, but sowing past the origin with captures in
    the mover's row took 1,197 s where RULES.md's rules took 450: taken first, it does not leave
    one worker alone at the end of a run."""
    kept = {"modiar": Cost(450.0, 0), "modiar-originoff-rowsown": Cost(1197.0, 0)}
    todo = rule_sets("modiar-feedingoff", "modiar-originoff-rowsown-feedingoff", "modiar-stones3")
    order = [rules.name for rules in run_order(todo, {}, kept)]
    assert order == ["modiar-originoff-rowsown-feedingoff", "modiar-feedingoff", "modiar-stones3"]


def test_a_kept_row_to_complete_is_planned_at_what_completing_it_costs(capsys) -> None:
    """Completing a row kept without the verdict columns builds its tables and the start's verdict,
    not its whole analysis: the large rule set, which needs a worker alone to be analysed, is
    completed beside another, and the bar plans it at its tables' seconds and the verdict's rate."""
    ordinary, large = rule_sets(ORDINARY, LARGE)
    incomplete = {large.name: {"seconds": {"tables": 16.0, "solve": 300.0, "total": 1657.0}}}
    planned = plan([ordinary, large], MACHINE, KEPT, {}, FOLDER, incomplete)
    assert [phase.workers for phase in planned.phases] == [2]
    assert completion_bytes(large) < MACHINE[2] < expected_bytes(large, KEPT)
    completing = completion_seconds(large, incomplete[large.name])
    assert task_seconds(large, KEPT, incomplete) == completing < expected_seconds(large, KEPT)
    assert completing == pytest.approx(16.0 + COSTS.verdict_seconds_per_position * positions_of(large))
    bar = atlas_run._bar("atlas", planned, KEPT, incomplete, progress=True)
    assert bar.seconds_left(now=bar.started) == pytest.approx((expected_seconds(ordinary, KEPT) + completing) / 2, abs=1)
    bar.close()
    assert "1 rule set to analyse, 1 rule set to complete" in capsys.readouterr().err
