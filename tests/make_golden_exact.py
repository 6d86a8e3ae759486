"""Write tests/data/golden_exact.json: the exact outcome (engine.exact_outcome) of every pairing
of the default study's table strategies under RULES.md, as the engine gives them now, so that
faster exact machinery can be checked against today's values to 1e-12 (tests/engine/exact/test_golden_outcomes.py).

The values are read from the cache folder where a study or a ladder left them, else computed
(the strong dials' pairings take minutes each the first time):
    MODIAR_CACHE=... .venv/bin/python tests/make_golden_exact.py

Run it only when the values are meant to change (and ENGINE_VERSION with them).
"""

from __future__ import annotations

import json
import sys

from locations import DATA, ROOT  # this script's folder, tests/, is on sys.path however it is run

sys.path.insert(0, str(ROOT))  # the checkout's engine and pipeline, not the folders of tests/ named after them

import engine
from pipeline.exact.cache import cached_exact_outcome
from pipeline.runs.paths import cache_folder

# The table strategies of pipeline/studies/default.toml, in its order (mcts has no exact outcome).
STRATEGIES = (
    "random",
    "greedy",
    "heuristic",
    "alphabeta(depth=4)",
    "perfect(temperature=1.0)",
    "perfect(epsilon=0.1)",
    "perfect",
)
SCALARS = ("south_win", "draw", "north_win", "first_player_score", "mean_plies", "unresolved")
PATH = DATA / "golden_exact.json"


def outcome_values(outcome: engine.ExactOutcome) -> dict[str, object]:
    """An exact outcome's numbers as JSON: its scalars, its event figures and its margin law."""
    values: dict[str, object] = {name: getattr(outcome, name) for name in SCALARS}
    values["event_fires"] = dict(outcome.event_fires)
    values["event_mean"] = dict(outcome.event_mean)
    values["margin"] = [[margin, probability] for margin, probability in sorted(outcome.margin.items())]
    return values


def main() -> None:
    engine.set_cache_folder(cache_folder())
    rules = engine.Rules()
    pairings = []
    for south in STRATEGIES:
        for north in STRATEGIES:
            print(f"{south} v {north}", file=sys.stderr, flush=True)
            outcome = cached_exact_outcome(south, north, rules)
            pairings.append({"south": south, "north": north, **outcome_values(outcome)})
    document = {"engine_version": engine.ENGINE_VERSION, "rules": rules.name, "pairings": pairings}
    PATH.write_text(json.dumps(document, indent=1) + "\n")
    print(f"wrote {len(pairings)} exact outcomes to {PATH}")


if __name__ == "__main__":
    main()
