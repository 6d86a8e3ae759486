"""Letting go of what the engine keeps in memory between calls.

To spare a second load, the engine keeps the last rule sets' position tables (engine.tables,
engine.replay), solutions (engine.search), policy tables (engine.policy) and scalar positions
(engine.positions). A process that goes through many rule sets, one after the other (an atlas
worker: pipeline.atlas), calls ``release_caches`` between them so that it holds one at a time.
"""

from __future__ import annotations

import gc

from engine import policy, positions, replay, search, tables


def release_caches() -> None:
    """Forget every table, solution and position the engine keeps between calls."""
    tables._kept.cache_clear()
    replay._loaded_tables.cache_clear()
    search.solution.cache_clear()
    positions.positions.cache_clear()
    policy._LOADED.clear()
    gc.collect()
