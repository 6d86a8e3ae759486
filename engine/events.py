"""The rule events of RULES.md and their packed form.

Each event is counted per game. Events that carry more than a count (a capture's
stones, pits and rows; the stones of a forfeited first capture) have extra counters
named after the event. The engine adds a whole turn's events as one int: counter i
lives in bits 16*i .. 16*i+15, so a game's counts are a running sum of ints, and a
field never overflows because a rule set caps a game at 10,000 plies.
"""

from __future__ import annotations

import sys
from array import array

TURN_EVENTS = (
    "feeding_active",  # a turn starts with the opponent's row empty (counted whatever the feeding rule)
    "feeding_forced",  # feeding removed a move that was legal after the grand-slam ban
    "feeding_lapsed",  # feeding was active, no remaining move could feed, a move was played
    "grand_slam_blocked",  # a playable pit was made illegal as a grand slam
    "first_move_forfeit",  # the first move's capture was forfeited
    "first_move_forfeit_stones",  # ... and this many stones stayed on the board
    "capture",  # a capture happened
    "capture_stones",  # stones captured
    "capture_pits",  # pits in the capture chains
    "capture_own_row_stones",  # stones the mover took from its own row
    "capture_opponent_row_stones",  # stones the mover took from the opponent's row
)
END_EVENTS = (
    "singleton_end",  # end: the mover's row holds stones, none in a playable pit
    "grand_slam_end",  # end: the mover has playable pits, every one a grand slam
    "empty_row_end",  # end: the mover's row is empty
)
EVENTS = TURN_EVENTS + END_EVENTS

FIELD_BITS = 16
FIELD_MASK = (1 << FIELD_BITS) - 1
SHIFT = {name: FIELD_BITS * index for index, name in enumerate(EVENTS)}
_BYTES = FIELD_BITS // 8 * len(EVENTS)
_BIG_ENDIAN = sys.byteorder == "big"


def unpack_events(packed: int) -> dict[str, int]:
    # One C call splits the int into its 16-bit counters.
    counters = array("H", packed.to_bytes(_BYTES, "little"))
    if _BIG_ENDIAN:
        counters.byteswap()
    return dict(zip(EVENTS, counters))  # noqa: B905 (counters has one entry per event)


def field(packed: int, name: str) -> int:
    return (packed >> SHIFT[name]) & FIELD_MASK
