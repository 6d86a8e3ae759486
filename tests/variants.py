"""Rule sets the tests play: every variant field of RULES.md switched alone, and an Oware-like mix."""

from __future__ import annotations

from engine import Rules

EVERY_FIELD_ALONE = [
    Rules(stones_per_pit=4),
    Rules(stones_per_pit=10),
    Rules(min_stones_to_play=1, ply_cap=120),  # singletons playable: games seldom end, so a short cap
    Rules(min_stones_to_play=3),
    Rules(sow_origin=False),
    Rules(capture_counts=(2, 3)),
    Rules(capture_counts=(1, 2, 4, 6)),
    Rules(capture_rows="opponent"),
    Rules(capture_rows="own"),
    Rules(first_move_forfeit=False),
    Rules(feeding=False),
    Rules(grand_slam="allowed"),
    Rules(grand_slam="no_capture"),
    Rules(ply_cap=25),
]

OWARE_LIKE = Rules(
    stones_per_pit=4, min_stones_to_play=1, sow_origin=False, capture_counts=(2, 3), capture_rows="opponent", ply_cap=150
)

# The same fields switched alone on a small board, where every strategy (the solver's perfect
# included) is cheap: the rule sets of the contract every strategy meets (tests/engine/players/test_strategy_contract.py).
SMALL_VARIANTS = [
    Rules(stones_per_pit=3),
    Rules(stones_per_pit=4),
    *[rules.replace(stones_per_pit=3) for rules in EVERY_FIELD_ALONE if rules.stones_per_pit == 7],
    OWARE_LIKE.replace(stones_per_pit=2),
]
