"""Every path of the pipeline comes from here.

    MODIAR_DATA      where studies are written          default ./data (the current folder's)
    MODIAR_REPORTS   where reports are written          default ./reports
    MODIAR_CACHE     tables, solutions, policies,       default the user's cache folder
                     shared by every study              (platformdirs: ~/.cache/modiar on Linux)

The cache folder holds one subfolder a kind, as engine.store.cache lists them: tables/, solutions/ and
policies/ (engine), exact/ (pipeline.exact.cache), search/ (pipeline.search_ladder.run), and
scratch/, where each task of an atlas builds its rule set's files in a folder of its own
(scratch_prefix), removed when the task ends; ``modiar cache show`` lists them and ``modiar cache
clear`` empties them (pipeline.cache).

``modiar ... --cache DIR`` overrides MODIAR_CACHE. The bundled study configs (STUDIES) ship
inside the package, so ``modiar study run smoke`` works from any folder; those named ladder*
are skill ladders (``modiar ladder run ladder``). So does RULES.md (rules_md): setup.py copies
the repository's into the package when it is built, and every report carries a copy.
"""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path

import platformdirs

PACKAGE = Path(__file__).resolve().parents[1]  # the pipeline package
ROOT = PACKAGE.parent
DATA = Path(os.environ.get("MODIAR_DATA") or "data")
REPORTS = Path(os.environ.get("MODIAR_REPORTS") or "reports")
STUDIES = PACKAGE / "studies"

MANIFEST = "manifest.json"
JOURNAL = ".chunks.jsonl"  # chunks finished since the manifest was last written, one JSON line each
LOCK = ".modiar.lock"  # held by the one 'modiar study run' writing the folder
GAMES = "games"
PLIES = "plies"
LADDER = "ladder"  # the bundled configs named ladder* are skill ladders, not studies
ATLAS = "atlas"  # bundled configs named atlas* are atlases (pipeline.atlas.run)
SEARCH = "search"  # and those named search* search ladders (pipeline.search_ladder.run)
EXACT = "exact.parquet"  # the exact outcomes of a study with exact = true or "self-play"

# The command that runs each kind of config, a bundled one by its name alone (the kind as its loader says it).
RUNS = {
    "study": "modiar study run",
    "ladder": "modiar ladder run",
    "search ladder": "modiar ladder search",
    "atlas": "modiar atlas run",
}
_STARTS = {"ladder": LADDER, "search ladder": SEARCH, "atlas": ATLAS}  # how the names of the bundled ones begin

# atlas-<host>-<pid>-<mkdtemp's letters, digits and _>: an atlas task's scratch folder (scratch_prefix)
_SCRATCH_NAME = re.compile(r"atlas-(.+)-(\d+)-[A-Za-z0-9_]+")

# A study's name (and a variant's label) becomes a folder name: no separators, no dots, no
# newline. Always matched with fullmatch: "$" would also match before a final newline.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
NAME_RULE = "use 1 to 64 letters, digits, '-' or '_', starting with a letter or digit"


def rules_md() -> Path:
    """RULES.md: the copy installed with the package (pipeline/RULES.md, put there by setup.py's
    build), else the repository's, for a clone or an editable install."""
    for path in (PACKAGE / "RULES.md", ROOT / "RULES.md"):
        if path.is_file():
            return path
    raise FileNotFoundError("RULES.md is neither in the package nor beside it: reinstall modiar-lab")


def is_name(text: object) -> bool:
    """Whether ``text`` can name a study (and so a folder)."""
    return isinstance(text, str) and NAME.fullmatch(text) is not None


def study_dir(name: str, out: Path | None = None) -> Path:
    """Where a study's records go: ``out`` when given, else data/<name>/."""
    return out if out is not None else DATA / name


def cache_folder(option: str | None = None) -> Path:
    """The cache of tables and solutions: ``option`` (--cache), else $MODIAR_CACHE, else the
    user's cache folder."""
    chosen = option or os.environ.get("MODIAR_CACHE")
    return Path(chosen) if chosen else Path(platformdirs.user_cache_dir("modiar", appauthor=False))


def cache_source(option: str | None = None) -> str:
    """Where ``cache_folder(option)`` comes from, in words."""
    if option:
        return "from --cache"
    if os.environ.get("MODIAR_CACHE"):
        return "from $MODIAR_CACHE"
    return "the user's cache folder; $MODIAR_CACHE or --cache DIR choose another"


def scratch_prefix() -> str:
    """The start of the name of an atlas task's scratch folder: atlas-<host>-<pid>-, so that
    ``modiar cache clear`` can tell a running task's folder from one a killed task left."""
    return f"atlas-{socket.gethostname()}-{os.getpid()}-"


def scratch_owner(name: str) -> tuple[str, int] | None:
    """The host and pid in the name of an atlas task's scratch folder, None for any other name."""
    match = _SCRATCH_NAME.fullmatch(name)
    return None if match is None else (match[1], int(match[2]))


def study_config(text: str) -> Path:
    """The config a user names: a file, or the name of a bundled study (smoke, default, variants)."""
    path = Path(text)
    named = STUDIES / f"{text}.toml"
    return named if not path.exists() and is_name(text) and named.is_file() else path


def bundled(kind: str) -> list[str]:
    """The bundled configs of a kind of RUNS ("study", "ladder", "search ladder", "atlas") by name."""
    return sorted(path.stem for path in STUDIES.glob("*.toml") if bundled_kind(path.stem) == kind)


def bundled_kind(name: str) -> str:
    """The kind of a bundled config by its name: those named ladder* are skill ladders
    (pipeline.ladder.run), search* search ladders (pipeline.search_ladder.run), atlas* atlases
    (pipeline.atlas.run), the rest studies."""
    return next((kind for kind, start in _STARTS.items() if name.startswith(start)), "study")


def bundled_studies() -> list[str]:
    return bundled("study")


def bundled_ladders() -> list[str]:
    return bundled("ladder")


def bundled_atlases() -> list[str]:
    return bundled("atlas")
