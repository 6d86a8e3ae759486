"""engine.exact.game_fingerprint: two rule sets get the same fingerprint exactly when they play
the same game from the start, as the plain reference implementation of RULES.md
(tests/reference.py) plays it, every reachable position with its moves, captures and events."""

from __future__ import annotations

import itertools
from collections import defaultdict

import reference

import engine
from engine.exact import game_fingerprint
from engine.tables import load_tables, table_rules

GRID = {
    "feeding": [True, False],
    "grand_slam": ["prohibited", "allowed", "no_capture"],
    "first_move_forfeit": [True, False],
    "sow_origin": [True, False],
    "capture_rows": ["either", "opponent", "own"],
    "min_stones_to_play": [2, 1],
}


def reference_game(rules: engine.Rules) -> frozenset[tuple[object, ...]]:
    """Every state reachable from the start (board, mover, whether it is the first move) with what
    each legal move does, or how play ends there, by the reference implementation."""
    start = (tuple(reference.start_board(rules)), 0, True)
    seen, frontier, game = {start}, [start], set()
    while frontier:
        board, mover, first = state = frontier.pop()
        ply = 0 if first else 1
        results = reference.move_results(list(board), mover, ply, rules)
        if not results:
            game.add((state, "end", reference.end_event(list(board), mover, ply, rules)))
        for pit, result in sorted(results.items()):
            events = tuple(sorted(result.events.items()))
            game.add((state, pit, tuple(result.board), result.captured, tuple(sorted(result.captured_pits)), events))
            child = (tuple(result.board), 1 - mover, False)
            if child not in seen:
                seen.add(child)
                frontier.append(child)
    return frozenset(game)


def test_rule_sets_share_a_fingerprint_exactly_when_the_reference_plays_them_as_one_game():
    """The whole atlas grid at 2 stones a pit: 144 rule sets, grouped by fingerprint and by the
    reference's game, must fall into the same groups (and some groups hold several)."""
    by_fingerprint: dict[str, set[str]] = defaultdict(set)
    by_reference: dict[frozenset[tuple[object, ...]], set[str]] = defaultdict(set)
    for values in itertools.product(*GRID.values()):
        rules = engine.Rules(stones_per_pit=2, **dict(zip(GRID, values, strict=True)))
        tables = load_tables(table_rules(rules), None, progress=False)
        by_fingerprint[game_fingerprint(rules, tables)].add(rules.name)
        by_reference[reference_game(rules)].add(rules.name)
    groups = sorted(map(sorted, by_fingerprint.values()))
    assert groups == sorted(map(sorted, by_reference.values()))
    assert 1 < len(groups) < 144


def test_the_cap_is_part_of_the_game():
    rules = engine.Rules(stones_per_pit=3)
    tables = load_tables(table_rules(rules), None, progress=False)
    assert game_fingerprint(rules, tables) != game_fingerprint(rules.replace(ply_cap=399), tables)
