"""Letting go of what the engine keeps in memory between calls.

To spare a second load, the engine keeps the last rule sets' position tables (engine.tables,
engine.replay), solutions (engine.search), policy tables (engine.policy) and scalar positions
(engine.positions). A process that goes through many rule sets, one after the other (an atlas
worker: pipeline.atlas.run), calls ``release_caches`` between them so that it holds one at a time.
"""

from __future__ import annotations

import gc

from engine import policy, positions, replay, search, tables
from engine.memory import return_freed_memory


def release_caches() -> None:
    """Forget every table, solution and position the engine keeps between calls, and hand the
    freed memory back to the system where the C library can (glibc's malloc_trim): else a worker
    keeps the high-water mark of its largest rule set for the rest of its life."""
    tables._kept.cache_clear()
    replay._loaded_tables.cache_clear()
    search.solution.cache_clear()
    positions.positions.cache_clear()
    policy._LOADED.clear()
    gc.collect()
    return_freed_memory()
