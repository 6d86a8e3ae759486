"""Search strategies: a one-ply heuristic, alpha-beta, Monte Carlo tree search and perfect play.

Each works on the memoised options of ``engine.game.options``, where a board is seen by the
player to move (its row is pits 0, 1, 2) and an option (``engine.game.moves.Option``) gives the
child already turned for the next mover. Scores are those of RULES.md,
"Perfect play": the mover's stones still to come minus the opponent's, that is the
captures along the line and, where the game stops (no legal move, or the ply cap), each
side's own row. Every strategy holds only what depends on its parameters (and, for
``perfect``, the solutions of the rule sets it has met); a search keeps its tables for
one call, so a choice depends on the position and the random stream alone.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache

import numpy as np

from engine.game import (
    MAX_PLY_CAP,
    NORTH,
    ROW,
    Board,
    Option,
    Position,
    Positions,
    Rng,
    Rules,
    positions,
    row_difference,
    row_stones,
)
from engine.players.base import EngineStrategy
from engine.players.choice import ARGMAX, Epsilon, Rule, Softmax, key_of, pit_of
from engine.players.values import Heuristic, Hurried, Solved
from engine.solver import Remoteness, Solution, remoteness, solve
from engine.store import per_rule_set
from engine.tables import PositionTables

INFINITY = 1_000  # beyond any score: a board holds at most 63 stones
UCT_EXPLORATION = math.sqrt(2)  # the c of UCB1 (Kocsis and Szepesvari 2006) for rewards in [0, 1]
# What a game of mcts costs, in playouts: it searches about 8 moves a game against random (45 in
# 6 games: a move with one legal pit is not searched), each with its playouts; pipeline/costs.toml
# gives the rate of a playout on a machine. MAX_PLAYOUTS bounds a spec, a design limit: a game of
# it runs some 300 million playouts, a day or more of one core.
MCTS_MOVES_PER_GAME = 8
MAX_PLAYOUTS = 37_800_000
# A search never needs more plies than the longest game (engine.game.rules.MAX_PLY_CAP): deeper is
# the same search. A spec is made without a rule set, so this is its bound; pipeline.estimates
# refuses a depth beyond the ply cap of the rule set it plays under.
MAX_DEPTH = MAX_PLY_CAP


class HeuristicStrategy(EngineStrategy, name="heuristic"):
    """One ply deep: the capture now minus the largest capture the opponent can answer with;
    among equals, the move that leaves the most stones on the mover's own row (they count
    for the mover at the end); remaining ties uniformly at random."""

    has_policy_table = True
    words = "looks one reply ahead: its capture now minus the largest capture the opponent can answer with"

    def __init__(self) -> None:
        self.spec = "heuristic"

    def choose(self, position: Position, rng: Rng) -> int:
        memo = positions(position.rules)
        last = position.ply + 1 >= position.rules.ply_cap  # the cap: the opponent never replies
        scores = [_heuristic_score(option, memo, last) for option in position.options]
        return _pick_best(position, scores, rng)

    def policy_values(self, tables: PositionTables, rules: Rules) -> Heuristic:
        return Heuristic(tables)


class AlphaBetaStrategy(EngineStrategy, name="alphabeta"):
    """Negamax with alpha-beta pruning to ``depth`` plies, on the score difference.

    At the depth horizon a position that goes on is estimated as if the game stopped there:
    own row minus opponent row, the value it would have at the cap. So a search of ``depth``
    plies from a position with k plies left to the cap is exact when depth >= k, and a
    node's score depends only on its board and min(depth left, plies left): the key of the
    transposition table. Moves are searched captures first; ties among the best root moves
    are broken uniformly at random.
    """

    def __init__(self, depth: int = 6) -> None:
        self.depth = _whole_number("depth", depth, MAX_DEPTH)
        self.spec = f"alphabeta(depth={self.depth})"
        self.family, self.has_policy_table = "alphabeta(depth=d)", True
        self.words = f"searches {self.depth} plies ahead (negamax with alpha-beta pruning) on the difference in stones"

    def choose(self, position: Position, rng: Rng) -> int:
        scores = alphabeta_scores(position, self.depth)
        return _pick_best(position, scores, rng)

    def policy_values(self, tables: PositionTables, rules: Rules) -> Solved:
        return Solved(f"alphabeta(depth={self.depth})", self.depth, self.depth - 1, tables, rules)


class MctsStrategy(EngineStrategy, name="mcts"):
    """UCT (Kocsis and Szepesvari 2006): ``playouts`` descents of a tree grown one node per
    playout, each ended by uniformly random moves to the end of the game or the cap.

    A playout's reward for a player is its game outcome: 1 for a win, 1/2 for a draw, 0 for
    a loss (final totals, captures plus own row). Children are chosen by UCB1 with
    c = sqrt(2), untried children first (uniformly at random among them); the move played is
    the most visited, ties uniformly at random.
    """

    def __init__(self, playouts: int = 400) -> None:
        if isinstance(playouts, int) and not isinstance(playouts, bool) and playouts > MAX_PLAYOUTS:
            raise ValueError(
                f"playouts must be a whole number from 1 to {MAX_PLAYOUTS:,}, not {playouts!r}: a game of it would run "
                f"about {playouts * MCTS_MOVES_PER_GAME:,} playouts, and a move grow a tree of {playouts + 1:,} nodes"
            )
        self.playouts = _whole_number("playouts", playouts, MAX_PLAYOUTS)
        self.spec = f"mcts(playouts={self.playouts})"
        self.searches = True
        self.words = f"Monte Carlo tree search (UCT) with {self.playouts} random playouts a move"

    def choose(self, position: Position, rng: Rng) -> int:
        if len(position.options) == 1:
            return position.moves[0]
        memo = positions(position.rules)
        root = _Node(position.options, position.ply)
        for _ in range(self.playouts):
            _descend(root, memo, position.rules.ply_cap, rng)
        return _pick_best(position, root.visits, rng)


class PerfectStrategy(EngineStrategy, name="perfect"):
    """A best move of the strong solution (``engine.solve``), ties uniformly at random. The
    solution of a rule set is loaded (or built) on the first move played under it.

    Two parameters, at most one of them given, make a player of graded strength from it:

    - ``perfect(epsilon=e)``, 0 <= e <= 1: with probability e a uniformly random legal move,
      otherwise a best move (e = 0 plays the games of ``perfect``, e = 1 those of ``random``);
    - ``perfect(temperature=t)``, t > 0: each legal move with probability proportional to
      exp(v / t), v the move's value under perfect play for the mover, in stones (a quantal
      response player, McKelvey and Palfrey 1995: t -> 0 is ``perfect``, t -> infinity ``random``).

    Every turn takes exactly one draw of the game's stream, which ``engine.players.choice`` turns into a
    move: the games of these scalar players are those of their policy tables in batches.
    """

    def __init__(self, epsilon: float | None = None, temperature: float | None = None, ties: str = "random") -> None:
        if epsilon is not None and temperature is not None:
            raise ValueError("give epsilon or temperature, not both")
        if ties not in TIES:
            raise ValueError(f"ties is one of {', '.join(TIES)}, not {ties!r}")
        if ties != "random" and (epsilon is not None or temperature is not None):
            raise ValueError("ties=hurry plays a best move: give it without epsilon or temperature")
        self.ties = ties
        self.epsilon = None if epsilon is None else _number("epsilon", epsilon, "from 0 to 1", lambda e: 0 <= e <= 1)
        self.temperature = None if temperature is None else _number("temperature", temperature, "above 0", lambda t: t > 0)
        self.rule: Rule = ARGMAX
        self.spec = "perfect"
        self.needs_solution = self.has_policy_table = True
        self.words = "plays a best move of the strong solution (exact perfect play), ties broken at random"
        if self.epsilon is not None:
            self.rule, self.spec = Epsilon(self.epsilon), f"perfect(epsilon={self.epsilon!r})"
            self.wide, self.family = bool(self.epsilon), "perfect(epsilon=e)"
            self.words = f"plays a uniformly random move with probability {self.epsilon!r} and a perfect move otherwise"
        elif self.temperature is not None:
            self.rule, self.spec = Softmax(self.temperature), f"perfect(temperature={self.temperature!r})"
            self.wide, self.family = True, "perfect(temperature=T)"
            self.words = (
                f"plays each move with probability proportional to exp(value / {self.temperature!r}), its value being the "
                "stones it is worth under perfect play: a move one stone worse than the best is "
                f"{math.exp(1 / self.temperature):.2g} times less likely"
            )
        elif self.ties == "hurry":
            self.spec, self.family = "perfect(ties=hurry)", "perfect"
            self.words = (
                "plays a best move of the strong solution, of least remoteness when the value favours it or is 0 "
                "and of greatest otherwise (the side ahead hurries to the end, the other delays), remaining ties at random"
            )

    def choose(self, position: Position, rng: Rng) -> int:
        solved = solution(position.rules)
        if self.rule is ARGMAX:
            best = solved.best_moves(position.board, position.mover, position.ply)
            if self.ties == "hurry" and len(best) > 1:
                best = _hurried(position, best, solved.value(position.board, position.mover, position.ply))
            return rng.choice(best)
        values = solved.move_values(position.board, position.mover, position.ply)
        key = key_of({option.pit: value for option, value in zip(position.options, values, strict=True)})
        return pit_of(self.rule.cuts(key), rng.next_u32()) + ROW * position.mover

    def policy_values(self, tables: PositionTables, rules: Rules) -> Solved:
        far_from = max(1, rules.ply_cap // 2)
        if self.ties == "hurry":
            return Hurried(self.spec, far_from, rules.ply_cap, tables, rules, solution, lines)
        return Solved("perfect", far_from, rules.ply_cap, tables, rules, solution)

    def values_spec(self) -> str:
        # The dials choose among the same values by another rule; ties=hurry's values are its own.
        return self.spec if self.ties == "hurry" else "perfect"


TIES = ("random", "hurry")  # how perfect chooses among its best moves


def _hurried(position: Position, best: tuple[int, ...], value: int) -> tuple[int, ...]:
    """The best moves of least remoteness (``value`` >= 0: the mover hurries) or greatest (it delays)."""
    found = lines(position.rules)
    after = []
    for pit in best:
        child = next(option.child for option in position.options if option.pit + ROW * position.mover == pit)
        seen = found.of(np.array([found.index.rank(child)]), position.rules.ply_cap - position.ply - 1)
        after.append(int(seen[0]))
    target = min(after) if value >= 0 else max(after)
    return tuple(pit for pit, plies in zip(best, after, strict=True) if plies == target)


@per_rule_set
@lru_cache(maxsize=2)
def lines(rules: Rules) -> Remoteness:
    """The remoteness of ``rules`` at its own cap (engine.remoteness), from the engine's cache
    folder, where it is built the first time (74 s for the default rules)."""
    return remoteness(rules, progress=False)


@per_rule_set
@lru_cache(maxsize=4)
def solution(rules: Rules) -> Solution:
    """The strong solution of ``rules`` at its own cap, from the engine's cache folder, where
    it is built the first time (about 45 s for the default rules, tables included; in memory,
    each process, when no cache folder is set)."""
    return solve(rules, progress=False)


def alphabeta_scores(position: Position, depth: int) -> list[int]:
    """Each legal move's score to ``depth`` plies (the move's own ply included): exact for
    a move that ties the best, an upper bound below the best for any other."""
    memo = positions(position.rules)
    remaining = min(depth, position.rules.ply_cap - position.ply) - 1
    search = _AlphaBeta(memo)
    scores = []
    best = -INFINITY
    for option in sorted(position.options, key=_capture_first):
        captured = option.captured
        # Window (best - 1, +inf) on the move's score: a score of best or more comes out exact.
        score = captured - search.negamax(option.child, remaining, -INFINITY, captured - best + 1)
        best = max(best, score)
        scores.append((option.pit, score))
    by_pit = dict(scores)
    return [by_pit[option.pit] for option in position.options]


class _AlphaBeta:
    """One search: its transposition table holds (lower, upper) bounds on the score of
    (board, plies to search), intersected as searches with other windows add to them."""

    def __init__(self, memo: Positions) -> None:
        self.memo = memo
        self.table: dict[tuple[Board, int], tuple[int, int]] = {}

    def negamax(self, board: Board, remaining: int, alpha: int, beta: int) -> int:
        """The score of ``board`` (mover's view, ply > 0) searched ``remaining`` plies, fail-soft."""
        options = self.memo.options(board, 1) if remaining > 0 else ()
        if not options:
            return row_difference(board)
        key = (board, remaining)
        lower, upper = self.table.get(key, (-INFINITY, INFINITY))
        if lower >= beta or lower == upper:
            return lower
        if upper <= alpha:
            return upper
        window_alpha, window_beta = max(alpha, lower), min(beta, upper)
        alpha = window_alpha
        best = -INFINITY
        for _, child, _, captured in sorted(options, key=_capture_first):
            score = captured - self.negamax(child, remaining - 1, captured - window_beta, captured - alpha)
            if score > best:
                best = score
                if best >= window_beta:
                    break
                alpha = max(alpha, best)
        if best <= window_alpha:
            upper = best
        elif best >= window_beta:
            lower = best
        else:
            lower = upper = best
        self.table[key] = (lower, upper)
        return best


class _Node:
    """A node of the UCT tree: the options of its position, and per option the visits, the
    total reward for this node's mover, and the child node once expanded."""

    __slots__ = ("children", "options", "ply", "rewards", "visits")

    def __init__(self, options: tuple[Option, ...], ply: int) -> None:
        self.options = options
        self.ply = ply
        self.visits = [0] * len(options)
        self.rewards = [0.0] * len(options)
        self.children: list[_Node | None] = [None] * len(options)


def _descend(root: _Node, memo: Positions, cap: int, rng: Rng) -> None:
    """One playout: select down the tree, expand one node, play out at random, back up."""
    path: list[tuple[_Node, int]] = []
    node = root
    difference = 0  # the score difference for the root's mover
    sign = 1  # +1 where the root's mover is to move
    while True:
        index = _select(node, rng)
        path.append((node, index))
        option = node.options[index]
        child_board = option.child
        difference += sign * option.captured
        sign = -sign
        child = node.children[index]
        if child is None:
            child_options = memo.options(child_board, 1) if node.ply + 1 < cap else ()
            child = node.children[index] = _Node(child_options, node.ply + 1)
            difference += sign * _playout(child_board, child_options, child.ply, memo, cap, rng)
            break
        if not child.options:
            difference += sign * row_difference(child_board)
            break
        node = child
    reward = 1.0 if difference > 0 else 0.5 if difference == 0 else 0.0  # for the root's mover
    for depth, (node, index) in enumerate(path):
        node.visits[index] += 1
        node.rewards[index] += reward if depth % 2 == 0 else 1.0 - reward


def _select(node: _Node, rng: Rng) -> int:
    untried = [index for index, visits in enumerate(node.visits) if not visits]
    if untried:
        return untried[rng.below(len(untried))] if len(untried) > 1 else untried[0]
    log_total = math.log(sum(node.visits))
    bounds = [
        rewards / visits + UCT_EXPLORATION * math.sqrt(log_total / visits)
        for rewards, visits in zip(node.rewards, node.visits, strict=True)
    ]
    return bounds.index(max(bounds))


def _playout(board: Board, options: tuple[Option, ...], ply: int, memo: Positions, cap: int, rng: Rng) -> int:
    """Uniformly random moves from ``board`` (mover's view) to the end: the score difference
    still to come for its mover."""
    difference = 0
    sign = 1
    below = rng.below
    while options:
        _, board, _, captured = options[0] if len(options) == 1 else options[below(len(options))]
        difference += sign * captured
        sign = -sign
        ply += 1
        options = memo.options(board, 1) if ply < cap else ()
    return difference + sign * row_difference(board)


def _heuristic_score(option: Option, memo: Positions, last: bool) -> tuple[int, int]:
    child = option.child
    reply = 0 if last else max((answer.captured for answer in memo.options(child, 1)), default=0)
    return option.captured - reply, row_stones(child, NORTH)  # the child is seen by the opponent


def _pick_best(position: Position, scores: list[int] | list[tuple[int, int]], rng: Rng) -> int:
    """The absolute pit of a best-scoring option; ties uniformly at random (one draw)."""
    best = max(scores)
    tied = [option.pit for option, score in zip(position.options, scores, strict=True) if score == best]
    return rng.choice(tied) + ROW * position.mover


def _capture_first(option: Option) -> int:
    return -option.captured


def _number(parameter: str, value: object, allowed: str, accepts: Callable[[float], bool]) -> float:
    """A real parameter as a float, refused (one line naming the range) unless finite and accepted.
    -0.0 comes back as 0.0: the spec spells the value, and one strategy has one spelling."""
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value) or not accepts(value):
        raise ValueError(f"{parameter} must be a number {allowed}, not {value!r}")
    return float(value) + 0.0


def _whole_number(parameter: str, value: object, most: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= most:
        raise ValueError(f"{parameter} must be a whole number from 1 to {most:,}, not {value!r}")
    return value
