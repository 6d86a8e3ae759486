"""One chunk of engine.play_batch: up to engine.play.batch.CHUNK_GAMES games moving in lockstep on NumPy arrays.

Each ply every unfinished game of the chunk (its slot) moves by a few whole-array operations and
four gathers from the tables of engine.play.tables: random and greedy pick by the position's
class, every other table strategy by its policy table (engine.players.policy), a searching one (mcts)
by engine.play.mcts's searches. The draws come from each game's own stream (engine.game.rng, on
arrays). Pits are kept in blocks of SEGMENT_PLIES plies, and the finished games are dropped
once they fill a third of the slots (DROP_WHEN).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from engine.game import GAMMA, ROW, SEED_SALT, IllegalMoveError, final_score, mix64_words, sixths
from engine.play.columns import GameBatch
from engine.play.tables import (
    CAPTURE_BITS,
    CAPTURE_MASK,
    FLAG_BITS,
    FLAG_EVENTS,
    FLAG_SHIFT,
    FLUSH_PLIES,
    MOVES_SHIFT,
    NO_MOVE,
    Derived,
)
from engine.players import MctsStrategy, PolicyTable
from engine.tables import END_CODES, PositionTables

SEGMENT_PLIES = 64  # pits are kept in (plies, games) blocks of at most this many plies
DROP_WHEN = 3  # a chunk drops its finished games once they fill a third of its slots
HIGH = 1 if sys.byteorder == "little" else 0  # the high half of a uint64 seen as two uint32


@runtime_checkable
class BatchStrategy(Protocol):
    """A vectorised strategy: one pit per game from the mover's position and one 32-bit draw.

    ``pick_batch(tables, positions, draws, legal)`` gets the movers' position indices (int64,
    each in its mover's view: the row is pits 0, 1, 2), the games' draws of this ply (uint32:
    one per turn, as a table strategy of engine.players.strategies takes) and the (n, 3) bool mask of
    the legal pits (on the first move, those of engine.tables.first_move); it returns one
    legal pit (0, 1 or 2, the mover's view) per game.
    """

    spec: str

    def pick_batch(self, tables: PositionTables, positions: np.ndarray, draws: np.ndarray, legal: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class Player:
    spec: str
    greedy: bool  # built in: uniform among the greedy pits (True) or among the legal pits
    policy: BatchStrategy | None  # a vectorised strategy of the caller's
    table: PolicyTable | None = None  # or one of the engine's table strategies (engine.players.policy)
    search: MctsStrategy | None = None  # or mcts, whose moves engine.play.mcts finds first
    script: np.ndarray | None = None  # then the pits of a chunk's games, (games, plies), mover's view


class _Slots:
    """The working arrays of a chunk's games in play: slot j holds game ids[j].

    ``state`` is each game's SplitMix64 state, ``word`` its last 64-bit word and ``sixths``
    the sixths of that word's two draws (see _pick_table), in memory order. The scratch
    arrays are made once per chunk and sliced as slots are dropped.
    """

    def __init__(self, derived: Derived, state: np.ndarray, word: np.ndarray, position: np.ndarray) -> None:
        n = len(state)
        self.derived = derived
        self.ids = np.arange(n, dtype=np.int64)
        self.state, self.word, self.position = state, word, position
        self.counters = np.zeros(n, dtype=np.uint64)
        self.scratch = np.empty(2 * n, dtype=np.uint64)
        self.sixths = sixths(word, np.empty(2 * n, dtype=np.uint8), self.scratch)
        self.info = np.empty(n, dtype=np.uint8)
        self.key = np.empty(n, dtype=np.uint16)
        self.pit = np.empty(n, dtype=np.uint8)
        self.index = np.empty(n, dtype=np.int64)
        self.step = np.empty(n, dtype=derived.step.dtype)
        self.code = np.empty(n, dtype=derived.step.dtype)
        self.units = np.empty(n, dtype=np.uint64)

    def __len__(self) -> int:
        return len(self.ids)

    def look(self) -> np.ndarray:
        """The class of each slot's position (NumPy's clip mode skips the index checks: the
        indices are in range)."""
        info = self.info[: len(self)]
        return np.take(self.derived.info, self.position, out=info, mode="clip")

    def draw(self) -> None:
        """The next word of every game's stream, and the sixths of its two draws."""
        m = len(self)
        self.state += np.uint64(GAMMA)
        mix64_words(self.state, self.word[:m], self.scratch[:m])
        sixths(self.word[:m], self.sixths[: 2 * m], self.scratch[: 2 * m])

    def pick(self, greedy: bool, half: int, out: np.ndarray) -> None:
        """The built-in strategies' pits: one lookup by class and sixth."""
        m = len(self)
        np.left_shift(self.info[:m], 3, out=self.key[:m], dtype=np.uint16)
        np.bitwise_or(self.key[:m], self.sixths[half : 2 * m : 2], out=self.key[:m])
        np.take(self.derived.picks[greedy], self.key[:m], out=out, mode="clip")

    def draws(self, half: int) -> np.ndarray:
        """The 32-bit draws of this ply (``half`` of each word)."""
        return np.ascontiguousarray(self.word[: len(self)].view(np.uint32)[half::2])

    def move(self, picked: np.ndarray, side: int) -> None:
        """Play the picked pits: the child and the capture code come in one gather, then the
        turn's events as counter units looked up by (capture code, class)."""
        m, d = len(self), self.derived
        np.bitwise_and(picked, 3, out=self.pit[:m])  # a finished game plays NO_MOVE & 3, in place
        np.multiply(self.position, 3, out=self.index[:m])
        np.add(self.index[:m], self.pit[:m], out=self.index[:m])
        np.take(d.step, self.index[:m], out=self.step[:m], mode="clip")
        np.bitwise_and(self.step[:m], (1 << d.code_shift) - 1, out=self.position, casting="unsafe")
        np.right_shift(self.step[:m], d.code_shift, out=self.code[:m])
        np.left_shift(self.code[:m], 8, out=self.code[:m])
        np.bitwise_or(self.code[:m], self.info[:m], out=self.code[:m])
        np.take(d.events[side], self.code[:m], out=self.units[:m], mode="clip")
        np.add(self.counters, self.units[:m], out=self.counters)

    def keep(self, kept: np.ndarray) -> None:
        """Drop every slot but ``kept``."""
        m = len(self)
        self.ids, self.position, self.counters, self.state = (
            a[kept] for a in (self.ids, self.position, self.counters, self.state)
        )
        self.word[: len(kept)] = self.word[:m][kept]
        # A word's two sixths go together, as one uint16.
        self.sixths.view(np.uint16)[: len(kept)] = self.sixths.view(np.uint16)[:m][kept]
        self.info[: len(kept)] = self.info[:m][kept]


class Chunk:
    """Up to CHUNK_GAMES games played in lockstep, one ply at a time. The pits played
    between two drops of finished games form a segment: a (plies, slots) block, kept with
    the slots' game ids and its first ply."""

    def __init__(
        self, derived: Derived, tables: PositionTables, ply_cap: int, players: tuple[Player, Player], seeds: np.ndarray
    ) -> None:
        self.derived = derived
        self.tables = tables
        self.ply_cap = ply_cap  # the game's: the tables serve every cap
        self.players = players
        self.seeds = seeds
        n = len(seeds)
        self.final = np.full(n, derived.start, dtype=np.int64)  # the last position
        self.counters = np.zeros(n, dtype=np.uint64)
        self.flushed = np.zeros((n, len(FLAG_EVENTS) + 1), dtype=np.int64)  # flags and moves moved out
        self.first = np.zeros(n, dtype=np.int64)  # the index of the first move among the options
        self.flushes = 0
        self.segments: list[tuple[int, np.ndarray, np.ndarray]] = []

    def play(self, batch: GameBatch, offset: int) -> np.ndarray:
        """Play the games, write their columns into ``batch`` from ``offset``; return their moves."""
        if len(self.derived.first_pits):
            self._play(self._first_ply())
        plies = self._plies()
        self._write(batch, slice(offset, offset + len(self.seeds)), plies)
        return self._moves(plies)

    def _first_ply(self) -> _Slots:
        """Ply 0, from the options of the first move: the high half of every game's first word."""
        state = self.seeds ^ np.uint64(SEED_SALT)
        mix64_words(state.copy(), state, np.empty_like(state))
        state += np.uint64(GAMMA)
        word = mix64_words(state, np.empty_like(state), np.empty_like(state))
        self.first = self._first_choice(np.ascontiguousarray(word.view(np.uint32)[HIGH::2]))
        return _Slots(self.derived, state, word, self.derived.first_child[self.first])

    def _play(self, slots: _Slots) -> None:
        """Every later ply. A game that has finished picks NO_MOVE; once they are a third of the
        slots (or a segment is full), their results are kept and their slots dropped."""
        ply_cap = self.ply_cap
        segment = np.empty((SEGMENT_PLIES, len(slots)), dtype=np.uint8)
        segment_start = ply = 1
        while ply < ply_cap:
            m = len(slots)
            row = ply - segment_start
            half = HIGH if ply % 2 == 0 else 1 - HIGH
            slots.look()
            if ply % 2 == 0:
                slots.draw()
            picked = segment[row, :m]
            self._pick(slots, ply, half, picked)
            finished = m - np.count_nonzero(picked != NO_MOVE)
            if DROP_WHEN * finished >= m or row == SEGMENT_PLIES - 1:
                self.segments.append((segment_start, slots.ids, segment[: row + 1, :m].copy()))
                kept = self._drop_finished(slots, picked)
                if not len(kept):
                    return
                slots.keep(kept)
                segment[0, : len(kept)] = picked[kept]
                segment_start, picked = ply, segment[0, : len(kept)]
            slots.move(picked, ply % 2)
            ply += 1
            if ply % FLUSH_PLIES == 0:
                self._flush(slots)
        self.segments.append((segment_start, slots.ids, segment[: ply - segment_start, : len(slots)].copy()))
        self._drop_finished(slots, np.full(len(slots), NO_MOVE, dtype=np.uint8))

    def _pick(self, slots: _Slots, ply: int, half: int, out: np.ndarray) -> None:
        player = self.players[ply % 2]
        if player.script is not None:
            out[:] = player.script[slots.ids, ply]
            return
        if player.table is not None:
            classes = player.table.classes_at(slots.position, self.ply_cap - ply)
            out[:] = player.table.pits(classes, slots.draws(half))
            return
        if player.policy is None:
            slots.pick(player.greedy, half, out)
            return
        legal = self.derived.class_legal[slots.info[: len(slots)]]
        playing = np.flatnonzero(legal.any(axis=1))
        out[:] = NO_MOVE
        draws = slots.draws(half)[playing]
        out[playing] = _checked_pits(player, self.tables, slots.position[playing], draws, legal[playing])

    def _first_choice(self, draws: np.ndarray) -> np.ndarray:
        """Each game's first move, as an index among the options, from the draws of ply 0."""
        d = self.derived
        player = self.players[0]
        option = np.zeros(ROW, dtype=np.int64)
        option[d.first_pits] = np.arange(len(d.first_pits))
        if player.script is not None:
            return option[player.script[:, 0]]
        if player.table is not None:
            return option[player.table.pits(np.full(len(draws), player.table.first), draws)]
        if player.policy is not None:
            legal = np.zeros((len(draws), ROW), dtype=bool)
            legal[:, d.first_pits] = True
            positions = np.full(len(draws), d.start, dtype=np.int64)
            return option[_checked_pits(player, self.tables, positions, np.ascontiguousarray(draws), legal)]
        options = np.arange(len(d.first_pits))
        if player.greedy:
            captured = d.first_events["capture_stones"]
            options = np.flatnonzero(captured == captured.max())
        return options[(draws.astype(np.uint64) * np.uint64(len(options))) >> np.uint64(32)]

    def _drop_finished(self, slots: _Slots, picked: np.ndarray) -> np.ndarray:
        """Keep the last position and the counter of the games that picked NO_MOVE; return the
        other slots."""
        done = np.flatnonzero(picked == NO_MOVE)
        self.final[slots.ids[done]] = slots.position[done]
        self.counters[slots.ids[done]] = slots.counters[done]
        return np.flatnonzero(picked != NO_MOVE)

    def _flush(self, slots: _Slots) -> None:
        """Move the flag and move counts out of the counters before they can overflow."""
        self.flushes += 1
        for k in range(len(FLAG_EVENTS) + 1):
            self.flushed[slots.ids, k] += _field(slots.counters, FLAG_SHIFT + FLAG_BITS * k, FLAG_BITS)
        slots.counters &= np.uint64(CAPTURE_MASK)

    def _plies(self) -> np.ndarray:
        if not len(self.derived.first_pits):
            return np.zeros(len(self.seeds), dtype=np.int64)
        return 1 + (self.counters >> np.uint64(MOVES_SHIFT)).astype(np.int64) + self.flushed[:, -1]

    def _write(self, batch: GameBatch, games: slice, plies: np.ndarray) -> None:
        """The chunk's columns: events, scores, winner, end reason."""
        ended = plies < self.ply_cap
        for name, counts in self._events(ended).items():
            batch.events[name][games] = counts
        winner, score_south, score_north = self._scores(plies)
        batch.seeds[games] = self.seeds
        batch.score_south[games] = score_south
        batch.score_north[games] = score_north
        batch.winner[games] = winner
        batch.plies[games] = plies
        batch.end_reason[games] = ~ended

    def _events(self, ended: np.ndarray) -> dict[str, np.ndarray]:
        """Each event's counts (uint16): the counters, the flushed flags, the first move, the end."""
        d = self.derived
        capture, pits, own, south, north = (_field(self.counters, CAPTURE_BITS * k, CAPTURE_BITS) for k in range(5))
        counts = {"capture": capture, "capture_pits": pits, "capture_own_row_stones": own, "capture_stones": south + north}
        counts["capture_opponent_row_stones"] = counts["capture_stones"] - own
        for k, name in enumerate(FLAG_EVENTS):
            counts[name] = _field(self.counters, FLAG_SHIFT + FLAG_BITS * k, FLAG_BITS)
            if self.flushes:
                counts[name] += self.flushed[:, k].astype(np.uint16)
        end_code = np.where(ended, d.class_end[d.info[self.final]], 0)
        for name, code in END_CODES.items():
            counts[name] = (end_code == code).astype(np.uint16)
        for name, options in d.first_events.items():
            column = counts.setdefault(name, np.zeros(len(ended), dtype=np.uint16))
            if len(options) and options.any():
                column += options[self.first].astype(np.uint16) if np.ptp(options) else np.uint16(options[0])
        return counts

    def _scores(self, plies: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each game's engine.game.scoring.final_score, from its captures and the rows of its last
        position; South is the mover at the end after an even number of plies."""
        d = self.derived
        south = _field(self.counters, CAPTURE_BITS * 3, CAPTURE_BITS).astype(np.int16)
        north = _field(self.counters, CAPTURE_BITS * 4, CAPTURE_BITS).astype(np.int16)
        if len(d.first_pits):
            south += d.first_events["capture_stones"][self.first].astype(np.int16)
        on_board = d.rules.total_stones - south - north
        mover_row = d.mover_row[self.final].astype(np.int16)
        south_row = np.where(plies % 2 == 0, mover_row, on_board - mover_row)
        return final_score(south, north, south_row, on_board - south_row)

    def _moves(self, plies: np.ndarray) -> np.ndarray:
        """The pits played, game after game, as absolute pits (North's are the mover's pit + 3).

        Segments go from the last ply to the first: the pit a finished game picked at ply p
        lands in a later game's moves, at a ply below p, which is written afterwards.
        """
        offsets = np.zeros(len(plies) + 1, dtype=np.int64)
        np.cumsum(plies, out=offsets[1:])
        moves = np.zeros(offsets[-1] + self.ply_cap + 1, dtype=np.uint8)
        index = np.empty(len(plies), dtype=np.int64)
        for start, ids, pits in reversed(self.segments):
            base = offsets[ids]
            pits[1 - start % 2 :: 2] += ROW  # North's rows
            for row in range(len(pits) - 1, -1, -1):
                np.add(base, start + row, out=index[: len(ids)])
                moves[index[: len(ids)]] = pits[row]
        played = plies > 0
        moves[offsets[:-1][played]] = self.derived.first_pits[self.first[played]]
        return moves[: offsets[-1]]


def _field(counters: np.ndarray, shift: int, bits: int) -> np.ndarray:
    """One field of the packed counters, as uint16."""
    return (counters >> np.uint64(shift)).astype(np.uint16) & np.uint16((1 << bits) - 1)


def _checked_pits(
    player: Player, tables: PositionTables, positions: np.ndarray, draws: np.ndarray, legal: np.ndarray
) -> np.ndarray:
    """The pits a BatchStrategy picks, each checked against the legal ones."""
    assert player.policy is not None
    pits = np.asarray(player.policy.pick_batch(tables, positions, draws, legal))
    if pits.shape != positions.shape or not np.issubdtype(pits.dtype, np.integer):
        raise ValueError(
            f"strategy {player.spec!r} must return one integer pit per game, not a {pits.dtype} array of shape {pits.shape}"
        )
    bad = np.flatnonzero((pits < 0) | (pits >= ROW) | ~legal[np.arange(len(pits)), np.clip(pits, 0, ROW - 1)])
    if len(bad):
        i = bad[0]
        raise IllegalMoveError(
            f"strategy {player.spec!r} played pit {pits[i]} (the mover's view) in position {positions[i]}, "
            f"not one of the legal pits {np.flatnonzero(legal[i]).tolist()}"
        )
    return pits.astype(np.uint8)
