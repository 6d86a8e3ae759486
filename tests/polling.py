"""Waiting for a condition another process brings about, with a deadline."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_until(condition: Callable[[], bool], seconds: float) -> bool:
    """Whether ``condition()`` holds within ``seconds``, asking every tenth of a second."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True
