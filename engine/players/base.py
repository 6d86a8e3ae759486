"""What every strategy builds on: the position it sees, the protocol it meets, the table strategy.

A strategy has a ``spec`` (the string that names it, stored in records) and a method
``choose(position, rng) -> pit`` that returns an absolute pit among ``position.moves``.
Strategies whose choice depends only on the options of the turn and one random draw are
*table strategies*: they also offer ``pick(options, draw) -> index``, which the game loop
calls directly; their ``choose`` takes one draw and calls ``pick``, so both ways play the
same game.

This module is a leaf: it imports only the board, the rules, the moves and the random
stream, so that the checked API (``engine.game.api``), the strategies (``engine.players.strategies``,
``engine.players.search``) and the game loops can all stand on it. Strategies are made by name in
``engine.players.registry``.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from engine.game import ROW, Option, Position, Rng, Rules


class PolicyValues(Protocol):
    """The value of each move of a set of positions with so many plies left (engine.players.values)."""

    spec: str  # the family's name in cache files: the strategy spec without its rule
    far_from: int

    def q(self, captured: np.ndarray, child: np.ndarray, plies_left: int) -> np.ndarray: ...


@runtime_checkable
class Strategy(Protocol):
    spec: str

    def choose(self, position: Position, rng: Rng) -> int: ...


class EngineStrategy:
    """What the engine's own strategies say about themselves, so that no other module has to
    know them by class or by name: the runner, the progress bars and estimates, the exact code
    and the reports ask these (a caller's strategy, meeting only ``Strategy``, has none).

    ``needs_solution``: it reads the strong solution (engine.solve); ``has_policy_table``:
    engine.players.policy builds its table (its values for every position: the engine's strategies
    but mcts, which ``searches`` as it plays; a caller's subclass has none); ``wide``: it may
    play every legal move, so its pairings reach every position; ``family``: its group on the
    ladder's figures (None: its own spec); ``words``: what it does, in plain words, for the
    reports. What it costs, it says in its own units of work (mcts its playouts, alphabeta its
    depth), which the pipeline prices (pipeline/costs.toml).

    A strategy with a policy table gives its values (``policy_values``: engine.players.values) and the
    name of their family (``values_spec``: the dials of perfect share perfect's). A subclass
    made with ``name="..."`` is registered under that name (engine.players.registry): a strategy is
    its class and nothing else."""

    spec: str
    needs_solution = False
    has_policy_table = False
    searches = False
    wide = False
    family: str | None = None
    words = ""
    rule: Any = None  # how it chooses among its values (engine.players.choice.Rule); None: a best one, ties at random

    def __init_subclass__(cls, name: str = "", **rest: object) -> None:
        super().__init_subclass__(**rest)
        if name:
            if name in REGISTERED:
                raise ValueError(f"a strategy named {name!r} is registered already: {REGISTERED[name].__name__}")
            REGISTERED[name] = cls

    def choose(self, position: Position, rng: Rng) -> int:
        """An absolute pit among ``position.moves``."""
        raise NotImplementedError

    def policy_values(self, tables: Any, rules: Rules) -> PolicyValues | None:
        """The values its policy table folds, from the rule set's position tables
        (engine.tables.positions.PositionTables, which this module stands below); None: it has none."""
        return None

    def values_spec(self) -> str:
        return self.spec

    def __repr__(self) -> str:
        return f"<strategy {self.spec}>"


# Every strategy made by name, by the name before its parameters (filled by EngineStrategy's
# subclasses as they are defined; engine.players.registry reads it).
REGISTERED: dict[str, type[EngineStrategy]] = {}


class OneDrawStrategy(EngineStrategy):
    """A strategy that picks among the options of a turn with exactly one random draw (random,
    greedy), which engine.play.game's fast loop plays without a Position."""

    spec = "one-draw"
    uniform = False  # True: pick is exactly (draw * len(options)) >> 32, which the game loop inlines

    def pick(self, options: tuple[Option, ...], draw: int) -> int:
        """The index of the chosen option, given one 32-bit draw."""
        raise NotImplementedError

    def choose(self, position: Position, rng: Rng) -> int:
        index = self.pick(position.options, rng.next_u32())
        return position.options[index].pit + ROW * position.mover
