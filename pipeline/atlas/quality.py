"""The atlas's game quality: ``modiar atlas quality DIR``, the exact quality (engine.exact_quality)
of random and perfect(temperature=1.0) self-play for every distinct game of an atlas.

Rule sets with the same game fingerprint (the atlas's ``game_fingerprint`` column,
engine.exact.game_fingerprint) play the same game from their start, move for move, so random
self-play and perfect's softened play (whose chances follow the solution's values, equal too) go
the same way in each: their quality is computed once, for the first of them in the atlas's order
(the game's *representative*), and read for the others. docs/quality.md defines the measures.

    data/<atlas>/quality/<representative>.parquet   its row: the fingerprint, and each measure of
                                                    each self-play (QUALITY_SPECS) as totals over
                                                    the games (expectations), with the outcome
    data/<atlas>/quality/<representative>.json      the row file's SHA-256 and what it cost, sealed
                                                    (engine.store.integrity), written last

A row counts only once its record is there and matches it, and its outcome agrees with the atlas
row's (random self-play's exact outcome, computed apart); otherwise it is computed again, with a
warning. A run holds the atlas folder's lock (as ``modiar atlas run`` does), computes the games
missing, the cheapest first so that a run stopped by ``--hours`` has done the most it could, and
leaves the rows kept in git to resume from. Each task works in a scratch cache folder (the
atlas's: pipeline.atlas.analyse.scratch_cache).
"""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from joblib import Parallel, delayed
from joblib.externals.loky.process_executor import TerminatedWorkerError

import engine
from engine.exact import MEASURES
from engine.players import solution as solved
from engine.store import DamagedFileError, read_json, write_atomic, write_json
from engine.tables import load_tables, table_rules
from pipeline.atlas.analyse import peak_memory, scratch_cache
from pipeline.atlas.effects import atlas_frame
from pipeline.atlas.rows import row_identity, row_path
from pipeline.exact.quality import SELF_PLAY_QUALITY, read_cached_quality
from pipeline.report.prose import plural
from pipeline.runs.lock import FolderBusyError, folder_lock
from pipeline.runs.progress import TasksBar
from pipeline.runs.records import RecordError, file_sha256, parquet_bytes, sha256
from pipeline.runs.workers import exit_with_parent, memory_bytes

log = logging.getLogger(__name__)
QUALITY = "quality"  # the atlas folder's subfolder of quality rows
HOLDER = "modiar atlas"  # the lock's holder, as a busy folder's message names it: a run or a quality run
QUALITY_SPECS = SELF_PLAY_QUALITY  # column prefix -> the strategy whose self-play is measured
OUTCOME = ("south_win", "draw", "north_win", "unresolved")  # kept as <prefix>_quality_<name>
# What a game's quality costs, as the plan estimates it: these times its atlas row's random
# self-play outcome and perfect play's lengths (RULES.md's rules: 1,119 s against 224 s), and
# this times its record's peak memory (the widest quality holds about twice its outcome's).
SECONDS_OVER_ROW = 5.0
BYTES_OVER_ROW = 2.0
AGREEMENT = 1e-9  # how far quality's outcome may be from the atlas's, beyond the mass set aside


def quality_schema() -> pa.Schema:
    """The columns of a quality row: the representative, the fingerprint, then per QUALITY_SPECS
    prefix each measure (engine.exact.quality.MEASURES) and the outcome, all expectations."""
    columns: list[tuple[str, pa.DataType]] = [("rules", pa.string()), ("game_fingerprint", pa.string())]
    for prefix in QUALITY_SPECS:
        columns += [(f"{prefix}_{name}", pa.float64()) for name in MEASURES]
        columns += [(f"{prefix}_quality_{name}", pa.float64()) for name in OUTCOME]
    return pa.schema(columns)


@dataclass(frozen=True)
class Game:
    """One distinct game of an atlas: its fingerprint, its representative (the first rule set with
    it, in the atlas's order) and every rule set that plays it."""

    fingerprint: str
    representative: str
    rule_sets: tuple[str, ...]


def distinct_games(frame: pl.DataFrame) -> list[Game]:
    """The distinct games of an atlas's rows (``frame``, in the atlas's order), by fingerprint; rows
    without one (kept from before the verdict columns) are left out."""
    games: dict[str, list[str]] = {}
    for name, fingerprint in zip(frame["rules"].to_list(), frame["game_fingerprint"].to_list(), strict=True):
        if fingerprint is not None:
            games.setdefault(fingerprint, []).append(name)
    return [Game(fingerprint, names[0], tuple(names)) for fingerprint, names in games.items()]


@dataclass(frozen=True)
class QualityPlan:
    """The games a run measures, the cheapest first: those ``shared`` by its workers, those that
    run ``alone`` after them (their memory does not fit 1/jobs of the machine), those refused
    (name -> one-line reason), and each one's expected seconds and bytes."""

    shared: list[Game]
    alone: list[Game]
    refused: dict[str, str]
    seconds: dict[str, float]
    bytes: dict[str, int]

    def wall_seconds(self, jobs: int) -> float:
        """The run's expected time: the shared games over ``jobs`` workers, then the others one at a time."""
        return sum(self.seconds[game.representative] for game in self.shared) / jobs + sum(
            self.seconds[game.representative] for game in self.alone
        )

    def held_bytes(self, jobs: int) -> int:
        """The most memory the run should hold at once."""
        shared = sorted((self.bytes[game.representative] for game in self.shared), reverse=True)[:jobs]
        return max([sum(shared), *(self.bytes[game.representative] for game in self.alone)])


def plan_quality(directory: Path, jobs: int, frame: pl.DataFrame | None = None) -> QualityPlan:
    """What a run with ``jobs`` workers measures in the atlas in ``directory``: every distinct game
    without a sound quality row, its cost from its atlas row's record (expected_seconds,
    expected_bytes)."""
    frame = atlas_frame(directory) if frame is None else frame
    todo = [game for game in distinct_games(frame) if read_quality_row(directory, game, frame) is None]
    costs = {game.representative: _row_costs(directory, game.representative) for game in todo}
    for game in todo:  # a game whose qualities the cache folder keeps is read, not computed
        rules = engine.Rules.from_name(game.representative)
        if all(cached_quality(spec, rules) is not None for spec in QUALITY_SPECS.values()):
            costs[game.representative] = {}
    seconds = {name: expected_seconds(cost) for name, cost in costs.items()}
    needs = {name: expected_bytes(cost) for name, cost in costs.items()}
    memory = memory_bytes()
    refused = {
        name: f"refused {name}: its quality needs about {needs[name] / 2**30:.1f} GB and this machine has "
        f"{memory / 2**30:.1f} GB; run it on a larger one"
        for name in needs
        if needs[name] > memory
    }
    todo = sorted((game for game in todo if game.representative not in refused), key=lambda game: seconds[game.representative])
    shared = [game for game in todo if needs[game.representative] <= memory // jobs]
    alone = [game for game in todo if game not in shared]
    return QualityPlan(shared, alone, refused, seconds, needs)


def run_quality(directory: Path, *, jobs: int = 2, hours: float | None = None, progress: bool = True) -> list[str]:
    """Compute the quality rows missing from the atlas in ``directory`` as plan_quality plans them,
    none started after ``hours``, each written as it comes (those refused said in one line each);
    returns the representatives computed. RecordError for a folder that is no atlas or is busy,
    or a worker the system killed (the rows done kept)."""
    planned = plan_quality(directory, jobs)
    for message in planned.refused.values():
        log.warning("%s", message)
    todo = planned.shared + planned.alone
    until = None if hours is None else time.time() + 3600 * hours
    done: list[str] = []
    wall = {game.representative: planned.seconds[game.representative] / (jobs if game in planned.shared else 1) for game in todo}
    bar = TasksBar(f"atlas quality: {plural(len(todo), 'game')} to measure", wall, progress=progress)
    try:
        with folder_lock(directory, HOLDER):
            (directory / QUALITY).mkdir(exist_ok=True)
            for batch, workers in ((planned.shared, jobs), (planned.alone, 1)):
                for row in _computed(batch, workers, until):
                    write_quality_row(directory, row)
                    done.append(row.rules)
                    bar.done(row.rules, f"{row.rules} ({row.seconds['total']:.0f} s)")
    except FolderBusyError as error:
        raise RecordError(str(error)) from None
    except TerminatedWorkerError:
        raise RecordError(
            "a worker was killed by the system, most likely for lack of memory; the rows done are kept: "
            + (f"run again with fewer --jobs than {jobs}" if jobs > 1 else "run the game in progress on a larger machine")
        ) from None
    except OSError as error:
        raise RecordError(f"cannot write the atlas's quality to {directory}: {error.strerror or error}") from None
    finally:
        bar.close()
    left = len(todo) - len(done)
    if left:
        log.warning("%s left to measure; run 'modiar atlas quality' again to go on", plural(left, "game"))
    return done


@dataclass(frozen=True)
class QualityRow:
    """One game's quality row (column -> value, quality_schema's order), its seconds by part and peak memory."""

    rules: str
    row: dict[str, Any]
    seconds: dict[str, float]
    peak_bytes: int | None


def _computed(games: list[Game], workers: int, until: float | None) -> Iterator[QualityRow]:
    """The games' rows as they come, on ``workers`` loky workers (in this process for one), none
    started after ``until`` (time.time()). joblib takes tasks from the generator ahead of the
    workers (as many as there are workers at a time), so a task checks the time itself as it starts."""
    if not games:
        return
    tasks = (
        delayed(_measured)(game.representative, game.fingerprint, engine.cache_folder(), workers > 1, until)
        for game in games
        if until is None or time.time() < until
    )
    rows = Parallel(n_jobs=workers, return_as="generator_unordered", pre_dispatch="n_jobs", batch_size=1)(tasks)
    yield from (row for row in rows if row is not None)


def _measured(name: str, fingerprint: str, cache: Path | None, worker: bool, until: float | None = None) -> QualityRow | None:
    """measure_quality of the rule set ``name``, or None, measuring nothing, once ``until``
    (time.time()) is past; in a ``worker`` process, which ends with its parent."""
    if until is not None and time.time() >= until:
        return None
    if worker:
        exit_with_parent()
        engine.set_cache_folder(cache)
    return measure_quality(engine.Rules.from_name(name), fingerprint, cache)


def measure_quality(rules: engine.Rules, fingerprint: str, cache: Path | None = None) -> QualityRow:
    """The quality row of ``rules`` (whose game has ``fingerprint``): each QUALITY_SPECS
    self-play's exact quality, read from the engine's cache folder where a sound one is kept
    there (a study of the same rules computes RULES.md's, pipeline.exact.quality), else computed
    with the tables and solution built in a scratch cache folder (in ``cache``/scratch/)."""
    row: dict[str, Any] = {"rules": rules.name, "game_fingerprint": fingerprint}
    seconds: dict[str, float] = {}
    found = {prefix: cached_quality(spec, rules) for prefix, spec in QUALITY_SPECS.items()}
    with peak_memory() as peak:
        if any(quality is None for quality in found.values()):
            with scratch_cache(cache):
                started = time.perf_counter()
                tables = load_tables(table_rules(rules), progress=False)
                solved(rules)  # into the scratch folder, and kept for perfect's policy (engine.players.search)
                seconds["tables_and_solve"] = time.perf_counter() - started
                for prefix, spec in QUALITY_SPECS.items():
                    if found[prefix] is None:
                        started = time.perf_counter()
                        found[prefix] = engine.exact_quality(spec, spec, rules=rules, tables=tables)
                        seconds[prefix] = time.perf_counter() - started
                del tables
    for prefix, quality in found.items():
        assert quality is not None
        row.update({f"{prefix}_{name}": float(value) for name, value in quality.as_dict().items()})
        outcome = (quality.south_win, quality.draw, quality.north_win, quality.unresolved)
        row.update({f"{prefix}_quality_{name}": float(value) for name, value in zip(OUTCOME, outcome, strict=True)})
    seconds["total"] = sum(seconds.values())
    return QualityRow(rules.name, row, seconds, peak.bytes)


def cached_quality(spec: str, rules: engine.Rules) -> engine.ExactQuality | None:
    """``spec``'s self-play quality under ``rules`` from the engine's cache folder, if a sound one is kept."""
    canonical = engine.canonical_spec(spec)
    return read_cached_quality(canonical, canonical, rules)


# ---------------------------------------------------------------------------------------------
# Rows


def quality_path(directory: Path, name: str, suffix: str = ".parquet") -> Path:
    return directory / QUALITY / f"{name}{suffix}"


def write_quality_row(directory: Path, row: QualityRow) -> None:
    """The row, then its record: the row counts only once its record is there."""
    data = parquet_bytes(pa.Table.from_pylist([row.row], schema=quality_schema()))
    path = quality_path(directory, row.rules)
    write_atomic(path, data)
    record = {
        "row": {"file": path.name, "bytes": len(data), "sha256": sha256(data)},
        "costs": {"seconds": row.seconds, "peak_bytes": row.peak_bytes, "host": socket.gethostname()},
    }
    write_json(quality_path(directory, row.rules, ".json"), record, _identity(row.rules), indent=1)


def read_quality_row(directory: Path, game: Game, frame: pl.DataFrame) -> dict[str, Any] | None:
    """The sound quality row of ``game`` in ``directory``, or None (computed again, with a warning
    when one was there but is damaged, of another game, or disagrees with the atlas's outcome)."""
    path = quality_path(directory, game.representative)
    try:
        record = read_json(quality_path(directory, game.representative, ".json"), _identity(game.representative))
    except DamagedFileError as error:
        log.warning("%s; measuring %s again", error, game.representative)
        return None
    if record is None:
        return None
    entry = record.get("row")
    if not isinstance(entry, dict) or entry.get("file") != path.name or file_sha256(path) != entry.get("sha256"):
        log.warning("the quality row %s is missing or does not match its record; measuring it again", path)
        return None
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as error:
        log.warning("the quality row %s is unreadable (%s); measuring it again", path, error)
        return None
    if table.schema != quality_schema() or table.num_rows != 1:
        log.warning("the quality row %s is not this version's; measuring it again", path)
        return None
    row: dict[str, Any] = table.to_pylist()[0]
    problem = _disagreement(row, game, frame)
    if problem:
        log.warning("the quality row %s %s; measuring it again", path, problem)
        return None
    return row


def _disagreement(row: dict[str, Any], game: Game, frame: pl.DataFrame) -> str | None:
    """What is wrong with ``row`` as ``game``'s, or None: another game's, or random self-play's
    outcome other than the atlas row's, or a measure out of its range."""
    if row["rules"] != game.representative or row["game_fingerprint"] != game.fingerprint:
        return f"is of another game than {game.representative}'s"
    atlas = frame.filter(pl.col("rules") == game.representative).row(0, named=True)
    aside = row["random_quality_unresolved"] + atlas["random_unresolved"] + AGREEMENT
    for name in ("south_win", "draw", "north_win"):
        if abs(row[f"random_quality_{name}"] - atlas[f"random_{name}"]) > aside:
            found, kept = row[f"random_quality_{name}"], atlas[f"random_{name}"]
            return f"gives random self-play's {name} {found:.12g}, not the atlas's {kept:.12g}"
    for prefix in QUALITY_SPECS:
        if not 0 <= row[f"{prefix}_comeback"] <= 1 + AGREEMENT or row[f"{prefix}_lead_changes"] < 0:
            return f"has {prefix}'s comeback or lead changes out of range"
    return None


def quality_frame(directory: Path, frame: pl.DataFrame | None = None) -> pl.DataFrame:
    """Every rule set of the atlas in ``directory`` whose game's quality is measured: ``rules``, the
    representative it was measured on (``quality_from``) and the quality columns (quality_schema's,
    but the fingerprint); empty when none is."""
    frame = atlas_frame(directory) if frame is None else frame
    columns = [name for name in quality_schema().names if name not in ("rules", "game_fingerprint")]
    rows = []
    for game in distinct_games(frame):
        row = read_quality_row(directory, game, frame) if quality_path(directory, game.representative).exists() else None
        if row is not None:
            figures = {column: row[column] for column in columns}
            rows += [{"rules": name, "quality_from": game.representative} | figures for name in game.rule_sets]
    schema = {"rules": pl.String, "quality_from": pl.String} | dict.fromkeys(columns, pl.Float64)
    return pl.DataFrame(rows, schema=schema)


def _row_costs(directory: Path, name: str) -> dict[str, float]:
    """The seconds and peak of the atlas row of ``name`` (its record), or {} when unknown."""
    try:
        record = read_json(row_path(directory, name, ".json"), row_identity(name))
    except DamagedFileError:
        return {}
    costs = record.get("costs") if isinstance(record, dict) else None
    if not isinstance(costs, dict):
        return {}
    seconds = costs.get("seconds")
    seconds = seconds if isinstance(seconds, dict) else {}
    found = {part: float(seconds.get(part) or 0.0) for part in ("tables", "solve", "random", "perfect")}
    peak = costs.get("peak_bytes")
    return found | ({"peak_bytes": float(peak)} if isinstance(peak, int) and not isinstance(peak, bool) else {})


def expected_seconds(costs: dict[str, float]) -> float:
    """A game's quality's expected seconds from its atlas row's ``costs`` (_row_costs): SECONDS_OVER_ROW
    times random self-play and perfect play, with the tables and the solution; one second when unknown."""
    played = costs.get("random", 0.0) + costs.get("perfect", 0.0)
    return max(1.0, costs.get("tables", 0.0) + costs.get("solve", 0.0) + SECONDS_OVER_ROW * played)


def expected_bytes(costs: dict[str, float]) -> int:
    """A game's quality's expected peak memory: BYTES_OVER_ROW times its atlas row's peak (0 when unknown)."""
    return round(BYTES_OVER_ROW * costs.get("peak_bytes", 0.0))


def _identity(name: str) -> dict[str, str]:
    return {"kind": "atlas quality row", "rules": name, "engine": engine.ENGINE_VERSION}
