"""The rules of a turn: playable pits, sowing, captures, the grand-slam ban and feeding.

Everything here sees the board from the mover's side: the mover owns pits 0, 1, 2 and
the opponent 3, 4, 5 (``engine.game.board.rotate`` turns North's view into this one). The
checked API on absolute pits is ``engine.game.api``.

A turn's legal moves are *options* (``Option``): the pit played, the board after the move
seen by the next mover, the turn's events and the stones captured.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from engine.game.board import BOARD_MASK, ROW_BITS, ROW_MASK, Board
from engine.game.events import UNIT
from engine.game.rules import PIT_BITS, PIT_LIMIT, PITS, ROW, Rules
from engine.store import per_rule_set

Sown = tuple[int, int, int, int, int, bool]
OWN_ROW = range(ROW)
OPPONENT_ROW_EMPTY = 1 << ROW_BITS  # a board (mover's view) below this has an empty opponent row

FEEDING_ACTIVE = UNIT["feeding_active"]
FEEDING_FORCED = UNIT["feeding_forced"]
FEEDING_LAPSED = UNIT["feeding_lapsed"]
GRAND_SLAM_BLOCKED = UNIT["grand_slam_blocked"]


class Option(NamedTuple):
    """A legal move of the mover and what it does; built once per position (engine.game.options)."""

    pit: int  # the pit played, 0, 1 or 2 (the mover's view)
    child: Board  # the board after the move, seen by the next mover (turned by three pits)
    events: int  # the turn's events, packed as in engine.game.events
    captured: int  # the stones captured


# Option(...) goes through a Python-level __new__; options() calls tuple.__new__ itself, at half the cost.
_new_tuple = tuple.__new__


class Sowing(NamedTuple):
    """What sowing a hand from a pit does, whatever else is on the board."""

    increment: int  # added to the board code: +1 in every pit sown, -hand in the origin
    chain: tuple[int, ...]  # pits a capture may take, landing pit first, backwards along the path
    keep: tuple[int, ...]  # keep[k]: the mask that empties the first k pits of the chain
    feeds: bool  # at least one stone lands in the opponent's row


class MoveLookups(NamedTuple):
    """Everything that depends only on the rule set, built once per rule set."""

    rules: Rules
    sowing: tuple[tuple[Sowing, ...], ...]  # sowing[pit][hand]
    capturable: tuple[bool, ...]  # capturable[stones]


def start_board(rules: Rules) -> Board:
    """The board code of the start: ``rules.stones_per_pit`` stones in every pit."""
    return sum(rules.stones_per_pit << (PIT_BITS * pit) for pit in range(PITS))


@per_rule_set
@lru_cache(maxsize=64)
def move_lookups(rules: Rules) -> MoveLookups:
    sowing = tuple(tuple(_make_sowing(rules, pit, hand) for hand in range(PIT_LIMIT + 1)) for pit in OWN_ROW)
    capturable = tuple(stones in rules.capture_counts for stones in range(PIT_LIMIT + 1))
    return MoveLookups(rules, sowing, capturable)


def sow(board: Board, pit: int, forfeit: bool, lookups: MoveLookups) -> Sown:
    """Sow ``pit`` (mover's view) and make its captures; ``forfeit`` keeps them on the board.

    Returns ``(board, captured, chain_taken, own_row_stones, forfeited, feeds)``: the board
    after sowing and captures (before the grand-slam and feeding rules), the stones
    captured, how many pits of the chain were taken, how many of the captured stones came
    from the mover's row, the stones a forfeited first capture left, and whether the move
    sows into the opponent's row.
    """
    increment, chain, keep, feeds = lookups.sowing[pit][(board >> (PIT_BITS * pit)) & PIT_LIMIT]
    board += increment
    capturable = lookups.capturable
    captured = own_row = taken = 0
    for chain_pit in chain:
        stones = (board >> (PIT_BITS * chain_pit)) & PIT_LIMIT
        if not capturable[stones]:
            break
        captured += stones
        taken += 1
        if chain_pit < ROW:
            own_row += stones
    if forfeit:
        return board, 0, 0, 0, captured, feeds
    return board & keep[taken], captured, taken, own_row, 0, feeds


def is_grand_slam(sown: Sown) -> bool:
    """The capture takes stones from the opponent's row and leaves that row empty."""
    board, captured, _, own_row, _, _ = sown
    return captured > own_row and board < OPPONENT_ROW_EMPTY


def playable(board: Board, rules: Rules) -> list[int]:
    return [pit for pit in OWN_ROW if (board >> (PIT_BITS * pit)) & PIT_LIMIT >= rules.min_stones_to_play]


def options(board: Board, forfeit: bool, lookups: MoveLookups) -> tuple[Option, ...]:
    """The legal moves of the mover in ``board`` (mover's view), ascending pit.

    RULES.md order: playable pits, then the grand-slam ban, then feeding. It runs once per
    position (engine.game.options memoises it), yet often enough that ``playable``,
    ``is_grand_slam`` and ``rotate`` are written out inline.
    """
    rules = lookups.rules
    minimum = rules.min_stones_to_play
    events = 0
    moves = []
    for pit in OWN_ROW:
        if (board >> (PIT_BITS * pit)) & PIT_LIMIT < minimum:
            continue
        sown = sow(board, pit, forfeit, lookups)
        if sown[1] > sown[3] and sown[0] < OPPONENT_ROW_EMPTY:  # a grand slam
            if rules.grand_slam == "prohibited":
                events |= GRAND_SLAM_BLOCKED
                continue
            if rules.grand_slam == "no_capture":
                sown = (sow(board, pit, True, lookups)[0], 0, 0, 0, 0, sown[5])
        moves.append((pit, sown))
    if board < OPPONENT_ROW_EMPTY:
        events |= FEEDING_ACTIVE
        if rules.feeding and moves:
            feeders = [move for move in moves if move[1][5]]
            if not feeders:
                events |= FEEDING_LAPSED
            elif len(feeders) < len(moves):
                events |= FEEDING_FORCED
                moves = feeders
    found = []
    for pit, sown in moves:
        after = sown[0]
        child = ((after >> ROW_BITS) | (after << ROW_BITS)) & BOARD_MASK
        packed = events + _packed(sown) if sown[1] or sown[4] else events
        found.append(_new_tuple(Option, (pit, child, packed, sown[1])))
    return tuple(found)


def end_event(board: Board, rules: Rules) -> str:
    """The end event of a position (mover's view) where the mover has no legal move."""
    if playable(board, rules):
        return "grand_slam_end"  # feeding never removes every move, so only the ban can
    return "singleton_end" if board & ROW_MASK else "empty_row_end"


_CAPTURE_UNITS = tuple(
    UNIT[name] for name in ("capture_stones", "capture_pits", "capture_own_row_stones", "first_move_forfeit_stones")
)
_CAPTURE = UNIT["capture"]
_OPPONENT_ROW_STONES = UNIT["capture_opponent_row_stones"]
_FORFEIT = UNIT["first_move_forfeit"]


def _packed(sown: Sown) -> int:
    """A move's own events (captures, a forfeit), packed."""
    _, captured, taken, own_row, forfeited, _ = sown
    if captured:
        stones, pits, own, _ = _CAPTURE_UNITS
        return _CAPTURE + captured * stones + taken * pits + own_row * own + (captured - own_row) * _OPPONENT_ROW_STONES
    if forfeited:
        return _FORFEIT + forfeited * _CAPTURE_UNITS[3]
    return 0


def _make_sowing(rules: Rules, origin: int, hand: int) -> Sowing:
    path = sowing_path(origin, hand, rules.sow_origin)
    increment = sum(1 << (PIT_BITS * pit) for pit in path) - (hand << (PIT_BITS * origin))
    chain: list[int] = []
    for pit in reversed(path):
        if pit in chain or (rules.capture_rows == "opponent" and pit < ROW) or (rules.capture_rows == "own" and pit >= ROW):
            break
        chain.append(pit)
    keep = [-1]
    for pit in chain:
        keep.append(keep[-1] & ~(PIT_LIMIT << (PIT_BITS * pit)))
    return Sowing(increment, tuple(chain), tuple(keep), any(pit >= ROW for pit in path))


def sowing_path(origin: int, hand: int, sow_origin: bool) -> list[int]:
    """The pits that receive the stones of a hand, in order (RULES.md, "A turn", step 2)."""
    ring = [(origin + step) % PITS for step in range(PITS)]
    if not sow_origin:
        ring = ring[1:]
    return [ring[stone % len(ring)] for stone in range(hand)]
