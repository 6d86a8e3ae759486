"""The report's fixed words: the game in brief, each strategy and each rule event in plain words.

The facts are RULES.md's (the repository's rules page); each strategy's words are its own
(engine.players.base.EngineStrategy.words), each event's are declared with it (engine.game.Event);
a report names every event by what it means, never by its column name alone.
"""

from __future__ import annotations

import engine
from engine.game import EVENT_BY_NAME

# The game, for a reader who has never seen it (RULES.md: The game and its sources, A turn,
# Restrictions on the legal moves, End of the game).
GAME = (
    "Modiar is a mancala that children play in the villages around Tangier, in northern Morocco, "
    "on six hollows dug in the ground (rules recorded by Jordi Climent in 2012, Mancala World). "
    "Two rows of three pits, no stores; each player owns the row nearer to them, and every pit "
    "starts with 7 stones (42 in all). South moves first.",
    "A move lifts every stone of one of the mover's pits and sows them one by one counter-clockwise, "
    "the first stone back into the pit it came from. If the last stone lands in a pit that then "
    "holds 2, 4 or 6 stones, the mover captures them, and goes on capturing backwards, pit by pit, "
    "while the pits hold 2, 4 or 6, from either row. A single stone may not be moved; the capture of "
    "the game's first move is given up; a move that would capture every stone left in the opponent's "
    "row (a grand slam) is banned; and a player whose opponent's row is empty must feed it if any "
    "move can.",
    "The game ends when the player to move has no legal move; each player then adds the stones of "
    "its own row to those it captured, and the larger total wins (21 to 21 is a draw). A game still "
    "going after 400 moves (plies) is stopped there and scored the same way.",
)


def describe(spec: str) -> str:
    """What the strategy of a spec string does, in words (engine.players.base.EngineStrategy.words;
    the spec itself for one the engine does not know)."""
    try:
        return engine.players.engine_strategy(spec).words or spec
    except engine.UnknownStrategyError:
        return spec


def event(name: str) -> str:
    """An event's meaning in words, as its declaration gives it (engine.game.Event.words)."""
    found = EVENT_BY_NAME.get(name)
    return found.words if found is not None else name


def short(name: str) -> str:
    """An event's short name for a table or a figure (engine.game.Event.short)."""
    found = EVENT_BY_NAME.get(name)
    return found.short if found is not None else name.replace("_", " ")
