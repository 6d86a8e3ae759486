"""Every path of the pipeline comes from here: ``data/`` (or $MODIAR_DATA) and the studies' configs."""

from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("MODIAR_DATA", ROOT / "data"))
REPORTS = Path(os.environ.get("MODIAR_REPORTS", ROOT / "reports"))
STUDIES = Path(__file__).resolve().parent / "studies"

MANIFEST = "manifest.json"
JOURNAL = ".chunks.jsonl"  # chunks finished since the manifest was last written, one JSON line each
LOCK = ".modiar.lock"  # held by the one 'modiar study run' writing the folder
GAMES = "games"
PLIES = "plies"

# A study's name (and a variant's label) becomes a folder name: no separators, no dots, no
# newline. Always matched with fullmatch: "$" would also match before a final newline.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
NAME_RULE = "use 1 to 64 letters, digits, '-' or '_', starting with a letter or digit"


def is_name(text: object) -> bool:
    """Whether ``text`` can name a study (and so a folder)."""
    return isinstance(text, str) and NAME.fullmatch(text) is not None


def study_dir(name: str, out: Path | None = None) -> Path:
    """Where a study's records go: ``out`` when given, else data/<name>/."""
    return out if out is not None else DATA / name
