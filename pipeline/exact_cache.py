"""Exact outcomes kept in the cache folder, beside the tables they come from: computed once.

    <cache>/exact/<rule set>-<south>-<north>-<key>-engine<version>.json

one file per rule set and ordered pairing of table strategies (engine.exact_outcome at its
default tolerance), in the ``exact/`` folder of the engine's cache folder (engine.cache, as
engine.policy keeps its tables in ``policies/``). <south> and <north> are the specs as file
names (lower case, runs of other characters as "-"); <key> is the start of the SHA-256 of
the rule set's name and the two specs, as two specs may share a file name
(``perfect(temperature=1e-05)`` and ``perfect(temperature=1e+05)``). A file holds the outcome,
what it is the outcome of, and a SHA-256 of both; floats are written by ``repr``, which reads
back to the same double. A file that cannot be read, fails its checksum or is of another
pairing is computed again, with a warning; files are written whole or not at all.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from pathlib import Path
from typing import Any

import numpy as np

import engine
from engine.cache import write_atomic
from engine.exact import ExactOutcome

log = logging.getLogger(__name__)
FOLDER = "exact"


def exact_folder() -> Path | None:
    """The folder of exact outcomes in the engine's cache folder, None when the engine builds in memory."""
    folder = engine.cache_folder()
    return None if folder is None else folder / FOLDER


def exact_path(south: str, north: str, rules: engine.Rules, folder: Path) -> Path:
    """Where the exact outcome of ``south`` against ``north`` (canonical specs) is kept in ``folder``."""
    key = hashlib.sha256(f"{rules.name}\n{south}\n{north}".encode()).hexdigest()[:12]
    return folder / f"{rules.name}-{_slug(south)}-{_slug(north)}-{key}-engine{engine.ENGINE_VERSION}.json"


def cached_exact_outcome(south: str, north: str, rules: engine.Rules) -> ExactOutcome:
    """engine.exact_outcome of two table strategies, from the cache when it holds a sound copy,
    else computed (up to a minute and 3.3 GB for random against random under RULES.md) and cached."""
    south, north = engine.canonical_spec(south), engine.canonical_spec(north)
    folder = exact_folder()
    found = None if folder is None else read_cached(south, north, rules)
    if found is not None:
        return found
    started = time.perf_counter()
    outcome = engine.exact_outcome(south, north, rules=rules)
    if folder is not None:
        path = exact_path(south, north, rules, folder)
        write_atomic(path, _encode(outcome))
        seconds = time.perf_counter() - started
        log.info("computed the exact outcome of %s against %s under %s in %.1f s: %s", south, north, rules.name, seconds, path)
    return outcome


def read_cached(south: str, north: str, rules: engine.Rules) -> ExactOutcome | None:
    """The cached exact outcome of two canonical specs, None when there is none or it is damaged
    (with a warning: it will be computed again)."""
    folder = exact_folder()
    path = None if folder is None else exact_path(south, north, rules, folder)
    if path is None or not path.exists():
        return None
    try:
        stored = json.loads(path.read_bytes())
        payload = stored["payload"]
        sound = stored["checksum"] == _checksum(payload) and payload["of"] == _of(south, north, rules)
        outcome = _decode(payload, rules) if sound else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        log.warning("exact outcome %s is unreadable (%s); computing it again", path, error)
        return None
    if outcome is None:
        log.warning("exact outcome %s fails its checksum; computing it again", path)
    return outcome


def _of(south: str, north: str, rules: engine.Rules) -> dict[str, str]:
    return {"rules": rules.name, "south": south, "north": north, "engine": engine.ENGINE_VERSION}


def _encode(outcome: ExactOutcome) -> bytes:
    payload = {
        "of": _of(outcome.south, outcome.north, outcome.rules),
        "south_win": outcome.south_win,
        "draw": outcome.draw,
        "north_win": outcome.north_win,
        "margin": sorted(outcome.margin.items()),
        "plies": [float(mass) for mass in outcome.plies],
        "event_fires": outcome.event_fires,
        "event_mean": outcome.event_mean,
        "unresolved": outcome.unresolved,
    }
    return (json.dumps({"checksum": _checksum(payload), "payload": payload}) + "\n").encode()


def _decode(payload: dict[str, Any], rules: engine.Rules) -> ExactOutcome:
    of = payload["of"]
    return ExactOutcome(
        south=of["south"],
        north=of["north"],
        rules=rules,
        south_win=float(payload["south_win"]),
        draw=float(payload["draw"]),
        north_win=float(payload["north_win"]),
        margin={int(margin): float(mass) for margin, mass in payload["margin"]},
        plies=np.array(payload["plies"], dtype=np.float64),
        event_fires={name: float(payload["event_fires"][name]) for name in engine.EVENTS},
        event_mean={name: float(payload["event_mean"][name]) for name in engine.EVENTS},
        unresolved=float(payload["unresolved"]),
    )


def _checksum(payload: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _slug(spec: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", spec.lower()).strip("-")
