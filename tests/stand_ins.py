"""Stand-ins for what a run of the atlas leans on, so a test can drive it: a clock moved by
hand and a joblib Parallel that takes its tasks as greedily as joblib may."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any


class Clock:
    """A stand-in for the time module of a run: its wall clock is moved by hand, its
    performance counter is the real one (durations in records stay plausible)."""

    def __init__(self) -> None:
        self.now = 1e9
        self.perf_counter = time.perf_counter

    def time(self) -> float:
        return self.now

    def time_ns(self) -> int:
        return int(self.now * 1e9)


class Greedy:
    """joblib's Parallel as it may take tasks: every one from the generator before running the
    first (it looks ahead of its workers, batch_size times n_jobs at a time)."""

    def __init__(self, **_: Any) -> None:
        pass

    def __call__(self, tasks: Iterator[Any]) -> Iterator[Any]:
        taken = list(tasks)
        return (function(*args, **kwargs) for function, args, kwargs in taken)
