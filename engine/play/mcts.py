"""Batched MCTS: the searches of many games advanced in lockstep on NumPy arrays.

``search_games(tables, players, seeds)`` plays games in which one player or both is
``mcts(playouts=n)`` (engine.players.search.MctsStrategy) and returns the pits they play, game for
game those of engine.play_game with the same seeds: the same trees, the same draws, the same
moves. engine.play_batch turns the pits into a GameBatch (its events, scores and ends).

The scalar MctsStrategy is the definition; this module repeats it on arrays. Every game of a
chunk is at the same ply, and every game whose mcts player is to move searches at once: each
of its ``n`` playouts is one descent of every game's tree, in a few whole-array steps per
level (UCB1 or an untried child, as the scalar code picks them), one expansion, a random
playout from every new leaf at once, and the backup of each level's (node, child) pairs.
A tree is a block of preallocated arrays, one row of three children per node (a position has
at most three moves), made afresh for each move as the scalar code does:

    options[game, node]          how many legal moves the node's position has (0: the end)
    child_of[game, node, k]      the position after its k-th legal move (mover's view)
    captured[game, node, k]      the stones it captures
    kid[game, node, k]           the node of that child, 0 until expanded (0 is the root)
    visits, rewards[game, node, k]   a move that is not legal has 1 visit and rewards -inf, so
                                 it is never untried and its UCB1 bound is -inf
    total[game, node]            the node's visits: the sum of its children's

Draws come from each game's stream by its count of draws so far (engine.game.rng: draw j is a half
of word j // 2 + 1), so a game's draws are those of the scalar game whatever the others do.
UCB1 is computed as the scalar code computes it: the logarithms of visit totals are Python's
math.log (a table), the rest IEEE divisions, square roots and sums, so no choice differs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from engine.game import GAMMA, MASK32, ROW, SEED_SALT, Rules, mix64_words
from engine.players import NO_MOVE, UCT_EXPLORATION, MctsStrategy, PolicyTable
from engine.store import forget_with
from engine.tables import PositionTables, first_moves, row_stones

TREE_BYTES = 1 << 29  # the trees of one chunk's searches: the chunk is cut to fit
NODE_BYTES = 1 + 4 + 3 * (4 + 1 + 4 + 4 + 8)  # options, total, child_of, captured, kid, visits, rewards


def tree_bytes(playouts: int) -> int:
    """The bytes of one game's tree for a search of ``playouts`` playouts."""
    return (playouts + 1) * NODE_BYTES


# For a mask of legal pits (bit p for pit p): the pits in order, then the illegal ones.
_ORDER = np.array([[p for p in range(ROW) if m >> p & 1] + [p for p in range(ROW) if not m >> p & 1] for m in range(8)])
_COUNT = np.array([bin(m).count("1") for m in range(8)], dtype=np.int8)
_K = np.arange(3)[:, None]  # a column of child indices: 3 * node + _K are a node's move ids
_ORDER_BY_COLUMN = np.ascontiguousarray(_ORDER.T)  # [k, legal]: the k-th pit of the order
# A new node's children, by its count of legal moves: an illegal one has 1 visit and rewards -inf.
_NEW_VISITS = (np.arange(3)[:, None] >= np.arange(4)).astype(np.int32)
_NEW_REWARDS = np.where(_NEW_VISITS == 1, -np.inf, 0.0)
# _NTH[3 * untried + n]: the child of the n-th set bit (from 0) of a mask of untried children.
_NTH = np.array([([k for k in range(3) if m >> k & 1] + [0, 0, 0])[n] for m in range(8) for n in range(3)], dtype=np.int64)


@dataclass(frozen=True)
class Board:
    """The position tables as flat arrays for the searches and the playouts."""

    rules: Rules
    cap: int  # the game's ply cap (the tables serve every cap)
    child: np.ndarray  # (3 * positions,) int32, -1 where illegal
    captured: np.ndarray  # (3 * positions,) int8
    legal: np.ndarray  # (positions,) uint8: bit p for a legal pit p
    row_difference: np.ndarray  # (positions,) int8: mover's row minus opponent's
    start: int
    first_pits: np.ndarray  # the first move's options (ply 0, the scalar engine's): pits,
    first_child: np.ndarray  # children,
    first_captured: np.ndarray  # and stones captured
    pick: np.ndarray  # (64,) the pit of a uniform choice: pick[8 * legal + sixth], sixth = (6 * draw) >> 32
    draws: np.ndarray  # (64,) uint64: draws[8 * legal] is 1 where a choice among the legal pits takes a draw
    step: np.ndarray  # (3 * positions + 3,) uint64, by 3 * position + pit: 3 * child | captured << 32 |
    # 8 * the child's legal << 40. A position without a move steps (by pit 0, the only one picked)
    # to the sink, 3 * positions, its rows' difference as the capture; the sink stays put.
    sink: int
    log: list[float] = field(default_factory=list)  # math.log(n), grown as needed

    @classmethod
    def of(cls, tables: PositionTables, rules: Rules) -> Board:
        legal = (tables.child >= 0).astype(np.uint8) @ np.array([1, 2, 4], dtype=np.uint8)
        own, opponent = row_stones(tables.index)
        first = first_moves(rules)
        row_difference = (own.astype(np.int16) - opponent).astype(np.int8)
        sink = 3 * tables.size
        moves = tables.child >= 0
        step = np.where(moves, 3 * tables.child.astype(np.int64), sink).astype(np.uint64)
        captured = np.where(moves, tables.captured, row_difference[:, None]).astype(np.int8).view(np.uint8)
        step |= captured.astype(np.uint64) << np.uint64(32)
        step |= np.where(moves, legal[np.maximum(tables.child, 0)], 0).astype(np.uint64) << np.uint64(43)
        step = np.concatenate([step.reshape(-1), np.full(3, sink, dtype=np.uint64)])
        del moves, captured
        return cls(
            rules,
            rules.ply_cap,
            np.ascontiguousarray(tables.child).reshape(-1),
            np.ascontiguousarray(tables.captured).astype(np.int8).reshape(-1),
            legal.astype(np.uint8),
            row_difference,
            first.start,
            first.pits,
            first.children,
            first.captured,
            _pick_table(),
            np.where(np.arange(64) % 8 == 0, _COUNT[np.arange(64) // 8 % 8] > 1, 0).astype(np.uint64),
            step,
            sink,
        )

    def logs(self, most: int) -> np.ndarray:
        if len(self.log) <= most:
            self.log.extend(math.log(n) if n else 0.0 for n in range(len(self.log), 2 * most + 2))
        return np.array(self.log)


def _pick_table() -> np.ndarray:
    """pick[8 * legal + sixth]: a choice among n legal pits is (draw * n) >> 32 (engine.game.rng),
    which is sixth // (6 // n) for n = 1, 2, 3; with one pit the draw is not taken, nor needed."""
    table = np.zeros((8, 8), dtype=np.int32)
    for legal in range(1, 8):
        pits = _ORDER[legal, : _COUNT[legal]]
        table[legal, :6] = [pits[sixth // (6 // len(pits))] for sixth in range(6)]
    return table.reshape(-1)


class Streams:
    """The draws of many games' streams (engine.game.rng), each game's taken by its own count."""

    def __init__(self, seeds: np.ndarray) -> None:
        self.state = mix64_words(np.asarray(seeds, dtype=np.uint64) ^ np.uint64(SEED_SALT))
        self.count = np.zeros(len(seeds), dtype=np.int64)

    def draw(self, games: np.ndarray, takes: np.ndarray | None = None) -> np.ndarray:
        """The next draw (uint64 holding 32 bits) of each game in ``games``; where ``takes`` is
        False the game's count stays and its value is not to be used."""
        count = self.count[games]
        word = mix64_words(self.state[games] + ((count >> 1) + 1).astype(np.uint64) * np.uint64(GAMMA))
        self.count[games] = count + (1 if takes is None else takes)
        return np.where(count & 1, word & np.uint64(MASK32), word >> np.uint64(32))


def _below(draws: np.ndarray, n: np.ndarray) -> np.ndarray:
    """engine.game.rng.choice_index on arrays."""
    return ((draws * n.astype(np.uint64)) >> np.uint64(32)).astype(np.int64)


def _nth_true(mask: np.ndarray, n: np.ndarray) -> np.ndarray:
    """The column of the n-th (from 0) True of each row of ``mask``."""
    column: np.ndarray = np.argmax(np.cumsum(mask, axis=1) > n[:, None], axis=1)
    return column


class Forest:
    """The trees of up to ``games`` searches of ``playouts`` playouts (see the module docstring)."""

    def __init__(self, board: Board, games: int, playouts: int) -> None:
        self.board = board
        self.playouts = playouts
        self.nodes = nodes = playouts + 1
        self.size = size = games * nodes
        self.options = np.zeros(size, dtype=np.int8)
        # by move id, 3 * node + k
        self.child_of = np.zeros(3 * size, dtype=np.int32)
        self.captured = np.zeros(3 * size, dtype=np.int8)
        self.kid = np.zeros(3 * size, dtype=np.int32)
        self.visits = np.zeros(3 * size, dtype=np.int32)
        self.rewards = np.zeros(3 * size, dtype=np.float64)
        self.total = np.zeros(size, dtype=np.int32)
        self.used = np.zeros(games, dtype=np.int32)
        self.log = board.logs(playouts)
        self.node_visits, self.node_rewards = self.visits.reshape(size, 3), self.rewards.reshape(size, 3)  # by node

    def search(self, streams: Streams, games: np.ndarray, position: np.ndarray, ply: int) -> np.ndarray:
        """The pit (mover's view) each game's mcts plays from ``position`` at ``ply`` (every
        position with at least two legal moves; ``games`` index the streams)."""
        m = len(games)
        slots = np.arange(m, dtype=np.int64)
        roots = slots * self.nodes
        self.used[:m] = 1
        if ply == 0:
            root_pits = np.broadcast_to(self.board.first_pits, (m, len(self.board.first_pits)))
            self._grow(roots, position, ply, first=True)
        else:
            root_pits = _ORDER[self.board.legal[position]]
            self._grow(roots, position, ply)
        for _ in range(self.playouts):
            self._descend(streams, games, slots, ply)
        visits = np.where(self.options[roots] > _K, self.node_visits.take(roots, axis=0).T, -1).T
        tied = visits == visits.max(axis=1, keepdims=True)
        k = _nth_true(tied, _below(streams.draw(games), tied.sum(axis=1)))
        pits: np.ndarray = root_pits[slots, k]
        return pits

    def _grow(self, nodes: np.ndarray, position: np.ndarray, ply: int, first: bool = False) -> None:
        """Make ``nodes`` the nodes of ``position`` at ``ply``: their options, no visits."""
        b = self.board
        if first:
            count = np.full(len(nodes), len(b.first_pits), dtype=np.int8)
            child = np.zeros((3, len(nodes)), dtype=np.int64)
            captured = np.zeros((3, len(nodes)), dtype=np.int64)
            child[: len(b.first_pits)], captured[: len(b.first_pits)] = b.first_child[:, None], b.first_captured[:, None]
        else:
            legal = b.legal[position] if ply < b.cap else np.zeros(len(nodes), dtype=np.uint8)
            count = _COUNT[legal]
            moves = 3 * position + _ORDER_BY_COLUMN[:, legal]
            child, captured = b.child[moves], b.captured[moves]
        self.options[nodes] = count
        moves = 3 * nodes + _K  # (3, nodes): move ids by child
        self.child_of[moves] = child
        self.captured[moves] = captured
        self.kid[moves] = 0
        self.visits[moves] = _NEW_VISITS[:, count]
        self.rewards[moves] = _NEW_REWARDS[:, count]
        self.total[nodes] = 0

    def _descend(self, streams: Streams, games: np.ndarray, slots: np.ndarray, root_ply: int) -> None:
        """One playout of every tree: select, expand, play out, back up (engine.players.search._descend).
        Every game still selecting is at the same depth, so the sign of the mover (+1 for the
        root's) is one number; each carries its score difference for the root's mover."""
        b = self.board
        outcome = np.zeros(len(slots), dtype=np.int64)  # each game's final difference, by slot
        path: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (slots, move ids, nodes) per level
        at = slots
        node = slots * self.nodes
        difference = np.zeros(len(slots), dtype=np.int64)
        sign = 1
        leaves: list[tuple[np.ndarray, ...]] = []  # (slots, child, difference, ply) of each level's new leaves
        signs: list[int] = []  # and the mover's sign there
        ply = root_ply
        while len(at):
            move = 3 * node + self._select(streams, games[at], node)
            path.append((at, move, node))
            difference += sign * self.captured[move]
            sign = -sign
            ply += 1
            kid = self.kid[move]
            new = kid == 0
            if new.any():
                grown_at, grown_move = at[new], move[new]
                fresh = self.used[grown_at]
                self.used[grown_at] += 1
                self.kid[grown_move] = fresh
                child = self.child_of[grown_move].astype(np.int64)
                self._grow(grown_at * self.nodes + fresh, child, ply)
                leaves.append((grown_at, child, difference[new], np.full(len(child), ply, dtype=np.int64)))
                signs.append(sign)
                old = ~new
                at, move, kid, difference = at[old], move[old], kid[old], difference[old]
            node = at * self.nodes + kid
            over = self.options[node] == 0
            if over.any():
                outcome[at[over]] = difference[over] + sign * b.row_difference[self.child_of[move[over]]]
                going = ~over
                at, node, difference = at[going], node[going], difference[going]
        if leaves:
            at, child, difference, plies = (np.concatenate(column) for column in zip(*leaves, strict=True))
            sign_of = np.repeat(signs, [len(leaf[0]) for leaf in leaves])
            outcome[at] = difference + sign_of * self._playout(streams, games[at], child, plies)
        reward = np.where(outcome > 0, 1.0, np.where(outcome == 0, 0.5, 0.0))
        rewards = (reward, 1.0 - reward)  # for the root's mover, for the other
        for level, (at, move, node) in enumerate(path):
            self.visits[move] += 1
            self.total[node] += 1
            self.rewards[move] += rewards[level % 2][at]

    def _select(self, streams: Streams, games: np.ndarray, node: np.ndarray) -> np.ndarray:
        """The child index each node picks: an untried one (uniformly, one draw when several),
        else the first of the largest UCB1 bounds (computed for every node, used where none is
        untried)."""
        visits = self.node_visits.take(node, axis=0).T  # (3, nodes), as the other arrays here
        untried = (visits == 0).view(np.uint8)
        code = untried[0] | untried[1] << 1 | untried[2] << 2  # bit k: child k untried
        n_untried = _COUNT[code]
        nth = np.zeros(len(node), dtype=np.int64)
        several = np.flatnonzero(n_untried > 1)
        if len(several):
            nth[several] = _below(streams.draw(games[several]), n_untried[several])
        with np.errstate(divide="ignore", invalid="ignore"):
            bounds = self.node_rewards.take(node, axis=0).T / visits + UCT_EXPLORATION * np.sqrt(
                self.log[self.total[node]] / visits
            )
        best = np.where(bounds[2] > np.maximum(bounds[0], bounds[1]), 2, bounds[1] > bounds[0])  # the first largest
        pick: np.ndarray = np.where(code > 0, _NTH[3 * code + nth], best)
        return pick

    def _playout(self, streams: Streams, games: np.ndarray, position: np.ndarray, ply: np.ndarray) -> np.ndarray:
        """Uniformly random moves to the end from each position: the score difference still to
        come for its mover (engine.players.search._playout). Every game moves at once, so the mover's
        sign is one number. A game at its end takes one more step (Board.step): to the sink, its
        rows' difference counted as a capture; at the ply cap it is sent there by hand. Sunk
        games take no draws and are dropped once a third of the games are."""
        b = self.board
        result = np.zeros(len(games), dtype=np.int64)
        at = np.arange(len(games))
        base = streams.state[games] + np.uint64(GAMMA)  # a draw's word: mix64(base + (count // 2) * GAMMA)
        count = streams.count[games].astype(np.uint64)
        difference = np.zeros(len(games), dtype=np.int16)
        here = 3 * position.astype(np.int32)  # 3 x the position: its first move's entry of Board.step
        legal8 = b.legal[position].astype(np.uint64) << np.uint64(3)
        limit = b.cap - ply  # moves before the cap
        lowest, moves = int(limit.min()), 0
        while True:
            if moves >= lowest:
                capped = (limit == moves) & (here != b.sink)
                if capped.any():
                    difference[capped] += (-1) ** moves * b.row_difference[here[capped] // 3]
                    here[capped], legal8[capped] = b.sink, 0
            sunk = here == b.sink
            finished = int(np.count_nonzero(sunk))
            if 3 * finished >= len(here):
                result[at[sunk]] = difference[sunk]
                streams.count[games[at[sunk]]] = count[sunk]
                if finished == len(here):
                    return result
                going = ~sunk
                at, base, count, difference = at[going], base[going], count[going], difference[going]
                here, limit, legal8 = here[going], limit[going], legal8[going]
                lowest = int(limit.min())
            word = mix64_words(base + (count >> np.uint64(1)) * np.uint64(GAMMA))
            # the draw is the high half of the word at an even count, the low half at an odd one
            word <<= (count & np.uint64(1)) << np.uint64(5)
            word >>= np.uint64(32)
            word *= np.uint64(6)
            sixth = word >> np.uint64(32)
            count += b.draws[legal8]
            step = b.step[here + b.pick[sixth + legal8]]
            captured = (step >> np.uint64(32)).astype(np.uint8).view(np.int8)
            if moves % 2:
                difference -= captured
            else:
                difference += captured
            here = step.astype(np.int32)  # the low 32 bits
            legal8 = step >> np.uint64(40)
            moves += 1


Searcher = MctsStrategy | PolicyTable


def search_games(tables: PositionTables, rules: Rules, players: tuple[Searcher, Searcher], seeds: np.ndarray) -> np.ndarray:
    """The pits (mover's view) of each game, ply by ply: an (n, cap) uint8 array, NO_MOVE from
    the game's end on. Each player is an MctsStrategy or a table strategy's PolicyTable."""
    board = _board(tables, rules)
    cap = rules.ply_cap
    n = len(seeds)
    pits = np.full((n, cap), NO_MOVE, dtype=np.uint8)
    streams = Streams(seeds)
    forests = [Forest(board, n, player.playouts) if isinstance(player, MctsStrategy) else None for player in players]
    at = np.arange(n)
    position = np.full(n, board.start, dtype=np.int64)
    for ply in range(cap):
        side = ply % 2
        count = np.full(n, len(board.first_pits), dtype=np.int8) if ply == 0 else _COUNT[board.legal[position]]
        going = count > 0
        at, position, count = at[going], position[going], count[going]
        if not len(at):
            break
        player, forest = players[side], forests[side]
        if forest is None:
            assert isinstance(player, PolicyTable)
            classes = np.full(len(at), player.first) if ply == 0 else player.classes_at(position, cap - ply)
            chosen = player.pits(classes, streams.draw(at)).astype(np.int64)
        else:
            chosen = np.empty(len(at), dtype=np.int64)
            only = count == 1
            if ply == 0:
                chosen[only] = board.first_pits[0]
            else:
                chosen[only] = _ORDER[board.legal[position[only]], 0]
            several = np.flatnonzero(~only)
            if len(several):
                chosen[several] = forest.search(streams, at[several], position[several], ply)
        pits[at, ply] = chosen
        if ply == 0:
            option = np.zeros(ROW, dtype=np.int64)
            option[board.first_pits] = np.arange(len(board.first_pits))
            position = board.first_child[option[chosen]]
        else:
            position = board.child[3 * position + chosen].astype(np.int64)
    return pits


# The Board of the tables and rules last searched, kept for the next call (one rule set at a time).
_BOARDS: dict[tuple[int, Rules], Board] = {}
forget_with(_BOARDS.clear)


def _board(tables: PositionTables, rules: Rules) -> Board:
    """The Board of ``tables`` under ``rules`` (the tables of its table_rules), kept for the next call."""
    key = (id(tables), rules)
    found = _BOARDS.get(key)
    if found is None:
        _BOARDS.clear()
        found = _BOARDS[key] = Board.of(tables, rules)
    return found
