"""The board code of RULES.md: pit i holds its stone count in bits 6*i .. 6*i+5 of an int.

    bit   35..30  29..24  23..18  17..12  11..6   5..0
    pit      5       4       3       2       1      0
            '-- North's row --'     '-- South's row --'

South (player 0) owns pits 0, 1, 2; North (player 1) owns pits 3, 4, 5; sowing runs
0 -> 1 -> 2 -> 3 -> 4 -> 5 -> 0. Every function here is pure: a board is a plain int.
"""

from __future__ import annotations

from collections.abc import Iterable

from engine.game.rules import PIT_BITS, PIT_LIMIT, PITS, ROW

Board = int

ROW_BITS = ROW * PIT_BITS
ROW_MASK = (1 << ROW_BITS) - 1
BOARD_MASK = (1 << (PITS * PIT_BITS)) - 1
SOUTH, NORTH = 0, 1
PLAYER_NAMES = ("South", "North")


def pit_count(board: Board, pit: int) -> int:
    return (board >> (PIT_BITS * pit)) & PIT_LIMIT


def pack(counts: Iterable[int]) -> Board:
    """The board code of six pit counts, pit 0 first (ints; NumPy integers are welcome)."""
    return sum(count << (PIT_BITS * pit) for pit, count in enumerate(_pit_counts(counts)))


def unpack(board: Board) -> tuple[int, ...]:
    """The six pit counts of a board code, pit 0 first."""
    check_board(board)
    return tuple(pit_count(board, pit) for pit in range(PITS))


def whole_number(value: object) -> int | None:
    """``value`` as a Python int if it is an integer (NumPy's too), else None; a bool is not."""
    if type(value) is int:
        return value
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        return None
    try:
        return int(value.__index__())
    except TypeError:  # numpy.bool_ has __index__ but refuses it
        return None


def check_board(board: Board) -> None:
    if not isinstance(board, int) or isinstance(board, bool) or not 0 <= board <= BOARD_MASK:
        raise ValueError(f"a board code is an int from 0 to 2**36 - 1, not {board!r}")


def rotate(board: Board) -> Board:
    """Turn the board by three pits, so that North's row lands on pits 0, 1, 2.

    Rotating twice gives the board back. North to move on ``b`` is the same position as
    South to move on ``rotate(b)`` (RULES.md, "Perfect play").
    """
    return ((board >> ROW_BITS) | (board << ROW_BITS)) & BOARD_MASK


def row_stones(board: Board, player: int) -> int:
    row = (board >> (ROW_BITS * player)) & ROW_MASK
    return (row & PIT_LIMIT) + ((row >> PIT_BITS) & PIT_LIMIT) + (row >> (2 * PIT_BITS))


def render(board: Board) -> str:
    """An ASCII picture: North's row on top, South's row below, pit numbers outside.

    North's row reads 5 4 3 from left to right, so that each column holds two facing pits
    and sowing runs counter-clockwise: along the bottom, up the right, back along the top.
    """
    counts = unpack(board)
    north = "".join(f"{counts[pit]:>4}" for pit in (5, 4, 3))
    south = "".join(f"{counts[pit]:>4}" for pit in (0, 1, 2))
    return "\n".join(
        [
            "pit      5   4   3",
            f"North {north}",
            f"South {south}",
            "pit      0   1   2",
        ]
    )


def parse_board(picture: str) -> Board:
    """The board code of a picture drawn by ``render`` (the inverse of ``render``)."""
    if not isinstance(picture, str):
        raise TypeError(f"picture must be a str drawn like engine.render's, not {picture!r}")
    rows: dict[str, list[int]] = {}
    for line in picture.splitlines():
        words = line.split()
        if words and words[0] in PLAYER_NAMES:
            if words[0] in rows:
                raise ValueError(f"picture has two {words[0]} rows; a board picture has one of each: {picture!r}")
            rows[words[0]] = _row_counts(words, picture)
    if set(rows) != set(PLAYER_NAMES):
        raise ValueError(f"picture must have a North row and a South row, as engine.render draws them: {picture!r}")
    five, four, three = rows["North"]
    return pack([*rows["South"], three, four, five])


def _row_counts(words: list[str], picture: str) -> list[int]:
    """The three stone counts of a row of a picture: its words after the player's name."""
    row, counts = words[0], words[1:]
    if len(counts) != ROW or not all(count.isdecimal() and int(count) <= PIT_LIMIT for count in counts):
        wanted = f"{ROW} stone counts from 0 to {PIT_LIMIT}"
        raise ValueError(f"picture's {row} row must hold {wanted}, not {' '.join(counts)!r}: {picture!r}")
    return [int(count) for count in counts]


def _pit_counts(counts: object) -> tuple[int, ...]:
    """Six pit counts as Python ints, or a ValueError naming ``counts``."""
    given = tuple(counts) if isinstance(counts, Iterable) and not isinstance(counts, str | bytes) else None
    pits = [whole_number(count) for count in given or ()]
    if given is None or len(pits) != PITS or any(count is None or not 0 <= count <= PIT_LIMIT for count in pits):
        shown = counts if given is None else given
        raise ValueError(f"counts must be six pit counts, whole numbers from 0 to {PIT_LIMIT}, pit 0 first, not {shown!r}")
    return tuple(count for count in pits if count is not None)
