"""A game in the terminal: a person (``human``) against any strategy, or two people.

The board is drawn after every move (engine.render); a move that is not a legal pit is
explained and asked again; end of input or ``q`` abandons the game.
"""

from __future__ import annotations

from collections.abc import Callable

import engine
from engine.board import PLAYER_NAMES, row_stones

HUMAN = "human"
QUIT = ("q", "quit", "exit")


class Abandoned(Exception):
    """The person left the game (end of input or q)."""


def play_terminal(
    south: str,
    north: str,
    *,
    rules: engine.Rules,
    seed: int = 0,
    ask: Callable[[str], str] = input,
    say: Callable[[str], None] = print,
) -> engine.GameRecord | None:
    """Play one game, asking ``ask`` for the human's moves; None when the game is abandoned."""
    players = [spec if spec == HUMAN else engine.make_strategy(spec) for spec in (south, north)]
    rng = engine.Rng.for_game(seed)
    board, moves, captured = engine.start_board(rules), [], [0, 0]
    say(engine.render(board))
    for ply in range(rules.ply_cap):
        mover = ply % 2
        position = engine.position(board, mover, ply, rules)
        if not position.moves:
            break
        player = players[mover]
        try:
            pit = _ask_move(position, ask, say) if player == HUMAN else player.choose(position, rng)  # type: ignore[union-attr]
        except Abandoned:
            say(f"game abandoned at ply {ply}")
            return None
        result = engine.apply_move(board, mover, pit, ply, rules)
        board, captured[mover] = result.board, captured[mover] + result.captured
        moves.append(pit)
        taken = f", captures {result.captured}" if result.captured else ""
        say(f"\nply {ply}: {PLAYER_NAMES[mover]} plays pit {pit}{taken}\n{engine.render(board)}")
    return _finish(moves, board, captured, rules, seed, (south, north), say)


def _ask_move(position: engine.Position, ask: Callable[[str], str], say: Callable[[str], None]) -> int:
    name = PLAYER_NAMES[position.mover]
    choices = " ".join(str(pit) for pit in position.moves)
    while True:
        try:
            text = ask(f"{name} to move, pit ({choices}, q to quit): ").strip().lower()
        except EOFError:
            raise Abandoned from None
        if text in QUIT:
            raise Abandoned
        if not text.isdigit():
            say(f"{text!r} is not a pit: type one of {choices}")
        elif int(text) not in position.moves:
            say(f"pit {text} is not a legal move now; the legal pits are {choices}")
        else:
            return int(text)


def _finish(
    moves: list[int],
    board: int,
    captured: list[int],
    rules: engine.Rules,
    seed: int,
    specs: tuple[str, str],
    say: Callable[[str], None],
) -> engine.GameRecord:
    south, north = (captured[side] + row_stones(board, side) for side in (0, 1))
    winner = "south" if south > north else "north" if north > south else "draw"
    reason = "ply_cap" if len(moves) == rules.ply_cap else "no_moves"
    result = f"{winner.capitalize()} wins" if winner != "draw" else "Draw"
    say(f"\n{result} {south}-{north} after {len(moves)} plies ({reason})")
    return engine.GameRecord(tuple(moves), winner, south, north, len(moves), reason, {}, seed, specs[0], specs[1], rules.name)
