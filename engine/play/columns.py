"""Many finished games as columns (GameBatch): what engine.play_batch returns, one entry a game
for the game's columns (GAME_COLUMNS), its moves laid end to end with their offsets, its event
counts by name; ``record(i)`` gives game i as engine.play_game's GameRecord would, and
``concatenate`` joins the batches of one pairing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.game import WINNERS, whole_number
from engine.play.game import GameRecord

END_REASONS = ("no_moves", "ply_cap")  # GameBatch.end_reason holds the index of one of these
GAME_COLUMNS = ("seeds", "winner", "score_south", "score_north", "plies", "end_reason")  # one entry a game


@dataclass(frozen=True, eq=False)
class GameBatch:
    """Finished games as columns, one entry per game.

    ``winner`` and ``end_reason`` hold indices into engine.game.scoring.WINNERS and END_REASONS; the moves of game
    i are ``moves[move_offsets[i]:move_offsets[i + 1]]`` (absolute pits, South's first);
    ``events`` holds a count array per name of engine.EVENTS.
    """

    seeds: np.ndarray  # uint64
    winner: np.ndarray  # uint8
    score_south: np.ndarray  # int16
    score_north: np.ndarray  # int16
    plies: np.ndarray  # int16
    end_reason: np.ndarray  # uint8
    moves: np.ndarray  # uint8
    move_offsets: np.ndarray  # int64, len(self) + 1 entries
    events: dict[str, np.ndarray]  # uint16
    south: str  # strategy specs
    north: str
    rules: str  # the rule set's name

    def __len__(self) -> int:
        return len(self.seeds)

    def record(self, i: int) -> GameRecord:
        """Game i as the GameRecord that engine.play_game makes of it."""
        game = whole_number(i)
        if game is None or not 0 <= game < len(self):
            raise ValueError(f"i is a game of the batch, a whole number from 0 to {len(self) - 1}, not {i!r}")
        start, stop = self.move_offsets[game : game + 2].tolist()
        return GameRecord(
            tuple(self.moves[start:stop].tolist()),
            WINNERS[self.winner[game]],
            int(self.score_south[game]),
            int(self.score_north[game]),
            int(self.plies[game]),
            END_REASONS[self.end_reason[game]],
            {name: int(counts[game]) for name, counts in self.events.items()},
            int(self.seeds[game]),
            self.south,
            self.north,
            self.rules,
        )

    def records(self) -> Iterator[GameRecord]:
        return (self.record(i) for i in range(len(self)))

    def rows(self, start: int = 0, stop: int | None = None) -> GameBatch:
        """Games start .. stop - 1 (as ``range(len(self))[start:stop]``), as a batch of their
        own whose columns are views of these."""
        start, stop, _ = slice(start, stop).indices(len(self))
        stop = max(start, stop)
        if (start, stop) == (0, len(self)):
            return self
        offsets = self.move_offsets[start : stop + 1]
        return dataclasses.replace(
            self,
            **{name: getattr(self, name)[start:stop] for name in GAME_COLUMNS},
            moves=self.moves[offsets[0] : offsets[-1]],
            move_offsets=offsets - offsets[0],
            events={name: counts[start:stop] for name, counts in self.events.items()},
        )


def concatenate(batches: Sequence[GameBatch]) -> GameBatch:
    """The games of ``batches`` one after the other, as one batch; they must be games of one
    pairing (the same specs and rule set)."""
    if not batches:
        raise ValueError("concatenate needs at least one GameBatch")
    first = batches[0]
    for batch in batches[1:]:
        if (batch.south, batch.north, batch.rules) != (first.south, first.north, first.rules):
            raise ValueError(
                f"cannot concatenate games of {batch.south} vs {batch.north} ({batch.rules}) to games of "
                f"{first.south} vs {first.north} ({first.rules}): a GameBatch holds one pairing"
            )
    if len(batches) == 1:
        return first
    offsets, moves_before = [np.zeros(1, dtype=np.int64)], 0
    for batch in batches:
        offsets.append(batch.move_offsets[1:] + moves_before)
        moves_before += int(batch.move_offsets[-1])
    columns: dict[str, Any] = {name: np.concatenate([getattr(batch, name) for batch in batches]) for name in GAME_COLUMNS}
    return dataclasses.replace(
        first,
        **columns,
        moves=np.concatenate([batch.moves for batch in batches]),
        move_offsets=np.concatenate(offsets),
        events={name: np.concatenate([batch.events[name] for batch in batches]) for name in first.events},
    )
