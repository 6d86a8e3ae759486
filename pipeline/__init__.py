"""The study pipeline: configs, runs, records, metrics, reports and the ``modiar`` command.

Importing it points the engine's cache at the pipeline's cache folder (pipeline.runs.paths:
$MODIAR_CACHE or the user's cache folder), so that notebooks and scripts share the tables
and solutions that ``modiar`` builds; ``modiar --cache DIR`` and engine.set_cache_folder
change it.
"""

import engine
from pipeline.runs.paths import cache_folder

engine.set_cache_folder(cache_folder())
