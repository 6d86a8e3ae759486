"""A plain reference implementation of Modiar, written from the repository's RULES.md alone.

It is slow on purpose and shares nothing with ``engine``: a board is a list of six ints
(pit 0 to 5, absolute pits), sowing drops one stone at a time, and every rule is a few
lines that read like the sentence of RULES.md they implement. The tests compare the
engine with it position by position.

A rule set is any object with the attributes of ``engine.Rules`` (stones_per_pit,
min_stones_to_play, sow_origin, capture_counts, capture_rows, first_move_forfeit,
feeding, grand_slam, ply_cap); it is passed in, never imported, so that this module
stays independent of the engine.

Players: 0 is South (pits 0, 1, 2), 1 is North (pits 3, 4, 5). ``ply`` is the number of
moves already played.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PITS = 6
ROW_LENGTH = 3
SOUTH, NORTH = 0, 1
PIT_BITS = 6  # the board code of RULES.md: pit i in bits 6*i .. 6*i+5

# The rule events of RULES.md, with the extra counters that carry a count.
TURN_EVENTS = (
    "feeding_active",
    "feeding_forced",
    "feeding_lapsed",
    "grand_slam_blocked",
    "first_move_forfeit",
    "first_move_forfeit_stones",
    "capture",
    "capture_stones",
    "capture_pits",
    "capture_own_row_stones",
    "capture_opponent_row_stones",
)
END_EVENTS = ("singleton_end", "grand_slam_end", "empty_row_end")
EVENTS = TURN_EVENTS + END_EVENTS

Rules = Any  # an engine.Rules, read through its attributes only


class IllegalMove(ValueError):
    """A pit the rules do not let the mover play."""


# ---------------------------------------------------------------------------
# The board


def start_board(rules: Rules) -> list[int]:
    """Each pit starts with ``stones_per_pit`` stones."""
    return [rules.stones_per_pit] * PITS


ROWS = ((0, 1, 2), (3, 4, 5))  # the pits each player owns: South 0, 1, 2; North 3, 4, 5


def own_row(player: int) -> tuple[int, ...]:
    return ROWS[player]


def opponent_of(player: int) -> int:
    return 1 - player


def row_stones(board: list[int], player: int) -> int:
    return sum(board[pit] for pit in own_row(player))


def next_pit(pit: int) -> int:
    """Sowing goes 0 -> 1 -> 2 -> 3 -> 4 -> 5 -> 0."""
    return (pit + 1) % PITS


def board_code(board: list[int]) -> int:
    """The bit-packed board code of RULES.md: pit i occupies bits 6*i .. 6*i+5."""
    code = 0
    for pit in range(PITS):
        code += board[pit] * 2 ** (PIT_BITS * pit)
    return code


def board_from_code(code: int) -> list[int]:
    return [(code // 2 ** (PIT_BITS * pit)) % 2**PIT_BITS for pit in range(PITS)]


def no_events() -> dict[str, int]:
    return dict.fromkeys(EVENTS, 0)


# ---------------------------------------------------------------------------
# One move: sowing and capturing, before the restrictions on legal moves


def sow(board: list[int], origin: int, rules: Rules) -> tuple[list[int], list[int]]:
    """Take every stone of ``origin`` and drop them one at a time (RULES.md, "A turn", step 2).

    Returns the board after sowing and the path: the pit each stone went into, in order,
    so that the landing pit is ``path[-1]``. With ``sow_origin`` the first stone goes back
    into the origin and later laps drop stones there too; without it (Oware) the hand
    starts in the next pit and every lap skips the origin.
    """
    board = list(board)
    hand = board[origin]
    board[origin] = 0
    path = []
    pit = origin if rules.sow_origin else next_pit(origin)
    while hand > 0:
        if pit == origin and not rules.sow_origin:
            pit = next_pit(pit)
            continue
        board[pit] += 1
        hand -= 1
        path.append(pit)
        pit = next_pit(pit)
    return board, path


def capture_chain(sown: list[int], path: list[int], mover: int, rules: Rules) -> list[int]:
    """The pits a capture takes, landing pit first, going backwards along the sowing path.

    A pit is taken when it holds one of ``capture_counts`` stones; the chain stops at the
    first pit that does not, when the path is used up, and before it would look at a pit
    a second time (so no more than the last min(n, 6) pits sown). With captures on the
    opponent's row only, the chain stops on reaching the mover's row (and a landing pit
    in the mover's row takes nothing); with captures on the mover's own row only, the
    other way round.
    """
    chain: list[int] = []
    for pit in reversed(path):
        if pit in chain:
            break
        if rules.capture_rows == "opponent" and pit in own_row(mover):
            break
        if rules.capture_rows == "own" and pit not in own_row(mover):
            break
        if sown[pit] not in rules.capture_counts:
            break
        chain.append(pit)
    return chain


@dataclass
class Outcome:
    """What playing one pit does, before the grand-slam ban and feeding decide if it is legal."""

    pit: int
    board: list[int]  # after sowing and captures
    captured_pits: list[int]  # absolute, landing pit first, going backwards
    captured: int
    own_row_stones: int  # captured stones that came from the mover's row
    opponent_row_stones: int
    forfeited_stones: int  # stones the first move of the game would have captured
    feeds: bool  # at least one stone was sown into the opponent's row
    grand_slam: bool  # the capture took opponent stones and left the opponent's row empty


def play_pit(board: list[int], mover: int, pit: int, ply: int, rules: Rules) -> Outcome:
    """Sow ``pit`` and make its captures, with the first-move forfeit and the grand slam variants."""
    sown, path = sow(board, pit, rules)
    chain = capture_chain(sown, path, mover, rules)
    forfeited = 0
    if ply == 0 and rules.first_move_forfeit:
        # The very first move of the game captures nothing; the stones stay on the board.
        forfeited = sum(sown[chain_pit] for chain_pit in chain)
        chain = []
    grand_slam = is_grand_slam(sown, chain, mover)
    if grand_slam and rules.grand_slam == "no_capture":
        chain = []  # the move is legal but captures nothing
    after = list(sown)
    own_row_stones = opponent_row_stones = 0
    for chain_pit in chain:
        if chain_pit in own_row(mover):
            own_row_stones += sown[chain_pit]
        else:
            opponent_row_stones += sown[chain_pit]
        after[chain_pit] = 0
    their_row = own_row(opponent_of(mover))
    return Outcome(
        pit=pit,
        board=after,
        captured_pits=chain,
        captured=own_row_stones + opponent_row_stones,
        own_row_stones=own_row_stones,
        opponent_row_stones=opponent_row_stones,
        forfeited_stones=forfeited,
        feeds=any(sown_pit in their_row for sown_pit in path),
        grand_slam=grand_slam,
    )


def is_grand_slam(sown: list[int], chain: list[int], mover: int) -> bool:
    """A capture that takes at least one stone from the opponent's row and leaves it empty."""
    their_row = own_row(opponent_of(mover))
    takes_theirs = any(sown[pit] > 0 for pit in chain if pit in their_row)
    left_in_their_row = sum(sown[pit] for pit in their_row if pit not in chain)
    return takes_theirs and left_in_their_row == 0


# ---------------------------------------------------------------------------
# A turn: the legal moves and the events of the turn


@dataclass
class Turn:
    """The legal moves of a position, each with its outcome, and the turn-wide events."""

    moves: dict[int, Outcome]  # pit -> outcome, ascending pit
    playable: list[int]  # pits with enough stones (RULES.md "A turn", step 1)
    flags: dict[str, int] = field(default_factory=dict)  # feeding_* and grand_slam_blocked


def analyse_turn(board: list[int], mover: int, ply: int, rules: Rules) -> Turn:
    """Apply the restrictions of RULES.md in its order: playable pits, grand-slam ban, feeding."""
    playable = [pit for pit in own_row(mover) if board[pit] >= rules.min_stones_to_play]
    flags = dict.fromkeys(("feeding_active", "feeding_forced", "feeding_lapsed", "grand_slam_blocked"), 0)
    if ply >= rules.ply_cap:
        return Turn({}, playable, flags)  # the game ended at the cap: nothing is legal

    candidates = [play_pit(board, mover, pit, ply, rules) for pit in playable]

    if rules.grand_slam == "prohibited":
        allowed = [outcome for outcome in candidates if not outcome.grand_slam]
        if len(allowed) < len(candidates):
            flags["grand_slam_blocked"] = 1
        candidates = allowed

    # feeding_active is counted whatever the feeding rule says; the other two need feeding on.
    if row_stones(board, opponent_of(mover)) == 0:
        flags["feeding_active"] = 1
        if rules.feeding and candidates:
            feeders = [outcome for outcome in candidates if outcome.feeds]
            if not feeders:
                flags["feeding_lapsed"] = 1  # no move can feed: the obligation lapses
            else:
                if len(feeders) < len(candidates):
                    flags["feeding_forced"] = 1
                candidates = feeders

    return Turn({outcome.pit: outcome for outcome in candidates}, playable, flags)


def legal_moves(board: list[int], mover: int, ply: int, rules: Rules) -> list[int]:
    """The pits ``mover`` may play, ascending; [] when the game is over."""
    return sorted(analyse_turn(board, mover, ply, rules).moves)


@dataclass
class MoveResult:
    board: list[int]
    captured: int
    captured_pits: list[int]  # absolute pits, landing pit first
    events: dict[str, int]  # this turn's value of every event in EVENTS


def move_events(turn: Turn, outcome: Outcome) -> dict[str, int]:
    """The events of a turn on which ``outcome`` was played."""
    events = no_events()
    events.update(turn.flags)
    if outcome.forfeited_stones:
        events["first_move_forfeit"] = 1
        events["first_move_forfeit_stones"] = outcome.forfeited_stones
    if outcome.captured:
        events["capture"] = 1
        events["capture_stones"] = outcome.captured
        events["capture_pits"] = len(outcome.captured_pits)
        events["capture_own_row_stones"] = outcome.own_row_stones
        events["capture_opponent_row_stones"] = outcome.opponent_row_stones
    return events


def move_results(board: list[int], mover: int, ply: int, rules: Rules) -> dict[int, MoveResult]:
    """What each legal move does, by pit (one analysis of the turn for all of them)."""
    turn = analyse_turn(board, mover, ply, rules)
    return {
        pit: MoveResult(list(outcome.board), outcome.captured, list(outcome.captured_pits), move_events(turn, outcome))
        for pit, outcome in turn.moves.items()
    }


def apply_move(board: list[int], mover: int, pit: int, ply: int, rules: Rules) -> MoveResult:
    """Play ``pit`` for ``mover``; raises ``IllegalMove`` if the rules forbid it."""
    results = move_results(board, mover, ply, rules)
    if pit not in results:
        reason = illegal_reason(board, mover, pit, ply, rules)
        raise IllegalMove(f"player {mover} may not play pit {pit} on {board} at ply {ply}: {reason}")
    return results[pit]


def illegal_reason(board: list[int], mover: int, pit: int, ply: int, rules: Rules) -> str:
    """Which rule forbids an illegal pit, checked in RULES.md order."""
    if pit not in own_row(mover):
        return "wrong row"
    if ply >= rules.ply_cap:
        return "ply cap"
    if board[pit] < rules.min_stones_to_play:
        return "too few stones"
    if rules.grand_slam == "prohibited" and play_pit(board, mover, pit, ply, rules).grand_slam:
        return "grand slam"
    return "feeding"


def end_event(board: list[int], mover: int, ply: int, rules: Rules) -> str | None:
    """The end event of a position where the mover has no legal move; None otherwise.

    None too at the ply cap: the game ends there, but no end event fires.
    """
    if ply >= rules.ply_cap:
        return None
    turn = analyse_turn(board, mover, ply, rules)
    if turn.moves:
        return None
    if turn.playable:
        # Feeding lapses rather than remove every move, so only the grand-slam ban can
        # have made every playable pit illegal.
        assert rules.grand_slam == "prohibited", (board, mover, ply)
        return "grand_slam_end"
    return "singleton_end" if row_stones(board, mover) > 0 else "empty_row_end"


# ---------------------------------------------------------------------------
# Whole games


@dataclass
class Game:
    winner: str  # "south", "north" or "draw"
    score_south: int  # stones captured plus stones left in South's row at the end
    score_north: int
    plies: int
    end_reason: str  # "no_moves" or "ply_cap"
    events: dict[str, int]  # per-game totals of every event in EVENTS
    board: list[int]  # the final board
    mover: int  # the player to move at the end


def replay_game(moves: list[int], rules: Rules) -> Game:
    """Play ``moves`` (absolute pits, South's first) from the start to the end of the game.

    Raises ``IllegalMove`` on an illegal move and ``ValueError`` if the moves stop before
    the game is over.
    """
    board = start_board(rules)
    mover = SOUTH
    captured = [0, 0]
    totals = no_events()
    for ply, pit in enumerate(moves):
        result = apply_move(board, mover, pit, ply, rules)
        captured[mover] += result.captured
        for name, count in result.events.items():
            totals[name] += count
        board = result.board
        mover = opponent_of(mover)
    plies = len(moves)
    if legal_moves(board, mover, plies, rules):
        raise ValueError(f"the game is not over after {plies} moves: {board}, player {mover} to move")
    if plies >= rules.ply_cap:
        end_reason = "ply_cap"
    else:
        end_reason = "no_moves"
        totals[end_event(board, mover, plies, rules)] += 1
    # At the end each player adds the stones left in its own row to its pile.
    score_south = captured[SOUTH] + row_stones(board, SOUTH)
    score_north = captured[NORTH] + row_stones(board, NORTH)
    if score_south > score_north:
        winner = "south"
    elif score_north > score_south:
        winner = "north"
    else:
        winner = "draw"
    return Game(winner, score_south, score_north, plies, end_reason, totals, board, mover)


def perft(depth: int, rules: Rules) -> int:
    """The number of legal move sequences of exactly ``depth`` moves from the start."""
    return perft_counts(depth, rules)[depth]


def perft_counts(max_depth: int, rules: Rules) -> list[int]:
    """perft for every depth from 0 to ``max_depth``, in one pass from the start.

    Level by level: for each position reached after ``ply`` moves, the number of move
    sequences that reach it. A position's moves depend only on the board, the mover and
    the ply, so sequences that meet in one position are counted together.
    """
    level = {(tuple(start_board(rules)), SOUTH): 1}
    counts = [1]
    for ply in range(max_depth):
        last = ply == max_depth - 1  # the last level needs only the number of moves
        following: dict[tuple[tuple[int, ...], int], int] = {}
        total = 0
        for (board, mover), sequences in level.items():
            moves = analyse_turn(list(board), mover, ply, rules).moves
            total += sequences * len(moves)
            if not last:
                for outcome in moves.values():
                    child = (tuple(outcome.board), opponent_of(mover))
                    following[child] = following.get(child, 0) + sequences
        level = following
        counts.append(total)
    return counts
