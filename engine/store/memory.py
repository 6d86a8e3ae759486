"""The memory a rule set holds, and handing it back to the system.

The engine keeps what it loaded for a rule set between calls, to spare a second load: its
position tables, its solution, its policy tables, its scalar positions, its board index. Each
module that keeps such a thing registers how to forget it here (``per_rule_set`` on its cache,
or ``forget_with``), so that ``release_caches`` frees all of it without knowing the modules.
A process that goes through many rule sets, one after the other (an atlas worker), calls it
between them so that it holds one at a time.


glibc keeps freed blocks below its mmap threshold (which grows up to 32 MiB as large arrays come
and go) in the process's heap, so a process that has solved a large rule set would keep that
memory resident for the rest of its life: the solver's layers make thousands of per-ply arrays,
and an atlas worker goes through rule sets of every size. ``return_freed_memory`` asks the C
library to give it back (malloc_trim) where it can, and does nothing elsewhere.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
from collections.abc import Callable
from functools import lru_cache
from typing import Protocol, TypeVar


class Clearable(Protocol):
    def cache_clear(self) -> None: ...


Kept = TypeVar("Kept", bound=Clearable)
# How to forget each thing a rule set holds, in the order the modules registered.
FORGETTERS: list[Callable[[], None]] = []


def per_rule_set(cached: Kept) -> Kept:
    """Mark a cache (a function under ``functools.lru_cache``) as memory a rule set holds:
    ``release_caches`` clears it."""
    FORGETTERS.append(cached.cache_clear)
    return cached


def forget_with(forget: Callable[[], None]) -> None:
    """Register ``forget`` (a dict's ``clear``, say) as a way to let go of a rule set's memory."""
    FORGETTERS.append(forget)


def release_caches() -> None:
    """Forget every table, solution and position the engine keeps between calls, and hand the
    freed memory back to the system where the C library can (glibc's malloc_trim): else a worker
    keeps the high-water mark of its largest rule set for the rest of its life."""
    for forget in FORGETTERS:
        forget()
    gc.collect()
    return_freed_memory()


def return_freed_memory() -> None:
    """Give the memory of freed blocks back to the system (glibc's malloc_trim, where there is one)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@lru_cache(maxsize=1)
def _malloc_trim() -> Callable[[int], int] | None:
    library = ctypes.util.find_library("c")
    try:
        found: Callable[[int], int] | None = getattr(ctypes.CDLL(library), "malloc_trim", None) if library else None
    except OSError:
        return None
    return found
