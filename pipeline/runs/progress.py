"""The progress bars of ``modiar study run``: time left estimated from work, not from games.

A study's pairings differ in cost per game by five orders of magnitude: engine.play_batch plays
a random game in well under a microsecond, an mcts game takes milliseconds. A bar
counting games would promise seconds during the fast pairings and hours during the slow ones.
The games bar therefore advances by each chunk's estimated seconds (``game_seconds``: the rough
rates of pipeline/costs.toml, measured on one core of the development machine, ignoring the
rule set), measures its
rate in those, and takes the time left to be the work left over the rate of work so far; as
the rate is measured, only the ratios of the figures matter. It shows the games done beside.

A long step (a slow chunk, a rule set's tables and solution, ~25 s each) would leave a bar
still; the bars redraw every second, so their elapsed time shows that work goes on.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache
from typing import Protocol

from tqdm import tqdm

import engine
from engine.play import batchable
from engine.players import MCTS_MOVES_PER_GAME, AlphaBetaStrategy, MctsStrategy, engine_strategy
from pipeline.runs.costs import COSTS

TICK = 1.0  # seconds between redraws of a bar that has not moved
# alphabeta's cost a game grows COSTS.alphabeta_growth-fold a ply where measured; beyond this depth
# the fit is no longer a measure (and 1.8 ** 10_000 overflows a float): a deeper search counts as this deep.
FITTED_DEPTH = 60
MCTS_BATCHED_PLAYOUTS = 100  # the playouts of the search whose batched rate the cost file gives


@cache  # a study has up to 100,000 chunks and a few dozen pairings
def game_seconds(south: str, north: str, rules: engine.Rules) -> float:
    """Roughly how many seconds one game of the pairing takes on one core."""
    if batchable(south, north, rules):
        return COSTS.batched_game_seconds + strategy_seconds(south, batched=True) + strategy_seconds(north, batched=True)
    return scalar_game_seconds(south, north)


def scalar_game_seconds(south: str, north: str) -> float:
    """Roughly how many seconds one game of the pairing takes through engine.play_game, on one core."""
    return COSTS.scalar_game_seconds + strategy_seconds(south) + strategy_seconds(north)


def strategy_seconds(spec: str, *, batched: bool = False) -> float:
    """What a strategy adds to a game on one core, through engine.play_game or (``batched``)
    engine.play_batch: its work (the playouts of mcts's searched moves, alphabeta's depth, a
    lookup of the solution) at the cost file's rates. In a batch a table strategy's move is a
    lookup in its policy table, which the game's own cost covers."""
    strategy = engine_strategy(spec)
    if isinstance(strategy, MctsStrategy):
        playouts = strategy.playouts * MCTS_MOVES_PER_GAME
        if not batched:
            return playouts / COSTS.mcts_playouts_per_second
        # larger searches go slower a playout: fewer games fit together, and their trees are deeper
        slower = (max(strategy.playouts, MCTS_BATCHED_PLAYOUTS) / MCTS_BATCHED_PLAYOUTS) ** COSTS.mcts_batched_slowdown
        return playouts * slower / COSTS.mcts_batched_playouts_per_second
    if batched:
        return 0.0
    if isinstance(strategy, AlphaBetaStrategy):
        return COSTS.alphabeta_game_seconds * COSTS.alphabeta_growth ** min(strategy.depth, FITTED_DEPTH)
    if strategy.needs_solution:
        return COSTS.perfect_game_seconds
    return COSTS.heuristic_game_seconds if strategy.spec == "heuristic" else 0.0


class Pairing(Protocol):
    """What the games bar needs of a chunk's pairing (pipeline.study.config.Pairing)."""

    @property
    def south(self) -> str: ...

    @property
    def north(self) -> str: ...

    @property
    def rules(self) -> engine.Rules: ...


class Chunk(Protocol):
    """What the games bar needs of a chunk (pipeline.study.run.Chunk)."""

    @property
    def name(self) -> str: ...

    @property
    def pairing(self) -> Pairing: ...

    def __len__(self) -> int: ...


class WorkBar:
    """A bar that moves by work, each piece given the seconds it is estimated to take on one
    core (in whole ``unit`` seconds: a float total would end a little off the sum of its
    parts), shared by ``jobs`` workers, and says the time left: the estimate less the time
    spent, then the work left at the measured pace (the seconds so far over the estimated work
    done), blended in until BLEND_SHARE of the work is done. The first pieces done may be cheap
    ones carrying the workers' start, and a run of hours would otherwise say nothing, or hours
    wrong, at first. A subclass says what the bar's words add (``_words``)."""

    def __init__(self, desc: str, work_total: int, *, unit: float, jobs: int, bar_format: str, progress: bool) -> None:
        self.unit, self.jobs = unit, max(1, jobs)
        self.work_total, self.work_done = work_total, 0
        self.started = time.time()
        self.bar = tqdm(
            total=work_total, desc=desc, bar_format=bar_format, file=sys.stderr, disable=not progress, postfix=self._words()
        )
        self.ticker = Ticker(self.bar, before=self._redraw)

    def advance(self, work: int) -> None:
        self.work_done += work
        self._redraw()
        self.bar.update(work)

    def seconds_left(self, now: float | None = None) -> float:
        """The time left (see the class)."""
        spent = (time.time() if now is None else now) - self.started
        planned, done = self.work_total * self.unit / self.jobs, self.work_done * self.unit / self.jobs
        estimated = max(0.0, planned - spent)
        if done <= 0:
            return estimated
        measured = (planned - done) * spent / done
        weight = min(1.0, done / (BLEND_SHARE * planned))
        return weight * measured + (1 - weight) * estimated

    def close(self) -> None:
        self.ticker.stop()
        self.bar.close()

    def _words(self) -> str:
        raise NotImplementedError

    def _redraw(self) -> None:
        self.bar.set_postfix_str(self._words(), refresh=False)


class GamesBar(WorkBar):
    """The bar of a study run's chunks: it moves by each finished chunk's estimated seconds
    (game_seconds), counts the games, and says the time left (WorkBar)."""

    def __init__(self, chunks: Sequence[Chunk], name: str, *, progress: bool, jobs: int = 1) -> None:
        self.work = {
            chunk.name: max(
                1, round(1e6 * len(chunk) * game_seconds(chunk.pairing.south, chunk.pairing.north, chunk.pairing.rules))
            )
            for chunk in chunks
        }
        self.played, self.total = 0, sum(len(chunk) for chunk in chunks)
        super().__init__(
            name,
            sum(self.work.values()),
            unit=1e-6,  # microseconds
            jobs=jobs,
            bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}{postfix}]",
            progress=progress,
        )

    def done(self, chunk: str, games: int) -> None:
        self.played += games
        self.advance(self.work[chunk])

    def _words(self) -> str:
        games = f"{self.played:,} of {self.total:,} games"
        return games if self.played == self.total else f"{games}; about {time_left(self.seconds_left())} left"


class TasksBar(WorkBar):
    """The bar of a run's tasks, each given the wall time it is planned to take (its estimate
    over the workers that share its part of the run: an atlas's rule sets): it moves by those,
    names the last task done, and says the time left (WorkBar), from its first second."""

    def __init__(self, desc: str, planned: Mapping[str, float], *, progress: bool) -> None:
        self.planned = {name: max(1, round(seconds)) for name, seconds in planned.items()}
        self.last = ""
        super().__init__(
            desc,
            sum(self.planned.values()),
            unit=1.0,
            jobs=1,  # the planned times are wall times already
            bar_format="{desc}: {percentage:3.0f}%|{bar:20}| {elapsed} elapsed{postfix}",
            progress=progress and bool(self.planned),
        )

    def done(self, name: str, words: str) -> None:
        """Task ``name`` is done; ``words`` say it (its name and time, say)."""
        self.last = words
        self.advance(self.planned.get(name, 0))

    def _words(self) -> str:
        words = [f"last done: {self.last}"] if self.last else []
        if self.work_done < self.work_total:
            words.append(f"about {time_left(self.seconds_left())} left")
        return "; ".join(words)


BLEND_SHARE = 0.1  # the share of a run's work done from which its time left is the measured pace alone


class CachesBar:
    """The bar of the rule sets whose caches (pipeline.study.caches.build_caches) are being built; it names the ones
    in progress, taken to be the first ``jobs`` not yet built, as the workers take them in order,
    and, given each one's estimate in ``seconds`` (pipeline.runs.estimate.caches_cost), the time
    left: the estimates of those not built, at this machine's pace once one is built (its
    seconds over its estimate), over the workers, less the time since the last one was built."""

    def __init__(
        self, rule_sets: Iterable[engine.Rules], jobs: int, *, progress: bool, seconds: Mapping[str, float] | None = None
    ) -> None:
        self.waiting, self.jobs = [rules.name for rules in rule_sets], max(1, jobs)
        self.seconds = dict(seconds or {})
        self.started = self.last = time.time()
        self.done_estimate = 0.0
        self.bar = tqdm(
            total=len(self.waiting),
            desc="tables, solutions and policies",
            bar_format="{desc}: {n_fmt}/{total_fmt} rule sets [{elapsed}{postfix}]",
            file=sys.stderr,
            disable=not progress,
            postfix=self._building(),
        )
        self.ticker = Ticker(self.bar, before=self._redraw)

    def built(self, name: str) -> None:
        if name in self.waiting:
            self.waiting.remove(name)
            self.done_estimate += self.seconds.get(name, 0.0)
        self.last = time.time()
        self.bar.set_postfix_str(self._building(), refresh=False)
        self.bar.update()

    def close(self) -> None:
        self.ticker.stop()
        self.bar.close()

    def seconds_left(self, now: float | None = None) -> float | None:
        """The time left (see the class), None without estimates."""
        estimates = [self.seconds[name] for name in self.waiting if name in self.seconds]
        if not estimates:
            return None
        now = time.time() if now is None else now
        pace = measured_pace(self.last - self.started, self.done_estimate)
        return max(0.0, sum(estimates) * pace / min(self.jobs, len(estimates)) - (now - self.last))

    def _building(self) -> str:
        building = ", ".join(self.waiting[: self.jobs])
        if not building:
            return ""
        left = self.seconds_left()
        return f"building {building}" + ("" if left is None else f"; about {time_left(left)} left")

    def _redraw(self) -> None:
        self.bar.set_postfix_str(self._building(), refresh=False)


class StepsBar:
    """The bar of steps run one after another (a report's), each with its estimate in seconds:
    it names the step running and says the time left, the estimates of the steps not done at
    this machine's pace (the seconds of the steps done over their estimates), less the time
    spent in the one running; redrawn every second. A step that runs past its estimate is said
    to, with its time so far, rather than nearly done."""

    def __init__(self, desc: str, steps: Sequence[tuple[str, float]], *, progress: bool) -> None:
        self.steps = list(steps)
        self.index = -1
        self.started = self.step_started = time.time()
        self.done_estimate = 0.0
        self.bar = tqdm(
            total=len(self.steps),
            desc=desc,
            bar_format="{desc}: {n_fmt}/{total_fmt} steps [{elapsed}{postfix}]",
            file=sys.stderr,
            disable=not progress,
            leave=False,
        )
        self.ticker = Ticker(self.bar, before=self._redraw)

    def step(self, name: str) -> None:
        """Step ``name`` starts (the one before it, if any, is done)."""
        now = time.time()
        if self.index >= 0:
            self.done_estimate += self.steps[self.index][1]
            self.bar.update()
        self.index = next(k for k, (step, _) in enumerate(self.steps) if step == name)
        self.step_started = now
        self._redraw()
        self.bar.refresh()

    def seconds_left(self, now: float | None = None) -> float:
        now = time.time() if now is None else now
        left = sum(seconds for _, seconds in self.steps[max(self.index, 0) :]) * self._pace()
        return max(0.0, left - (now - self.step_started))

    def overrun(self, now: float | None = None) -> float:
        """How far the step running is past its estimate at this machine's pace (0 if not)."""
        now = time.time() if now is None else now
        return max(0.0, now - self.step_started - self.steps[max(self.index, 0)][1] * self._pace())

    def _pace(self) -> float:
        return measured_pace(self.step_started - self.started, self.done_estimate)

    def close(self) -> None:
        self.ticker.stop()
        self.bar.close()

    def _redraw(self) -> None:
        if self.index < 0:
            return
        now, (name, estimate) = time.time(), self.steps[self.index]
        if self.overrun(now) > 0:
            spent = f"{time_left(now - self.step_started)} so far" + (", longer than its estimate" if estimate else "")
            after = sum(seconds for _, seconds in self.steps[self.index + 1 :]) * self._pace()
            words = f"{name}; {spent}" + (f", then about {time_left(after)}" if after else "")
        else:
            words = f"{name}; about {time_left(self.seconds_left(now))} left"
        self.bar.set_postfix_str(words, refresh=False)


def measured_pace(seconds: float, estimated: float) -> float:
    """This machine's seconds per estimated second: ``seconds`` spent on work estimated at
    ``estimated`` seconds (1 before any is done)."""
    return seconds / estimated if estimated > 0 else 1.0


def makespan(seconds: Sequence[float], workers: int) -> float:
    """How long tasks of ``seconds`` take on ``workers``, each task on one worker, the longest
    first to the worker free first: at least the longest task, whatever the workers."""
    loads = [0.0] * max(1, workers)
    for task in sorted(seconds, reverse=True):
        loads[loads.index(min(loads))] += task
    return max(loads)


def time_left(seconds: float) -> str:
    """``40 s``, ``12 min``, ``1.5 h``: the time left, as a bar says it."""
    if seconds < 90:
        return f"{max(seconds, 1):.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


class Ticker:
    """Redraws a bar every TICK seconds from a daemon thread, so its elapsed time keeps moving;
    ``before``, if given, is called before each redraw (to read what workers reported)."""

    def __init__(self, bar: tqdm, before: Callable[[], None] | None = None) -> None:  # type: ignore[type-arg]
        self.stopped = threading.Event()
        self.before = before
        self.thread = None if bar.disable else threading.Thread(target=self._tick, args=(bar,), daemon=True)
        if self.thread is not None:
            self.thread.start()

    def stop(self) -> None:
        self.stopped.set()
        if self.thread is not None:
            self.thread.join()

    def _tick(self, bar: tqdm) -> None:  # type: ignore[type-arg]
        while not self.stopped.wait(TICK):
            if self.before is not None:
                self.before()
            bar.refresh()
