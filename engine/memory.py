"""Handing freed memory back to the system.

glibc keeps freed blocks below its mmap threshold (which grows up to 32 MiB as large arrays come
and go) in the process's heap, so a process that has solved a large rule set would keep that
memory resident for the rest of its life: the solver's layers make thousands of per-ply arrays,
and an atlas worker goes through rule sets of every size. ``return_freed_memory`` asks the C
library to give it back (malloc_trim) where it can, and does nothing elsewhere.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable
from functools import lru_cache


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
