"""Playing whole games."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from engine.game import (
    FIELD_MASK,
    GAMMA,
    MASK32,
    MASK64,
    MIX1,
    MIX2,
    NORTH,
    ROW,
    SEED_SALT,
    SHIFT,
    SOUTH,
    WINNERS,
    Board,
    IllegalMoveError,
    Position,
    Positions,
    Rng,
    Rules,
    check_rules,
    check_seed,
    final_score,
    mix64,
    positions,
    render,
    turned,
    unpack_events,
)
from engine.players import OneDrawStrategy, Strategy, make_strategy

DEFAULT_RULES = Rules()
CAPTURE_STONES = SHIFT["capture_stones"]


class GameRecord(NamedTuple):
    """One finished game."""

    moves: tuple[int, ...]  # absolute pits, South's first
    winner: str  # "south", "north" or "draw" (engine.game.scoring)
    score_south: int  # stones captured plus stones left in South's row at the end
    score_north: int
    plies: int
    end_reason: str  # "no_moves" or "ply_cap"
    events: dict[str, int]  # per-game count of every event of engine.game.events.EVENTS
    seed: int
    south: str  # strategy specs
    north: str
    rules: str  # the rule set's name


def play_game(
    south: str | Strategy,
    north: str | Strategy,
    *,
    rules: Rules = DEFAULT_RULES,
    seed: int = 0,
    on_move: Callable[[Position, int], None] | None = None,
) -> GameRecord:
    """Play one game from the start, every random choice drawn from ``seed``'s stream (engine.game.rng).

    Every move a strategy returns is checked: an illegal one raises ``IllegalMoveError``.
    ``on_move(position, pit)``, when given, is called after each checked move with the
    position it was played in; it sees the game without changing it (the fast loop of two
    table strategies then gives way to the general one, which plays the same game).
    """
    players = (make_strategy(south), make_strategy(north))
    seed = check_seed(seed)
    check_rules(rules)
    state = mix64(seed ^ SEED_SALT)
    memo = positions(rules)
    if on_move is None and isinstance(players[SOUTH], OneDrawStrategy) and isinstance(players[NORTH], OneDrawStrategy):
        moves, board, mover, totals = _play_tables(players, state, memo)  # type: ignore[arg-type]
    else:
        moves, board, mover, totals = _play_any(players, state, memo, on_move)
    return _record(moves, board, mover, totals, memo, seed, players)


def _play_tables(
    players: tuple[OneDrawStrategy, OneDrawStrategy], state: int, memo: Positions
) -> tuple[list[int], Board, int, list[int]]:
    """The fast loop: two table strategies, one random draw each per turn.

    The board is always seen by the player to move. The loop body plays South's turn and
    then North's: South takes the high half of a new 64-bit word of the stream and North
    its low half (engine.game.rng), and each seat's events add up in a local variable. A forced
    move still takes its draw but needs no mixing, so the word is mixed only when used.
    """
    south_pick, north_pick = players[SOUTH].pick, players[NORTH].pick
    # A uniform pick is written out inline: it is most of what a random game does.
    south_uniform, north_uniform = players[SOUTH].uniform, players[NORTH].uniform
    cap = memo.rules.ply_cap
    later = memo.later
    expand = memo.expand
    moves: list[int] = []
    play = moves.append
    south_events = north_events = 0
    board = memo.start
    options = memo.options(board, 0)
    while True:
        n = len(options)
        if not n:
            return moves, board, SOUTH, [south_events, north_events]
        state = (state + GAMMA) & MASK64
        word = -1
        if n == 1:
            pit, board, events, _ = options[0]
        else:
            word = ((state ^ (state >> 30)) * MIX1) & MASK64
            word = ((word ^ (word >> 27)) * MIX2) & MASK64
            word ^= word >> 31
            if south_uniform:
                pit, board, events, _ = options[((word >> 32) * n) >> 32]
            else:
                pit, board, events, _ = options[south_pick(options, word >> 32)]
        play(pit)
        south_events += events
        if len(moves) == cap:
            return moves, board, NORTH, [south_events, north_events]
        options = later.get(board)  # type: ignore[assignment] # None is replaced just below
        if options is None:
            options = expand(board)
        n = len(options)
        if not n:
            return moves, board, NORTH, [south_events, north_events]
        if n == 1:
            pit, board, events, _ = options[0]
        else:
            if word < 0:
                word = ((state ^ (state >> 30)) * MIX1) & MASK64
                word = ((word ^ (word >> 27)) * MIX2) & MASK64
                word ^= word >> 31
            if north_uniform:
                pit, board, events, _ = options[((word & MASK32) * n) >> 32]
            else:
                pit, board, events, _ = options[north_pick(options, word & MASK32)]
        play(pit + ROW)
        north_events += events
        if len(moves) == cap:
            return moves, board, SOUTH, [south_events, north_events]
        options = later.get(board)  # type: ignore[assignment] # None is replaced just below
        if options is None:
            options = expand(board)


def _play_any(
    players: tuple[Strategy, Strategy], state: int, memo: Positions, on_move: Callable[[Position, int], None] | None = None
) -> tuple[list[int], Board, int, list[int]]:
    """The general loop: asks each strategy for an absolute pit, checks it and shows it to ``on_move``."""
    rng = Rng(state)
    rules = memo.rules
    moves: list[int] = []
    totals = [0, 0]
    board = memo.start
    mover = SOUTH
    for ply in range(rules.ply_cap):
        options = memo.options(board, ply)
        if not options:
            break
        absolute = board if mover == SOUTH else turned(board)
        legal = tuple(option.pit + ROW * mover for option in options)
        position = Position(absolute, mover, ply, rules, legal, options)
        pit = players[mover].choose(position, rng)
        if pit not in legal:
            raise IllegalMoveError(
                f"strategy {players[mover].spec!r} played pit {pit!r}, not one of the legal moves {legal}\n{render(absolute)}"
            )
        played = options[legal.index(pit)]
        board = played.child
        moves.append(pit)
        totals[mover] += played.events
        if on_move is not None:
            on_move(position, pit)
        mover ^= 1
    return moves, board, mover, totals


def _record(
    moves: list[int], board: Board, mover: int, totals: list[int], memo: Positions, seed: int, players: tuple[Strategy, Strategy]
) -> GameRecord:
    plies = len(moves)
    ended = plies < memo.rules.ply_cap
    end_events, mover_row, opponent_row = memo.final(board)
    south_row, north_row = (mover_row, opponent_row) if mover == SOUTH else (opponent_row, mover_row)
    south_events, north_events = totals
    captured_south, captured_north = (south_events >> CAPTURE_STONES) & FIELD_MASK, (north_events >> CAPTURE_STONES) & FIELD_MASK
    winner, score_south, score_north = final_score(captured_south, captured_north, south_row, north_row)
    return GameRecord(
        tuple(moves),
        WINNERS[winner],
        score_south,
        score_north,
        plies,
        "no_moves" if ended else "ply_cap",
        unpack_events(south_events + north_events + end_events if ended else south_events + north_events),
        seed,
        players[SOUTH].spec,
        players[NORTH].spec,
        memo.name,
    )
