"""The progress of exact outcomes computed by workers: each pairing's ply and mass in play, and the time left.

An exact outcome (engine.exact_outcome) takes from a fraction of a second to minutes, and a bar
counting finished pairings stands still for as long. So each worker reports where its pairing
is, through a small file in a folder the bar makes (``Reporter``: the latest
engine.ExactProgress, written at most every REPORT_EVERY seconds, atomically), and the bar
reads those files each time it redraws (every second): it names each pairing running with its
ply and the mass of games still in play, and estimates the time left from measured rates:

* a pairing running: the plies still to go, from how fast its mass in play has been falling
  (the log of the mass is close to linear in the ply once the first plies are past), until the
  mass reaches the tolerance or the cap is reached, times its seconds a ply so far;
* a pairing waiting: its estimate (pipeline.exact.cache.exact_seconds, a figure of the
  development machine) times this machine's pace, the measured seconds of the pairings done
  over their estimates;

the whole over the workers. Workers on other machines (a dask scheduler's) whose folder the bar
cannot read leave it counting pairings, with the estimate from the pace alone.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

import engine
from engine.exact import BUILDING, TOLERANCE
from pipeline.runs.progress import Ticker, measured_pace, time_left

REPORT_EVERY = 0.5  # seconds between a worker's reports
HISTORY = 20.0  # seconds of a pairing's reports its rates are measured over
SHOWN = 2  # pairings named on the bar at once


class Reporter:
    """What a worker passes to engine.exact_outcome as ``progress``: writes the latest report
    of pairing ``name`` to ``folder`` (None: reports nothing)."""

    def __init__(self, folder: Path | None, name: str) -> None:
        self.path = None if folder is None else folder / f"{os.getpid()}-{abs(hash(name))}.json"
        self.name, self.started, self.written = name, time.time(), 0.0

    def __call__(self, progress: engine.ExactProgress) -> None:
        now = time.time()
        if self.path is None or now - self.written < REPORT_EVERY:
            return
        self.written = now
        report = {"name": self.name, "started": self.started, "now": now, **progress._asdict()}
        partial = self.path.with_suffix(".part")
        try:
            partial.write_text(json.dumps(report))
            os.replace(partial, self.path)
        except OSError:
            self.path = None  # the bar's folder is gone (it closed): report no more

    def close(self) -> None:
        if self.path is not None:
            with contextlib.suppress(OSError):
                self.path.unlink()


@dataclass
class _Running:
    """A pairing's reports as the bar read them: (time, ply, log10 of the mass in play)."""

    name: str
    started: float
    ply: int = 0
    cap: int = 0
    in_play: float = 1.0
    stage: str = BUILDING
    history: list[tuple[float, int, float]] = field(default_factory=list)

    def take(self, now: float, progress: engine.ExactProgress) -> None:
        """Take in a report made at ``now``: where the pairing is, and its rate once propagating."""
        self.ply, self.cap, self.stage, self.in_play = progress.ply, progress.cap, progress.stage, progress.in_play
        if self.stage != BUILDING and (not self.history or self.history[-1][1] != self.ply):
            self.history.append((now, self.ply, math.log10(max(self.in_play, 1e-300))))
            del self.history[:-200]

    def words(self) -> str:
        """Where the pairing is, as a bar names it."""
        if self.stage == BUILDING:
            return f"{self.name}: finding the states from ply {self.ply}"
        return f"{self.name}: ply {self.ply}, {self.in_play:.1e} in play"

    def seconds_left(self, tolerance: float = TOLERANCE) -> float | None:
        """The seconds still to go from measured rates, None before two plies were seen."""
        recent = [entry for entry in self.history if entry[0] >= self.history[-1][0] - HISTORY] if self.history else []
        if len(recent) < 2 or recent[-1][1] <= recent[0][1]:
            return None
        (t0, ply0, log0), (t1, ply1, log1) = recent[0], recent[-1]
        per_ply = (t1 - t0) / (ply1 - ply0)
        plies = self.cap - ply1
        falling = (log0 - log1) / (ply1 - ply0)  # decades a ply
        if falling > 0 and self.in_play > 0:
            plies = min(plies, math.ceil((log1 - math.log10(max(tolerance, 1e-300))) / falling))
        return max(0, plies) * per_ply


class ExactBar:
    """The bar of the exact outcomes being computed: ``pairings`` are their names with their
    estimates in seconds (exact_seconds; other tasks, such as the ladder's exploitabilities,
    may be among them without reports), ``jobs`` the workers computing them. ``folder`` is
    where the workers' Reporters write (None when the bar is disabled)."""

    def __init__(
        self,
        pairings: Sequence[tuple[str, float]],
        jobs: int,
        *,
        progress: bool,
        desc: str = "exact outcomes",
        unit: str = "pairings",
    ) -> None:
        self.estimates = dict(pairings)
        self.waiting = [name for name, _ in pairings]
        self.jobs = max(1, jobs)
        self.done_estimate = self.done_seconds = 0.0
        self.started = time.time()
        self.running: dict[str, _Running] = {}
        self.folder = None if not progress else Path(tempfile.mkdtemp(prefix="modiar-exact-"))
        self.bar = tqdm(
            total=len(pairings),
            desc=desc,
            bar_format="{desc}: {n_fmt}/{total_fmt} " + unit + " [{elapsed}{postfix}]",
            file=sys.stderr,
            disable=not progress,
            postfix=self.describe(),
        )
        self.ticker = Ticker(self.bar, before=self._read)

    def done(self, name: str, seconds: float | None = None) -> None:
        """Pairing ``name`` is done, in ``seconds`` if known (else since its first report)."""
        running = self.running.pop(name, None)
        if name in self.waiting:
            self.waiting.remove(name)
        if seconds is None and running is not None:
            seconds = time.time() - running.started
        if seconds is not None:
            self.done_estimate += self.estimates.get(name, 0.0)
            self.done_seconds += seconds
        self.bar.set_postfix_str(self.describe(), refresh=False)
        self.bar.update()

    def close(self) -> None:
        self.ticker.stop()
        self.bar.close()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)

    def pace(self) -> float:
        """This machine's seconds per estimated second, from the pairings done (1 before any)."""
        return measured_pace(self.done_seconds, self.done_estimate)

    def seconds_left(self) -> float:
        """The time left: the running pairings' from their rates, the waiting ones' from their
        estimates at this machine's pace, over the workers."""
        pace, now = self.pace(), time.time()
        work = 0.0
        for name in self.waiting:
            running = self.running.get(name)
            left = None if running is None else running.seconds_left()
            if left is None:
                spent = 0.0 if running is None else now - running.started
                left = max(0.0, self.estimates.get(name, 0.0) * pace - spent)
            work += left
        return work / min(self.jobs, max(1, len(self.waiting)))

    def describe(self) -> str:
        """The bar's postfix: the pairings running, their ply and mass in play, and the time left."""
        parts = []
        for running in sorted(self.running.values(), key=lambda r: r.started)[:SHOWN]:
            parts.append(running.words())
        if len(self.running) > SHOWN:
            parts.append(f"{len(self.running) - SHOWN} more")
        if self.waiting:
            parts.append(f"about {time_left(self.seconds_left())} left")
        return "; ".join(parts)

    def _read(self) -> None:
        """Take in the workers' latest reports (called before each redraw)."""
        if self.folder is None:
            return
        for path in self.folder.glob("*.json"):
            try:
                report = json.loads(path.read_text())
            except (OSError, ValueError):
                continue  # being replaced, or removed as its pairing ended
            name = report["name"]
            if name not in self.waiting:
                continue
            running = self.running.setdefault(name, _Running(name, report["started"]))
            running.take(report["now"], engine.ExactProgress(report["ply"], report["cap"], report["in_play"], report["stage"]))
        self.bar.set_postfix_str(self.describe(), refresh=False)


class ExactLine:
    """The progress line of one exact outcome computed in this process (``modiar exact``): what
    engine.exact_outcome is given as ``progress``. It names the ply and the mass in play and
    says the time left, from the measured rates once two plies were seen, before that from
    ``estimate`` (seconds, this machine's estimate of the whole) less the time spent; redrawn
    every second while the propagation runs."""

    def __init__(self, name: str, estimate: float, *, progress: bool) -> None:
        self.running = _Running(name, time.time())
        self.estimate = estimate
        self.bar = tqdm(bar_format="{desc} [{elapsed}]", desc=name, file=sys.stderr, leave=False, disable=not progress)
        self.ticker = Ticker(self.bar, before=self._describe)

    def __call__(self, progress: engine.ExactProgress) -> None:
        self.running.take(time.time(), progress)

    def seconds_left(self) -> float:
        left = self.running.seconds_left()
        return max(0.0, self.estimate - (time.time() - self.running.started)) if left is None else left

    def close(self) -> None:
        self.ticker.stop()
        self.bar.close()

    def _describe(self) -> None:
        self.bar.set_description_str(f"{self.running.words()}; about {time_left(self.seconds_left())} left", refresh=False)
