"""Rewrite tests/data/golden_games.json: a few seeded games, as the engine plays them now.

Run it only when the games a seed means are meant to change (and ENGINE_VERSION with them):
    .venv/bin/python tests/make_golden_games.py
"""

from __future__ import annotations

import json
import sys

from locations import DATA, ROOT  # this script's folder, tests/, is on sys.path however it is run

sys.path.insert(0, str(ROOT))  # the checkout's engine and pipeline, not the folders of tests/ named after them

import engine

PAIRINGS = [("random", "random", "modiar"), ("greedy", "random", "modiar"), ("random", "greedy", "modiar-originoff-feedingoff")]


def main() -> None:
    games = []
    for south, north, rules in PAIRINGS:
        for seed in (0, 1, 2, 2**64 - 1):
            record = engine.play_game(south, north, rules=engine.Rules.from_name(rules), seed=seed)
            result = [record.winner, record.score_south, record.score_north]
            games.append(
                {"south": south, "north": north, "rules": rules, "seed": seed, "moves": list(record.moves), "result": result}
            )
    path = DATA / "golden_games.json"
    path.write_text(json.dumps({"engine_version": engine.ENGINE_VERSION, "games": games}, indent=1) + "\n")
    print(f"wrote {len(games)} games to {path}")


if __name__ == "__main__":
    main()
