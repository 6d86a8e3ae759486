"""Waiting for a condition another process brings about, with a deadline; and a block that
fails, rather than hangs, past its deadline."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager


def wait_until(condition: Callable[[], bool], seconds: float) -> bool:
    """Whether ``condition()`` holds within ``seconds``, asking every tenth of a second."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


@contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Fail the test (TimeoutError) instead of hanging when the block runs past ``seconds``."""

    def expired(*_: object) -> None:
        raise TimeoutError(f"still running after {seconds} s: it hangs")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
