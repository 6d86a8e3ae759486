"""The rule events of RULES.md: the one list of their names, and their packed form.

Each event is counted per game. Events that carry more than a count (a capture's
stones, pits and rows; the stones of a forfeited first capture) have extra counters
named after the event. The engine adds a whole turn's events as one int: counter i
lives in bits 16*i .. 16*i+15, so a game's counts are a running sum of ints, and a
field never overflows because a rule set caps a game at 10,000 plies.

Every other layout of the events is derived from EVENT_LIST, through the subsets below:

    EVENTS          every event, in the order of the packed counters and of the games' columns
    TURN_EVENTS     the events a turn adds to (flags and counts)
    END_EVENTS      the end events, one per game that ends without legal moves
    TURN_FLAGS      the events a turn fires or not (0 or 1 a turn): engine.play.replays's flags,
                    the plies' columns of pipeline.runs.records, pipeline.analysis.turns' events by ply
    POSITION_FLAGS  the turn flags decided by the position before the move: engine.tables.positions'
                    flags and engine.play.batch's flag counters
    GAME_EVENTS     the events a game fires or not (the turn flags and the end events): the rule
                    events proper of the reports' tables and figures, without the counters

Each event's words are declared with it (Event: the engine's meaning, a report's sentence and
short name), and the reports take them from EVENT_BY_NAME.

possible_events(rules) leaves out the events a rule set rules out (feeding_forced without
the feeding rule, say): such an event is never counted as 0, it is not there (RULES.md: Rule events).

So adding an event is one entry here, plus the rule that fires it (engine.game.moves) and, for a
layout that cannot hold it generically (a position flag in the batch counter, a count in the
tables), the code that fills it.
"""

from __future__ import annotations

import sys
from array import array
from typing import NamedTuple

from engine.game.rules import Rules, check_rules

POSITION_FLAG = "position flag"  # fires (once a turn) on the position before the move
MOVE_FLAG = "move flag"  # fires (once a turn) on the move played
COUNT = "count"  # a number a turn adds: the stones or pits of a flag event
END = "end"  # fires once a game, on its final position, where the mover has no legal move
KINDS = (POSITION_FLAG, MOVE_FLAG, COUNT, END)


class Event(NamedTuple):
    """One rule event and its words: ``meaning`` is the engine's one line (the games' columns),
    ``words`` the sentence a report's glossary gives, ``short`` its name in a table or a figure.
    ``brief`` (fewer words, beside others in a column's label) and ``clause`` (the event as a
    clause, for how often it happens in a game) are given where a report uses them."""

    name: str
    kind: str  # one of KINDS
    meaning: str
    words: str
    short: str
    brief: str = ""
    clause: str = ""


EVENT_LIST = (
    Event(
        "feeding_active",
        POSITION_FLAG,
        "a turn starts with the opponent's row empty (counted whatever the feeding rule)",
        "a turn starts with the opponent's row empty (under the feeding rule, the mover must then feed it)",
        "opponent's row empty",
    ),
    Event(
        "feeding_forced",
        POSITION_FLAG,
        "feeding removed a move that was legal after the grand-slam ban",
        "the feeding rule took away at least one move that was otherwise legal",
        "feeding forced a move",
        brief="feeding forced",
        clause="a feed is forced",
    ),
    Event(
        "feeding_lapsed",
        POSITION_FLAG,
        "feeding was active, no remaining move could feed, a move was played",
        "feeding was due but no move could feed, so the duty lapsed and a move was played anyway",
        "feeding lapsed",
    ),
    Event(
        "grand_slam_blocked",
        POSITION_FLAG,
        "a playable pit was made illegal as a grand slam",
        "a move was banned because it would have captured every stone left in the opponent's row",
        "grand slam banned",
        brief="grand slam banned",
        clause="a grand slam is banned",
    ),
    Event(
        "first_move_forfeit",
        MOVE_FLAG,
        "the first move's capture was forfeited",
        "the game's first move would have captured, and the capture was given up",
        "first capture given up",
    ),
    Event(
        "first_move_forfeit_stones",
        COUNT,
        "... and this many stones stayed on the board",
        "the stones that given-up first capture would have taken",
        "stones of the first capture",
    ),
    Event("capture", MOVE_FLAG, "a capture happened", "a move captured stones", "captures"),
    Event("capture_stones", COUNT, "stones captured", "stones captured", "stones captured"),
    Event(
        "capture_pits",
        COUNT,
        "pits in the capture chains",
        "pits emptied by captures (the landing pit and the rest of its chain)",
        "pits captured",
    ),
    Event(
        "capture_own_row_stones",
        COUNT,
        "stones the mover took from its own row",
        "captured stones taken from the mover's own row",
        "stones from own row",
    ),
    Event(
        "capture_opponent_row_stones",
        COUNT,
        "stones the mover took from the opponent's row",
        "captured stones taken from the opponent's row",
        "stones from opponent's row",
    ),
    Event(
        "singleton_end",
        END,
        "end: the mover's row holds stones, none in a playable pit",
        "the game ends because every stone left in the mover's row is a single stone, which may not be moved",
        "ends: only single stones",
    ),
    Event(
        "grand_slam_end",
        END,
        "end: the mover has playable pits, every one a grand slam",
        "the game ends because every move left to the mover would be a grand slam",
        "ends: only grand slams",
    ),
    Event(
        "empty_row_end",
        END,
        "end: the mover's row is empty",
        "the game ends because the mover's row is empty",
        "ends: empty row",
    ),
)


def _names(*kinds: str) -> tuple[str, ...]:
    return tuple(event.name for event in EVENT_LIST if event.kind in kinds)


TURN_EVENTS = _names(POSITION_FLAG, MOVE_FLAG, COUNT)
END_EVENTS = _names(END)
EVENTS = TURN_EVENTS + END_EVENTS
TURN_FLAGS = _names(POSITION_FLAG, MOVE_FLAG)
POSITION_FLAGS = _names(POSITION_FLAG)
GAME_EVENTS = TURN_FLAGS + END_EVENTS  # the events a game fires or not: its flags and its end, no counts
EVENT_BY_NAME = {event.name: event for event in EVENT_LIST}
MEANING = {event.name: event.meaning for event in EVENT_LIST}


def possible_events(rules: Rules) -> tuple[str, ...]:
    """The events of EVENTS that can fire under ``rules``, in EVENTS order: all but those of a
    rule the rule set does not have (RULES.md: Rule events). feeding_active is a fact of the
    position, possible under every rule set. A TypeError names anything but an engine.Rules."""
    check_rules(rules)
    ruled_out = set()
    if not rules.feeding:
        ruled_out |= {"feeding_forced", "feeding_lapsed"}
    if rules.grand_slam != "prohibited":
        ruled_out |= {"grand_slam_blocked", "grand_slam_end"}
    if not rules.first_move_forfeit:
        ruled_out |= {"first_move_forfeit", "first_move_forfeit_stones"}
    if rules.capture_rows == "opponent":
        ruled_out.add("capture_own_row_stones")
    if rules.capture_rows == "own":
        ruled_out.add("capture_opponent_row_stones")
    if rules.min_stones_to_play == 1:
        ruled_out.add("singleton_end")
    return tuple(name for name in EVENTS if name not in ruled_out)


FIELD_BITS = 16
FIELD_MASK = (1 << FIELD_BITS) - 1
SHIFT = {name: FIELD_BITS * index for index, name in enumerate(EVENTS)}
UNIT = {name: 1 << shift for name, shift in SHIFT.items()}  # one occurrence, packed
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
