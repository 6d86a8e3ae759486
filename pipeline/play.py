"""A game in the terminal: a person (``human``) against any strategy, or two people.

The person is a strategy like any other (``Human``: a ``spec`` and ``choose``), so the game is
played by engine.play_game, the loop of every game, and its record is like any other, events
and all. The terminal only talks: it says who plays which row and which way stones are sown,
shows each move, its captures, the board and the score so far (play_game's ``on_move``), says
in words why a pit cannot be played, and ends with a sentence saying why the game ended and
who won. End of input or ``q`` abandons the game.
"""

from __future__ import annotations

from collections.abc import Callable

import engine
from engine.game import PLAYER_NAMES, illegal_reason, row_stones
from pipeline.analyse import analysis_lines
from pipeline.report.prose import listed

HUMAN = "human"
QUIT = ("q", "quit", "exit")
MAX_PIT_DIGITS = 3  # "007" is pit 7; a longer answer is no pit at all
MAX_SHOWN = 40  # characters of a refused answer quoted back

Ask = Callable[[str], str]
Say = Callable[[str], None]


class Abandoned(Exception):
    """The person left the game (end of input or q) before move ``ply`` was played."""

    def __init__(self, ply: int) -> None:
        super().__init__(f"game abandoned at ply {ply}")
        self.ply = ply


class Human:
    """A person as a strategy: asks ``ask`` for a pit until the answer is a legal move, and
    tells ``say`` why any other answer is not."""

    spec = HUMAN

    def __init__(self, ask: Ask, say: Say) -> None:
        self.ask, self.say = ask, say

    def choose(self, position: engine.Position, rng: engine.Rng) -> int:
        choices = listed(position.moves, "or")
        while True:
            text = self._answer(f"{PLAYER_NAMES[position.mover]}, your move: pit {choices} (q to quit): ", position.ply)
            pit = _pit_number(text)
            if pit is None:
                self.say(f"{_shown(text)} is not a pit: type {choices}, or q to quit.")
            elif pit not in position.moves:
                self.say(f"{_refusal(position, pit)}.")
            else:
                return pit

    def _answer(self, prompt: str, ply: int) -> str:
        try:
            text = self.ask(prompt).strip().lower()
        except EOFError:
            raise Abandoned(ply) from None
        if text in QUIT:
            raise Abandoned(ply)
        return text


def play_terminal(
    south: str,
    north: str,
    *,
    rules: engine.Rules,
    seed: int = 0,
    ask: Ask = input,
    say: Say = print,
    hints: bool = False,
) -> engine.GameRecord | None:
    """Play one game through engine.play_game, asking ``ask`` for each human's moves and telling
    ``say`` what happens (with ``hints``, every legal move's value, value lost and remoteness
    before each move: pipeline.analyse); the game's record, or None when the game is abandoned."""
    players = [Human(ask, say) if spec == HUMAN else engine.make_strategy(spec) for spec in (south, north)]
    for line in opening(south, north, rules):
        say(line)
    say(f"\n{engine.render(engine.start_board(rules))}")
    if hints:
        say("\n".join(analysis_lines(engine.start_board(rules), 0, 0, rules, picture=False)))
    scorer = _Scorer(say, hints)
    try:
        record = engine.play_game(players[0], players[1], rules=rules, seed=seed, on_move=scorer.show)
    except Abandoned as left:
        say(f"\nGame abandoned before move {left.ply + 1}.")
        return None
    say(f"\n{ending(record, rules)}")
    return record


def opening(south: str, north: str, rules: engine.Rules) -> list[str]:
    """Who plays which row, which way stones are sown and how the game is scored."""
    rows = ("South, the bottom row (pits 0, 1 and 2)", "North, the top row (pits 3, 4 and 5)")
    if (south == HUMAN) != (north == HUMAN):
        you, other = (0, 1) if south == HUMAN else (1, 0)
        sides = f"You play {rows[you]}; {(south, north)[other]} plays {rows[other]}."
    elif south == HUMAN:
        sides = f"Two players: {rows[0]}, and {rows[1]}."
    else:
        sides = f"{south} plays {rows[0]}; {north} plays {rows[1]}."
    first = "back into the pit it was taken from" if rules.sow_origin else "into the next pit"
    return [
        f"{sides} South moves first.",
        "Stones are sown counter-clockwise, one a pit: left to right along South's row (0, 1, 2), "
        f"then right to left along North's row (3, 4, 5), and round again. The first stone goes {first}.",
        "A player scores the stones it captures and, when the game ends, the stones left in its own row; "
        f"the most of the {rules.total_stones} stones wins.",
    ]


def ending(record: engine.GameRecord, rules: engine.Rules) -> str:
    """Why the game ended and who won, in two sentences."""
    name, opponent = PLAYER_NAMES[record.plies % 2], PLAYER_NAMES[(record.plies + 1) % 2]
    end = next((event for event in engine.END_EVENTS if record.events.get(event)), None)
    if end == "singleton_end" and rules.min_stones_to_play == 2:
        why = f"{name} has only single stones left"
    elif end == "singleton_end":
        why = f"{name} has no pit with {rules.min_stones_to_play} or more stones"
    elif end == "grand_slam_end":
        why = f"every move {name} could make would capture all of {opponent}'s stones, which is not allowed"
    elif end == "empty_row_end":
        why = f"{name} has no stones left in its row"
    else:
        why = f"the limit of {rules.ply_cap} moves is reached"
    south, north = record.score_south, record.score_north
    if south == north:
        result = f"It is a draw, {south} to {north}"
    else:
        result = f"{'South' if south > north else 'North'} wins {max(south, north)} to {min(south, north)}"
    return f"{why[0].upper()}{why[1:]}; the game ends. {result} after {record.plies} moves."


class _Scorer:
    """Tells ``say`` each move as play_game reports it, and keeps the stones each side captured."""

    def __init__(self, say: Say, hints: bool = False) -> None:
        self.say, self.hints = say, hints
        self.captured = [0, 0]

    def show(self, position: engine.Position, pit: int) -> None:
        result = engine.apply_move(position.board, position.mover, pit, position.ply, position.rules)
        self.captured[position.mover] += result.captured
        totals = [self.captured[side] + row_stones(result.board, side) for side in (0, 1)]
        self.say(
            f"\nMove {position.ply + 1}: {PLAYER_NAMES[position.mover]} plays pit {pit}{_what_it_did(result)}.\n"
            f"{engine.render(result.board)}\n"
            f"Captured: South {self.captured[0]}, North {self.captured[1]}. "
            f"If the game ended now: South {totals[0]}, North {totals[1]}."
        )
        if self.hints and engine.legal_moves(result.board, 1 - position.mover, position.ply + 1, position.rules):
            self.say("\n".join(analysis_lines(result.board, 1 - position.mover, position.ply + 1, position.rules, picture=False)))


def _what_it_did(result: engine.MoveResult) -> str:
    if result.captured:
        pits = listed(sorted(result.captured_pits))
        plural = "s" * (len(result.captured_pits) > 1)
        return f" and captures {result.captured} stones from pit{plural} {pits}"
    forfeited = result.events["first_move_forfeit_stones"]
    if forfeited:
        return f"; the first move of the game captures nothing, so the {forfeited} stones it would take stay on the board"
    return ""


def _pit_number(text: str) -> int | None:
    """The pit a typed answer names: ASCII digits only (str.isdigit takes "²", which int() refuses),
    and few of them (int() refuses 5,000 digits, and no pit has more than one)."""
    if not (text.isascii() and text.isdigit()) or len(text) > MAX_PIT_DIGITS:
        return None
    return int(text)


def _shown(text: str) -> str:
    """An answer as the refusal quotes it: cut short, so a pasted page stays one line."""
    return repr(text) if len(text) <= MAX_SHOWN else f"{text[:MAX_SHOWN]!r}..."


def _refusal(position: engine.Position, pit: int) -> str:
    reason = illegal_reason(position.board, position.mover, pit, position.ply, position.rules)
    return f"{PLAYER_NAMES[position.mover]} cannot play pit {pit}: {reason}"
