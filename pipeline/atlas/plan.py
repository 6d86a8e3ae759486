"""Which worker takes which rule set of an atlas run: what each should cost, how many workers
can share the machine for it, in what order, and which no worker here can take.

What a rule set costs is learnt from the rows already kept (pipeline.atlas.rows.kept_costs):
rule sets alike in the fields that set how long games run (LENGTH_FIELDS) cost alike, from
minutes to twenty and from 2 to 9 GB at 7 stones a pit. A run with ``--jobs N`` analyses, with
N workers, the rule sets a worker holding 1/N of the machine can take, then the rest with as
many workers as their memory allows (one batch at a time, planned again after each, since the
rows just measured may let the rest share the machine), and refuses, in one line each, those
that even a worker alone would not hold.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import engine
from engine.tables import positions_of
from pipeline.atlas.analyse import estimated_bytes
from pipeline.atlas.rows import STARTED, Cost, row_path
from pipeline.runs.costs import COSTS

KILLS_REFUSED = 2  # runs killed in a row on a rule set after which a worker with no more memory refuses it
# The fields whose values decide how long games run, and so what a rule set costs: singletons,
# captures in one row only and sowing past the origin make games that cycle to the cap, which
# the exact outcomes follow ply by ply (3 to 8 times RULES.md's cost at 7 stones a pit).
LENGTH_FIELDS = ("stones_per_pit", "sow_origin", "capture_rows", "min_stones_to_play")
# The margin above the most memory a kept rule set alike held, for one not yet analysed
# (expected_bytes): measured peaks of the same kind differ by up to 10 % (3.1 to 3.3 GB, 6.5 to 6.9).
PEAK_MARGIN = 1.15


@dataclass(frozen=True)
class Phase:
    """Rule sets analysed by ``workers`` workers at once, each holding ``room`` bytes, in order."""

    workers: int
    room: int
    rule_sets: tuple[engine.Rules, ...]


@dataclass(frozen=True)
class Plan:
    """The phases of a run, the most workers first, and the rule sets refused (name -> one-line reason)."""

    phases: tuple[Phase, ...]
    refused: dict[str, str]


def plan(
    missing: list[engine.Rules],
    rooms: dict[int, int],
    kept: dict[str, Cost],
    killed: dict[str, tuple[int, int]],
    directory: Path,
    incomplete: dict[str, dict[str, Any] | None] | None = None,
) -> Plan:
    """How a run analyses ``missing``: each rule set with the most workers (``rooms``: workers ->
    the memory each has; loky's 1 to --jobs sharing the machine, a dask cluster's only its own)
    of which a worker holds its task_bytes and has more room than the last run that was
    killed on it KILLS_REFUSED times in a row (``killed``: rows.killed_marks of the atlas's
    ``directory``, whose STARTED mark a refusal names). The others are refused. The rule sets
    of ``incomplete`` (name -> its kept row's costs) are completed, not analysed: their tasks
    cost what completion_seconds and completion_bytes say."""
    incomplete = incomplete or {}
    phases: dict[int, list[engine.Rules]] = {workers: [] for workers in sorted(rooms, reverse=True)}
    refused = {}
    for rules in missing:
        needs = task_bytes(rules, kept, incomplete)
        fitting = [workers for workers in phases if _fits(needs, rooms[workers], killed.get(rules.name))]
        if fitting:
            phases[fitting[0]].append(rules)
        else:
            mark = row_path(directory, rules.name, STARTED)
            refused[rules.name] = _refusal(rules, needs, max(rooms.values()), killed.get(rules.name), mark)
    return Plan(
        tuple(
            Phase(workers, rooms[workers], tuple(run_order(todo, killed, kept, incomplete)))
            for workers, todo in phases.items()
            if todo
        ),
        refused,
    )


def run_order(
    todo: list[engine.Rules],
    killed: dict[str, tuple[int, int]],
    kept: dict[str, Cost] | None = None,
    incomplete: dict[str, dict[str, Any] | None] | None = None,
) -> list[engine.Rules]:
    """The order a run takes ``todo`` in: the longest first by task_seconds from ``kept``
    (so the workers end together; by size where none alike is kept), but after them the rule
    sets alike (LENGTH_FIELDS, which hold alike) to one whose last run was killed on it
    (``killed``: killed_marks), and the killed ones last."""
    kinds = {_length_key(engine.Rules.from_name(name)) for name in killed}
    seconds = {rules.name: task_seconds(rules, kept or {}, incomplete or {}) for rules in todo}
    return sorted(
        todo, key=lambda rules: (rules.name in killed, _length_key(rules) in kinds, -seconds[rules.name], -positions_of(rules))
    )


def expected_seconds(rules: engine.Rules, kept: dict[str, Cost]) -> float:
    """What analysing ``rules`` should take: the median of the seconds ``kept`` (rule set name ->
    Cost, kept_costs) records for the rule sets alike in every LENGTH_FIELDS field, else the
    cost file's rate a position (COSTS.atlas_seconds_per_position: for the estimates only)."""
    alike = [cost.seconds for cost in _alike(rules, kept)]
    if alike:
        return statistics.median(alike)
    return max(1.0, COSTS.atlas_seconds_per_position * positions_of(rules))


def task_seconds(rules: engine.Rules, kept: dict[str, Cost], incomplete: dict[str, dict[str, Any] | None]) -> float:
    """completion_seconds for a rule set of ``incomplete`` (name -> its kept row's costs), else expected_seconds."""
    if rules.name in incomplete:
        return completion_seconds(rules, incomplete[rules.name])
    return expected_seconds(rules, kept)


def completion_seconds(rules: engine.Rules, costs: dict[str, Any] | None) -> float:
    """What completing a row of ``rules`` kept without the verdict columns should take
    (pipeline.atlas.analyse.supplement): its record's ``costs`` building the tables, again, and
    the verdict at pipeline/costs.toml's rate a position."""
    seconds = costs.get("seconds") if isinstance(costs, dict) else None
    built = seconds.get("tables") if isinstance(seconds, dict) else None
    built = float(built) if isinstance(built, int | float) and not isinstance(built, bool) else 0.0
    return max(1.0, built + COSTS.verdict_seconds_per_position * positions_of(rules))


def task_bytes(rules: engine.Rules, kept: dict[str, Cost], incomplete: dict[str, dict[str, Any] | None]) -> int:
    """completion_bytes for a rule set of ``incomplete``, else expected_bytes."""
    return completion_bytes(rules) if rules.name in incomplete else expected_bytes(rules, kept)


def completion_bytes(rules: engine.Rules) -> int:
    """The memory completing a kept row of ``rules`` should need (pipeline.atlas.analyse.supplement):
    its tables and the start's verdict, at pipeline/costs.toml's size a position."""
    return COSTS.base_bytes + COSTS.verdict_bytes_per_position * positions_of(rules)


def expected_bytes(rules: engine.Rules, kept: dict[str, Cost]) -> int:
    """The memory analysing ``rules`` should need: pipeline.atlas.analyse.estimated_bytes (a
    size a position), or PEAK_MARGIN times the most that a kept rule set alike in every
    LENGTH_FIELDS field held, if more (games that cycle hold more: 13 GB where the size said 4.4).
    Peaks of the memory the system cannot take back (Cost.unshared) are taken where one alike
    has them: older records' resident peaks count the solver's log, which it can."""
    measured = [cost for cost in _alike(rules, kept) if cost.peak_bytes]
    peaks = [cost.peak_bytes for cost in measured if cost.unshared] or [cost.peak_bytes for cost in measured]
    return max([estimated_bytes(rules), *(round(PEAK_MARGIN * peak) for peak in peaks if peak)])


def _fits(needs: int, room: int, killed: tuple[int, int] | None) -> bool:
    if killed is not None and killed[0] >= KILLS_REFUSED and room <= killed[1]:
        return False
    return needs <= room


def _refusal(rules: engine.Rules, needs: int, room: int, killed: tuple[int, int] | None, mark: Path) -> str:
    here = f"a worker has at most {room / 2**30:.1f} GB here"
    if killed is not None and killed[0] >= KILLS_REFUSED and room <= killed[1]:
        return (
            f"refused {rules.name}: its analysis was killed before it ended in the last {killed[0]} runs (most likely "
            f"for lack of memory), the last with {killed[1] / 2**30:.1f} GB a worker, and {here}; "
            f"run it on a larger machine, or delete {mark} to try again"
        )
    return (
        f"refused {rules.name}: its analysis needs about {needs / 2**30:.1f} GB "
        f"({positions_of(rules):,} positions) and {here}; run it on a larger machine"
    )


def _alike(rules: engine.Rules, kept: dict[str, Cost]) -> list[Cost]:
    return [cost for name, cost in kept.items() if _length_key(engine.Rules.from_name(name)) == _length_key(rules)]


def _length_key(rules: engine.Rules) -> tuple[Any, ...]:
    return tuple(getattr(rules, name) for name in LENGTH_FIELDS)
