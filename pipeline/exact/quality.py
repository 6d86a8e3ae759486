"""Exact game quality kept in the cache folder beside the exact outcomes, computed once:

    <cache>/exact/<rule set>[-start-<pit counts>]-quality-<south>-<north>-<key>-engine<version>.json

one file per rule set, start (the rule set's own, or given pit counts) and ordered pairing of
table strategies (engine.exact_quality at its
default tolerance), sealed as the exact outcomes are (pipeline.exact.cache): a file that cannot
be read, fails its checksum, is of another pairing or holds figures that cannot be (a negative
count, chances that do not add up) is computed again, with a warning.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

import engine
from engine.exact import MEASURES
from pipeline.exact.cache import Start, cached_result, exact_folder, exact_seconds, read_result, slug
from pipeline.runs.sanity import InsaneRowError

TOLERANCE = 1e-9  # how far sums of chances may be from 1 before a file is refused
# An exact quality's time over its exact outcome's under RULES.md on one core (random's self-play
# 237 s against 70 s, perfect(temperature=1.0)'s 493 s against 151 s: docs/quality.md, "Cost"):
# the ten sums a state carries through the sparse products where the outcome carries one.
QUALITY_OVER_OUTCOME = 3.4
# The self-play whose exact quality the atlas and the fairness search give, column prefix ->
# strategy: a game between novices, and between good players who err as strong humans do, often
# in small ways and rarely in large ones (docs/quality.md).
SELF_PLAY_QUALITY = {"random": "random", "perfect_t1": "perfect(temperature=1.0)"}


def quality_path(south: str, north: str, rules: engine.Rules, folder: Path, start: Start = None) -> Path:
    """Where the exact quality of ``south`` against ``north`` (canonical specs) is kept in
    ``folder``; from ``start`` (pit counts; None: the rule set's own), with the counts in the name."""
    text = f"{rules.name}\nquality\n{south}\n{north}" + ("" if start is None else f"\n{_counts(start)}")
    key = hashlib.sha256(text.encode()).hexdigest()[:12]
    where = "" if start is None else "-start-" + "-".join(map(str, start))
    return folder / f"{rules.name}{where}-quality-{slug(south)}-{slug(north)}-{key}-engine{engine.ENGINE_VERSION}.json"


def quality_seconds(south: str, north: str) -> float:
    """About how long the exact quality of a pairing takes under RULES.md on one core."""
    return exact_seconds(south, north) * QUALITY_OVER_OUTCOME


def read_cached_quality(south: str, north: str, rules: engine.Rules, start: Start = None) -> engine.ExactQuality | None:
    """The cached exact quality of two canonical specs (from ``start``, as cached_exact_quality),
    None when there is none or it is damaged."""
    folder = exact_folder()
    path = None if folder is None else quality_path(south, north, rules, folder, start)
    return read_result(path, _of(south, north, rules, start), "exact quality", lambda payload: _decode(payload, rules))


def cached_exact_quality(
    south: str,
    north: str,
    rules: engine.Rules,
    progress: Callable[[engine.ExactProgress], None] | None = None,
    start: Start = None,
) -> engine.ExactQuality:
    """engine.exact_quality of two table strategies, from the cache when it holds a sound copy,
    else computed (``progress`` is engine.exact_quality's) and cached; from ``start`` (pit
    counts, pit 0 first) when given, else from the rule set's own start."""
    south, north = engine.canonical_spec(south), engine.canonical_spec(north)
    folder = exact_folder()
    board = None if start is None else engine.pack(list(start))
    return cached_result(
        None if folder is None else quality_path(south, north, rules, folder, start),
        _of(south, north, rules, start),
        "exact quality",
        lambda: engine.exact_quality(south, north, rules=rules, progress=progress, start=board),
        _encode,
        lambda payload: _decode(payload, rules),
    )


def _of(south: str, north: str, rules: engine.Rules, start: Start = None) -> dict[str, str]:
    of = {"rules": rules.name, "kind": "quality", "south": south, "north": north, "engine": engine.ENGINE_VERSION}
    return of if start is None else {**of, "start": _counts(start)}


def _counts(start: Sequence[int]) -> str:
    return " ".join(map(str, start))


def _encode(quality: engine.ExactQuality) -> dict[str, Any]:
    return {
        "measures": quality.measures,
        "south_win": quality.south_win,
        "draw": quality.draw,
        "north_win": quality.north_win,
        "curves": {name: [float(value) for value in curve] for name, curve in quality.curves.items()},
        "unresolved": quality.unresolved,
    }


def _decode(payload: dict[str, Any], rules: engine.Rules) -> engine.ExactQuality:
    of = payload["of"]
    quality = engine.ExactQuality(
        south=of["south"],
        north=of["north"],
        rules=rules,
        measures={name: float(payload["measures"][name]) for name in MEASURES},
        south_win=float(payload["south_win"]),
        draw=float(payload["draw"]),
        north_win=float(payload["north_win"]),
        curves={name: np.array(curve, dtype=np.float64) for name, curve in payload["curves"].items()},
        unresolved=float(payload["unresolved"]),
    )
    check_quality(quality)
    return quality


def check_quality(quality: engine.ExactQuality) -> None:
    """What an exact quality cannot be: a negative or non-finite measure, chances that do not
    add up to 1 less the unresolved, a share of the games above 1."""
    for name, value in quality.measures.items():
        if not math.isfinite(value) or value < -TOLERANCE:
            raise InsaneRowError(f"its {name} is {value!r}, not a count or a sum of stones")
    total = quality.south_win + quality.draw + quality.north_win
    if not math.isclose(total, 1 - quality.unresolved, abs_tol=TOLERANCE):
        raise InsaneRowError(f"its outcome's chances sum to {total!r}, not 1 less the unresolved")
    if quality.measures["comeback"] > 1 + TOLERANCE:
        raise InsaneRowError(f"its comeback chance is {quality.measures['comeback']!r}, above 1")
