"""Compute perft from the start with the engine and with the reference, and store it.

    .venv/bin/python tests/make_perft_data.py            # writes tests/data/perft.json

perft(d) is the number of legal move sequences of exactly d moves from the start
(games that end sooner are not counted). For each rule set below, the engine
(engine.perft_counts, all depths in one pass) and the plain reference (tests/reference.py, all
depths in one level-by-level pass) count every depth from 0 to the rule set's depth; the
script stops with an error if they differ anywhere, and otherwise writes the counts to
tests/data/perft.json, where tests/engine/game/test_perft.py reads them. The default rules to depth
22 take about ten minutes on two cores (the reference is the slow side).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from locations import DATA, ROOT  # this script's folder, tests/, is on sys.path however it is run

sys.path.insert(0, str(ROOT))  # the checkout's engine, not the folder of tests/ named after it

import reference

import engine
from engine import Rules

OUTPUT = DATA / "perft.json"

# rule set -> deepest depth. The small boards are cheap, so they go deep; stones_per_pit=3
# runs out of moves after 7 plies, and its zeros show that every game has ended.
RULE_SETS = [
    (Rules(), 22),
    (Rules(stones_per_pit=3), 12),
    (Rules(stones_per_pit=4), 50),
    (Rules(stones_per_pit=5), 30),
    (Rules(sow_origin=False), 20),
]


def engine_counts(rules: Rules, depth: int) -> tuple[list[int], float]:
    started = time.perf_counter()
    counts = engine.perft_counts(depth, rules)
    return counts, time.perf_counter() - started


def reference_counts(rules: Rules, depth: int) -> tuple[list[int], float]:
    started = time.perf_counter()
    counts = reference.perft_counts(depth, rules)
    return counts, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=OUTPUT)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--max-depth", type=int, default=None, help="cap every rule set's depth (for a quick run)")
    arguments = parser.parse_args()

    jobs = [(rules, depth if arguments.max_depth is None else min(depth, arguments.max_depth)) for rules, depth in RULE_SETS]
    with ProcessPoolExecutor(arguments.workers) as pool:
        # The reference of the default rules is the longest job: submit it first.
        from_reference = {rules.name: pool.submit(reference_counts, rules, depth) for rules, depth in jobs}
        from_engine = {rules.name: pool.submit(engine_counts, rules, depth) for rules, depth in jobs}
        perft = {}
        for rules, depth in jobs:
            by_engine, engine_seconds = from_engine[rules.name].result()
            by_reference, reference_seconds = from_reference[rules.name].result()
            if by_engine != by_reference:
                first = next(d for d in range(depth + 1) if by_engine[d] != by_reference[d])
                raise SystemExit(
                    f"{rules.name}: perft({first}) is {by_engine[first]} by the engine but {by_reference[first]} by the reference"
                )
            print(
                f"{rules.name}: depth {depth}, perft = {by_engine[depth]} "
                f"(engine {engine_seconds:.1f} s, reference {reference_seconds:.1f} s)",
                flush=True,
            )
            perft[rules.name] = by_engine

    arguments.out.parent.mkdir(parents=True, exist_ok=True)
    arguments.out.write_text(as_json(perft))
    print(f"wrote {arguments.out}")


NOTE = (
    "perft[name][d] is the number of legal move sequences of exactly d moves from the start, for d = 0, 1, 2, ...; "
    "name is engine.Rules(...).name. Made by tests/make_perft_data.py, which counted every depth with both "
    "engine.perft and the independent plain reference tests/reference.py and found them equal."
)


def as_json(perft: dict[str, list[int]]) -> str:
    """The data file, one rule set per line so that a diff shows which counts changed."""
    rows = ",\n".join(f"  {json.dumps(name)}: {json.dumps(counts)}" for name, counts in perft.items())
    return f'{{\n "note": {json.dumps(NOTE)},\n "perft": {{\n{rows}\n }}\n}}\n'


if __name__ == "__main__":
    main()
