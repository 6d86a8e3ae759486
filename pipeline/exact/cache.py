"""Exact outcomes kept in the cache folder, beside the tables they come from: computed once.

    <cache>/exact/<rule set>-<south>-<north>-<key>-engine<version>.json

one file per rule set and ordered pairing of table strategies (engine.exact_outcome at its
default tolerance), and

    <cache>/exact/<rule set>-exploit-<strategy>-<key>-engine<version>.json

one per rule set and table strategy (engine.exploitability), in the ``exact/`` folder of the
engine's cache folder (engine.store.cache, as engine.players.policy keeps its tables in ``policies/``).
<south> and <north> are the specs as file names (lower case, runs of other characters as "-");
<key> is the start of the SHA-256 of the rule set's name and the two specs (or the strategy), as
two specs may share a file name
(``perfect(temperature=1e-05)`` and ``perfect(temperature=1e+05)``). A file holds the outcome,
what it is the outcome of, and a SHA-256 of both (engine.store.integrity); floats are written by ``repr``, which reads
back to the same double. A file that cannot be read, fails its checksum, is of another pairing
or holds figures that do not add up (pipeline.runs.sanity) is computed again, with a warning; files
are written whole or not at all.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

import engine
from engine.exact import ExactOutcome, Exploitability
from engine.players import engine_strategy
from engine.store import EXACT, DamagedFileError, read_json, write_json
from engine.tables import positions_of
from pipeline.runs.costs import COSTS
from pipeline.runs.sanity import InsaneRowError, check_exact_outcome, check_exploitability
from pipeline.runs.workers import memory_bytes

log = logging.getLogger(__name__)
T = TypeVar("T")
FOLDER = EXACT.folder
Start = Sequence[int] | None  # a start's pit counts, pit 0 first; None: the rule set's own


def exact_folder() -> Path | None:
    """The folder of exact outcomes in the engine's cache folder, None when the engine builds in memory."""
    folder = engine.cache_folder()
    return None if folder is None else folder / FOLDER


def exact_path(south: str, north: str, rules: engine.Rules, folder: Path, start: Start = None) -> Path:
    """Where the exact outcome of ``south`` against ``north`` (canonical specs) is kept in
    ``folder``; from ``start`` (pit counts; None: the rule set's own), with the counts in the name."""
    text = f"{rules.name}\n{south}\n{north}" + ("" if start is None else f"\n{_counts(start)}")
    key = hashlib.sha256(text.encode()).hexdigest()[:12]
    where = "" if start is None else "-start-" + "-".join(map(str, start))
    return folder / f"{rules.name}{where}-{slug(south)}-{slug(north)}-{key}-engine{engine.ENGINE_VERSION}.json"


def cached_exact_outcome(
    south: str,
    north: str,
    rules: engine.Rules,
    progress: Callable[[engine.ExactProgress], None] | None = None,
    start: Start = None,
) -> ExactOutcome:
    """engine.exact_outcome of two table strategies, from the cache when it holds a sound copy,
    else computed (``progress`` is engine.exact_outcome's) and cached; from ``start`` (pit counts,
    pit 0 first) when given, else from the rule set's own start."""
    south, north = engine.canonical_spec(south), engine.canonical_spec(north)
    folder = exact_folder()
    board = None if start is None else engine.pack(list(start))
    return cached_result(
        None if folder is None else exact_path(south, north, rules, folder, start),
        _of(south, north, rules, start),
        "exact outcome",
        lambda: engine.exact_outcome(south, north, rules=rules, progress=progress, start=board),
        _encode,
        lambda payload: _decode(payload, rules),
    )


def read_cached(south: str, north: str, rules: engine.Rules, start: Start = None) -> ExactOutcome | None:
    """The cached exact outcome of two canonical specs (from ``start``, as cached_exact_outcome),
    None when there is none or it is damaged (with a warning: it will be computed again)."""
    folder = exact_folder()
    path = None if folder is None else exact_path(south, north, rules, folder, start)
    return _read(path, _of(south, north, rules, start), "exact outcome", lambda payload: _decode(payload, rules))


def exploit_path(strategy: str, rules: engine.Rules, folder: Path) -> Path:
    """Where the exploitability of ``strategy`` (a canonical spec) is kept in ``folder``."""
    key = hashlib.sha256(f"{rules.name}\nexploit\n{strategy}".encode()).hexdigest()[:12]
    return folder / f"{rules.name}-exploit-{slug(strategy)}-{key}-engine{engine.ENGINE_VERSION}.json"


def cached_exploitability(strategy: str, rules: engine.Rules) -> Exploitability:
    """engine.exploitability of a table strategy, from the cache when it holds a sound copy,
    else computed (5-40 s under RULES.md) and cached."""
    strategy = engine.canonical_spec(strategy)
    folder = exact_folder()
    return cached_result(
        None if folder is None else exploit_path(strategy, rules, folder),
        _exploit_of(strategy, rules),
        "exploitability",
        lambda: engine.exploitability(strategy, rules=rules),
        lambda found: {"as_south": found.as_south, "as_north": found.as_north, "settled": list(found.settled)},
        lambda payload: _decode_exploitability(payload, strategy, rules),
    )


def read_cached_exploitability(strategy: str, rules: engine.Rules) -> Exploitability | None:
    """The cached exploitability of a canonical spec, None when there is none or it is damaged
    (with a warning: it will be computed again)."""
    folder = exact_folder()
    path = None if folder is None else exploit_path(strategy, rules, folder)
    return _read(
        path, _exploit_of(strategy, rules), "exploitability", lambda payload: _decode_exploitability(payload, strategy, rules)
    )


def exact_seconds(south: str, north: str) -> float:
    """About how long the exact outcome of a pairing takes under RULES.md on one core (to hand
    out the longest first, to estimate a run and the time left on its bar), by its kind, at the
    cost file's rates: two of perfect's dials, whose games cycle; two wide strategies (that may
    play every legal move, so reach every position); one (a dial against perfect among them, as
    long as the others of its kind, not as two dials); none."""
    if _is_dial(south) and _is_dial(north):
        return COSTS.exact_cycling_seconds
    wide = is_wide(south) + is_wide(north)
    return COSTS.exact_wide_pair_seconds if wide == 2 else COSTS.exact_wide_one_seconds if wide else COSTS.exact_narrow_seconds


def _is_dial(spec: str) -> bool:
    """One of perfect's skill dials: against another its games cycle for hundreds of plies
    (perfect's never-settling positions, left only by the dials' errors)."""
    return engine_strategy(spec).needs_solution and is_wide(spec)


def exploit_seconds(strategy: str) -> float:
    """About how long the exploitability of a strategy takes under RULES.md (for ordering work)."""
    return COSTS.exploit_wide_seconds if is_wide(strategy) else COSTS.exploit_seconds


def is_wide(spec: str) -> bool:
    """Whether a strategy may play every legal move (random, and perfect's skill dials): its
    pairings reach every position."""
    return engine_strategy(spec).wide


def exact_jobs(jobs: int, rule_sets: Iterable[engine.Rules] = (engine.Rules(),)) -> int:
    """How many of ``jobs`` workers on this machine may compute exact outcomes of ``rule_sets``
    at once: as many as its memory holds at their largest worker_bytes each, at least one."""
    worker = max((worker_bytes(rules) for rules in rule_sets), default=worker_bytes(engine.Rules()))
    return max(1, min(jobs, memory_bytes() // worker))


def worker_bytes(rules: engine.Rules) -> int:
    """A worker's peak memory for the widest exact outcome of ``rules``: COSTS.exact_worker_bytes
    (under RULES.md) scaled by the positions of its index (every board of at most its stones)."""
    scale = positions_of(rules) / positions_of(engine.Rules())
    return max(1, round(COSTS.exact_worker_bytes * scale))


def cached_result(
    path: Path | None,
    of: dict[str, str],
    kind: str,
    compute: Callable[[], T],
    encode: Callable[[T], dict[str, Any]],
    decode: Callable[[dict[str, Any]], T],
) -> T:
    """The ``kind`` of result kept at ``path`` for ``of`` (what it is the result of), else
    ``compute()`` written there whole, sealed with ``of`` (engine.store.integrity); ``path`` None computes only."""
    found = _read(path, of, kind, decode)
    if found is not None:
        return found
    started = time.perf_counter()
    result = compute()
    if path is not None:
        write_json(path, encode(result), of)
        described = ", ".join(f"{key} {value}" for key, value in of.items() if key != "engine")
        log.info("computed the %s of %s in %.1f s: %s", kind, described, time.perf_counter() - started, path)
    return result


def read_result(path: Path | None, of: dict[str, str], kind: str, decode: Callable[[dict[str, Any]], T]) -> T | None:
    """The ``kind`` of result kept at ``path`` for ``of``, None when there is none or it is
    damaged (with a warning: it will be computed again), as cached_result reads it."""
    return _read(path, of, kind, decode)


def _read(path: Path | None, of: dict[str, str], what: str, decode: Callable[[dict[str, Any]], T]) -> T | None:
    """The result kept at ``path``, None when there is none, or it is not sealed as that of ``of``
    (with a warning: it will be computed again)."""
    if path is None:
        return None
    try:
        payload = read_json(path, of)
        return None if payload is None else decode({**payload, "of": of})
    except DamagedFileError as error:
        log.warning("%s; computing the %s again", error, what)
    except InsaneRowError as error:
        log.warning("the %s %s does not add up (%s); computing it again", what, path, error)
    except (ValueError, KeyError, TypeError, AttributeError) as error:  # sealed by us, yet not what this release reads
        log.warning("%s %s is unreadable (%s); computing it again", what, path, error)
    return None


def _of(south: str, north: str, rules: engine.Rules, start: Start = None) -> dict[str, str]:
    of = {"rules": rules.name, "south": south, "north": north, "engine": engine.ENGINE_VERSION}
    return of if start is None else {**of, "start": _counts(start)}


def _counts(start: Sequence[int]) -> str:
    return " ".join(map(str, start))


def _exploit_of(strategy: str, rules: engine.Rules) -> dict[str, str]:
    return {"rules": rules.name, "strategy": strategy, "engine": engine.ENGINE_VERSION}


def _encode(outcome: ExactOutcome) -> dict[str, Any]:
    return {
        "south_win": outcome.south_win,
        "draw": outcome.draw,
        "north_win": outcome.north_win,
        "margin": sorted(outcome.margin.items()),
        "plies": [float(mass) for mass in outcome.plies],
        "event_fires": outcome.event_fires,
        "event_mean": outcome.event_mean,
        "unresolved": outcome.unresolved,
    }


def _decode_exploitability(payload: dict[str, Any], strategy: str, rules: engine.Rules) -> Exploitability:
    south, north = payload["settled"]
    found = Exploitability(
        strategy=strategy,
        rules=rules,
        as_south=float(payload["as_south"]),
        as_north=float(payload["as_north"]),
        settled=(None if south is None else int(south), None if north is None else int(north)),
    )
    check_exploitability(found)
    return found


def _decode(payload: dict[str, Any], rules: engine.Rules) -> ExactOutcome:
    of = payload["of"]
    outcome = ExactOutcome(
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
    check_exact_outcome(outcome)
    return outcome


def slug(spec: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", spec.lower()).strip("-")
