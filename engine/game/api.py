"""The public, checked API on absolute pits: legal moves, applying a move, perft."""

from __future__ import annotations

from dataclasses import dataclass

from engine.game import moves
from engine.game.board import NORTH, PLAYER_NAMES, SOUTH, Board, check_board, unpack, whole_number
from engine.game.board import rotate as turned
from engine.game.errors import IllegalMoveError
from engine.game.events import field, unpack_events
from engine.game.moves import move_lookups
from engine.game.options import Position, positions
from engine.game.rules import PIT_LIMIT, PITS, ROW, Rules, check_rules

DEFAULT_RULES = Rules()


@dataclass(frozen=True)
class MoveResult:
    """What one move did."""

    board: Board  # the board code after the move
    captured: int  # stones captured this turn
    captured_pits: tuple[int, ...]  # absolute pits, landing pit first
    events: dict[str, int]  # this turn's value of every event of engine.game.events.EVENTS


def start_board(rules: Rules = DEFAULT_RULES) -> Board:
    """The board code of the start position: ``rules.stones_per_pit`` in every pit."""
    check_rules(rules)
    return moves.start_board(rules)


def legal_moves(board: Board, mover: int, ply: int, rules: Rules = DEFAULT_RULES) -> tuple[int, ...]:
    """The pits ``mover`` (0 South, 1 North) may play, ascending; () when the game is over.

    ``ply`` is the number of moves already played: ply 0 forfeits its capture, and no
    move is legal once ``rules.ply_cap`` moves have been played.
    """
    return position(board, mover, ply, rules).moves


def position(board: Board, mover: int, ply: int, rules: Rules = DEFAULT_RULES) -> Position:
    """What a strategy sees at this position: the board, the mover, the legal moves.

    ``mover`` and ``ply`` are ints (NumPy integers are welcome); floats and bools are refused.
    """
    mover, ply = _checked_position(board, mover, ply, rules)
    seen = board if mover == SOUTH else turned(board)
    options = positions(rules).options(seen, ply) if ply < rules.ply_cap else ()
    return Position(board, mover, ply, rules, tuple(option.pit + ROW * mover for option in options), options)


def apply_move(board: Board, mover: int, pit: int, ply: int, rules: Rules = DEFAULT_RULES) -> MoveResult:
    """Play ``pit`` for ``mover``; raises ``IllegalMoveError`` naming the rule that forbids it.

    A ``pit`` that is no whole number at all (a float, a bool, a string) is a ValueError.
    """
    seen = position(board, mover, ply, rules)
    mover, ply, pit = seen.mover, seen.ply, _checked_pit(pit)
    seen_pit = pit - ROW * mover
    for option in seen.options:
        if option.pit == seen_pit:
            after = turned(option.child) if mover == SOUTH else option.child  # the child is seen by the next mover
            chain = move_lookups(rules).sowing[seen_pit][unpack(board)[pit]].chain[: field(option.events, "capture_pits")]
            taken = tuple((chain_pit + ROW * mover) % PITS for chain_pit in chain)
            return MoveResult(after, option.captured, taken, unpack_events(option.events))
    raise IllegalMoveError(_illegal(board, mover, pit, ply, rules))


def end_event(board: Board, mover: int, ply: int, rules: Rules = DEFAULT_RULES) -> str | None:
    """The end event when ``mover`` has no legal move; None while the game goes on.

    None too at the ply cap: the game ends there, but no end event fires.
    """
    if legal_moves(board, mover, ply, rules) or ply >= rules.ply_cap:
        return None
    return moves.end_event(board if mover == SOUTH else turned(board), rules)


def illegal_reason(board: Board, mover: int, pit: int, ply: int, rules: Rules = DEFAULT_RULES) -> str:
    """Why ``mover`` may not play ``pit``, in plain words that follow "South cannot play pit 1: ",
    e.g. "it holds a single stone, and a pit needs at least 2 stones to be played"; the rule
    ``apply_move``'s IllegalMoveError names. A legal ``pit`` is a ValueError.
    """
    seen = position(board, mover, ply, rules)
    pit = _checked_pit(pit)
    if pit in seen.moves:
        raise ValueError(f"pit {pit} is a legal move for {PLAYER_NAMES[seen.mover]}: nothing forbids it")
    return _reason(board, seen.mover, pit, seen.ply, rules)


def rotate(board: Board) -> Board:
    """Turn the board by three pits, so that North's row lands on pits 0, 1, 2 (engine.game.board.rotate,
    which the engine's own loops call unchecked); a board code that is none is a ValueError."""
    check_board(board)
    return turned(board)


def perft(depth: int, rules: Rules = DEFAULT_RULES) -> int:
    """The number of legal move sequences of exactly ``depth`` moves from the start: 0 past the
    rule set's ply cap, where no move is legal, said at once."""
    _check_depth(depth)
    check_rules(rules)
    return 0 if depth > rules.ply_cap else perft_counts(depth, rules)[-1]


def perft_counts(depth: int, rules: Rules = DEFAULT_RULES) -> list[int]:
    """``[perft(0), perft(1), ..., perft(depth)]``, in one pass (zeros past the ply cap)."""
    _check_depth(depth)
    check_rules(rules)
    # Breadth first, one level per ply: each board (seen by the mover) is expanded once per
    # level however many sequences reach it, and carries how many do.
    memo = positions(rules)
    level = {memo.start: 1}
    counts = [1]
    for ply in range(min(depth, rules.ply_cap)):
        following: dict[Board, int] = {}
        for board, sequences in level.items():
            for option in memo.options(board, ply):
                following[option.child] = following.get(option.child, 0) + sequences
        level = following
        counts.append(sum(level.values()))
    return counts + [0] * (depth - len(counts) + 1)  # no move is legal past the cap


def _check_depth(depth: int) -> None:
    if not isinstance(depth, int) or isinstance(depth, bool) or depth < 0:
        raise ValueError(f"perft depth must be a whole number >= 0, not {depth!r}")


def _illegal(board: Board, mover: int, pit: int, ply: int, rules: Rules) -> str:
    """Why ``pit`` is not a legal move: the pit, the board's pits and the rule."""
    reason = _reason(board, mover, pit, ply, rules)
    return f"{PLAYER_NAMES[mover]} cannot play pit {pit!r} on board {unpack(board)} (pits 0-5): {reason}"


def _reason(board: Board, mover: int, pit: int, ply: int, rules: Rules) -> str:
    """The rule that forbids an illegal ``pit``, as a clause in plain words."""
    name, opponent = PLAYER_NAMES[mover], PLAYER_NAMES[mover ^ 1]
    own = range(ROW * mover, ROW * mover + ROW)
    if pit not in own:
        where = f"it is in {opponent}'s row" if 0 <= pit < PITS else f"there is no pit {pit}"
        return f"{where}, and {name} plays only pits {own[0]}, {own[1]} and {own[2]}"
    if ply >= rules.ply_cap:
        return f"the game ended at the ply cap of {rules.ply_cap} moves"
    stones, least = unpack(board)[pit], rules.min_stones_to_play
    if stones == 0:
        return "it is empty"
    if stones < least:
        held = "a single stone" if stones == 1 else f"only {stones} stones"
        return f"it holds {held}, and a pit needs at least {least} stones to be played"
    seen = board if mover == SOUTH else turned(board)
    sown = moves.sow(seen, pit - ROW * mover, ply == 0 and rules.first_move_forfeit, move_lookups(rules))
    if moves.is_grand_slam(sown) and rules.grand_slam == "prohibited":
        return f"it would capture every stone in {opponent}'s row, and taking a whole row (a grand slam) is not allowed"
    feeding = [str(move) for move in legal_moves(board, mover, ply, rules)]
    if not feeding:
        return f"the game is over: {name} has no legal move"
    pits = " or ".join([", ".join(feeding[:-1]), feeding[-1]] if len(feeding) > 1 else feeding)
    return f"{opponent}'s row is empty, so {name} must feed it: play pit {pits}, which sows stones into {opponent}'s row"


def _checked_position(board: Board, mover: object, ply: object, rules: Rules) -> tuple[int, int]:
    """``mover`` and ``ply`` as Python ints, once the board, the mover, the ply and the rules pass."""
    check_board(board)
    stones = sum(unpack(board))
    if stones > PIT_LIMIT:
        # Sowing could then put more stones in a pit than its 6 bits hold.
        raise ValueError(f"board {unpack(board)} holds {stones} stones; a board holds at most {PIT_LIMIT}")
    whole_mover, whole_ply = whole_number(mover), whole_number(ply)
    if whole_mover is None or whole_mover not in (SOUTH, NORTH):
        raise ValueError(f"mover is 0 (South) or 1 (North), not {mover!r}")
    if whole_ply is None or whole_ply < 0:
        raise ValueError(f"ply is the number of moves already played, a whole number >= 0, not {ply!r}")
    check_rules(rules)
    return whole_mover, whole_ply


def _checked_pit(pit: object) -> int:
    whole = whole_number(pit)
    if whole is None:
        raise ValueError(f"pit is an absolute pit, a whole number from 0 to {PITS - 1}, not {pit!r}")
    return whole
