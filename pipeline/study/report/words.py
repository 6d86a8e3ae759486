"""The report's fixed words: the game in brief, each strategy and each rule event in plain words.

The facts are RULES.md's (the repository's rules page); each strategy's words are its own
(engine.players.base.EngineStrategy.words); a report names every event by what it means, never by
its column name alone.
"""

from __future__ import annotations

import engine

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

# Every rule event in words (RULES.md: Rule events), for the glossary and the tables.
EVENTS = {
    "feeding_active": "a turn starts with the opponent's row empty (under the feeding rule, the mover must then feed it)",
    "feeding_forced": "the feeding rule took away at least one move that was otherwise legal",
    "feeding_lapsed": "feeding was due but no move could feed, so the duty lapsed and a move was played anyway",
    "grand_slam_blocked": "a move was banned because it would have captured every stone left in the opponent's row",
    "first_move_forfeit": "the game's first move would have captured, and the capture was given up",
    "first_move_forfeit_stones": "the stones that given-up first capture would have taken",
    "capture": "a move captured stones",
    "capture_stones": "stones captured",
    "capture_pits": "pits emptied by captures (the landing pit and the rest of its chain)",
    "capture_own_row_stones": "captured stones taken from the mover's own row",
    "capture_opponent_row_stones": "captured stones taken from the opponent's row",
    "singleton_end": "the game ends because every stone left in the mover's row is a single stone, which may not be moved",
    "grand_slam_end": "the game ends because every move left to the mover would be a grand slam",
    "empty_row_end": "the game ends because the mover's row is empty",
}

# Short names for tables and figures (the glossary gives the full meaning).
SHORT = {
    "feeding_active": "opponent's row empty",
    "feeding_forced": "feeding forced a move",
    "feeding_lapsed": "feeding lapsed",
    "grand_slam_blocked": "grand slam banned",
    "first_move_forfeit": "first capture given up",
    "first_move_forfeit_stones": "stones of the first capture",
    "capture": "captures",
    "capture_stones": "stones captured",
    "capture_pits": "pits captured",
    "capture_own_row_stones": "stones from own row",
    "capture_opponent_row_stones": "stones from opponent's row",
    "singleton_end": "ends: only single stones",
    "grand_slam_end": "ends: only grand slams",
    "empty_row_end": "ends: empty row",
}


def describe(spec: str) -> str:
    """What the strategy of a spec string does, in words (engine.players.base.EngineStrategy.words;
    the spec itself for one the engine does not know)."""
    try:
        return engine.players.engine_strategy(spec).words or spec
    except engine.UnknownStrategyError:
        return spec


def event(name: str) -> str:
    """An event's meaning in words; the engine's one-line meaning for an event we have none for."""
    return EVENTS.get(name, engine.game.MEANING.get(name, name))


def short(name: str) -> str:
    """An event's short name for a table or a figure."""
    return SHORT.get(name, name.replace("_", " "))
