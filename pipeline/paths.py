"""Every path of the pipeline comes from here: ``data/`` (or $MODIAR_DATA) and the studies' configs."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("MODIAR_DATA", ROOT / "data"))
REPORTS = Path(os.environ.get("MODIAR_REPORTS", ROOT / "reports"))
STUDIES = Path(__file__).resolve().parent / "studies"

MANIFEST = "manifest.json"
GAMES = "games"
PLIES = "plies"


def study_dir(name: str, out: Path | None = None) -> Path:
    """Where a study's records go: ``out`` when given, else data/<name>/."""
    return out if out is not None else DATA / name
