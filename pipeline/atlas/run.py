"""The Modiar atlas: every rule set of a grid analysed exactly, one task a rule set.

    name = "atlas"                     # letters, digits, - and _: it becomes a folder name
    [grid]                             # rule fields, each with the list of its values; a field
    feeding = [true, false]            # left out keeps RULES.md's value
    grand_slam = ["prohibited", "allowed", "no_capture"]
    [grids.stones]                     # more grids (optional): the atlas is the union of them all
    stones_per_pit = [3, 4, 5, 6, 8]
    [parts.quick]                      # named parts (optional): ``--part quick`` computes only the
    capture_rows = ["either"]          # rule sets whose fields take these values

A grid's rule sets come in the order of its product, its first field varying slowest; a rule
set listed by two grids is computed once, where it first comes. Each is one task
(pipeline.atlas.analyse.analyse: tables, solution, exact outcomes, exploitability), run by joblib on
loky workers or a dask cluster. A finished task is written at once, whole or not at all:

    data/<name>/rows/<rule set>.parquet   its row (pipeline.atlas.analyse.schema)
    data/<name>/rows/<rule set>.json      the row file's SHA-256, and the task's seconds per
                                          part, peak memory and host; sealed as that rule
                                          set's row (engine.integrity), written last
    data/<name>/rows/<rule set>.started   while its task is in flight: the memory a worker
                                          has, and how many runs were killed on it before;
                                          removed with the row, or as the run ends, but left
                                          by a run the system killed (refusals, KILLS_REFUSED)

so a killed run loses only the tasks in progress, and a second run computes only what is missing
(a task builds its files in a scratch folder of the engine's cache folder, removed as it ends:
pipeline.atlas.analyse); a row whose record is missing, fails its seal or does not match its
file is computed again, with a warning. Every run ends by writing

    data/<name>/atlas.parquet    one row per rule set done, in the atlas's order
    data/<name>/manifest.json    the config, the versions, each rule set's cost, the rule sets
                                 refused for memory, and atlas.parquet's SHA-256 (sealed, and the
                                 folder held while a run writes it: pipeline.runfolder)

The rows depend on nothing but their rule sets, so the atlas has the same bytes whatever the
number of workers, the backend, or how many runs it took. A task whose expected memory (expected_bytes)
exceeds what a worker has is refused up front, in one line.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import socket
import statistics
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from joblib import Parallel, delayed
from joblib.externals.loky.process_executor import TerminatedWorkerError
from tqdm import tqdm

import engine
from engine.cache import write_atomic
from engine.integrity import DamagedFileError, read_json, write_json
from engine.rules import RULE_FIELD, RuleField
from pipeline.atlas.analyse import Analysis, analyse, estimated_bytes, positions_of, schema
from pipeline.config import ConfigError, check_keys, load_config, parse_name, shown
from pipeline.paths import DATA
from pipeline.progress import Ticker
from pipeline.records import RecordError, file_sha256, parquet_bytes, sha256, versions
from pipeline.runfolder import ATLAS as ATLAS_RUN
from pipeline.runfolder import claim, read_listed_manifest, write_manifest
from pipeline.workers import backend, check_backend, exit_with_parent, memory_bytes

log = logging.getLogger(__name__)
CONFIG_KEYS = ("name", "grid", "grids", "parts")
REQUIRED = ("name", "grid")
ATLAS = "atlas.parquet"
ROWS = "rows"
STARTED = ".started"  # rows/<rule set>.started: its task is in flight, or was when its run was killed
KILLS_REFUSED = 2  # runs killed in a row on a rule set after which a worker with no more memory refuses it
FIELDS = tuple(RULE_FIELD)  # the rule fields a grid may vary, in their declared order
# The most rule sets an atlas may hold: at about 3 minutes a 7-stone rule set (README, one rule
# set of the atlas: 185 s) on 2 workers, 10,000 would take ten days; listing and checking them, about 1.5 s.
MAX_RULE_SETS = 10_000
# Seconds a task takes per position of its index, for the estimates only, when no rule set
# like it has been analysed yet (measured: ~170 s for a 7-stone rule set of 12.3 million
# positions on this project's machine, with captures settling games early; expected_seconds).
SECONDS_PER_POSITION = 1.4e-5
# The fields whose values decide how long games run, and so what a rule set costs: singletons,
# captures in one row only and sowing past the origin make games that cycle to the cap, which
# the exact outcomes follow ply by ply (3 to 8 times RULES.md's cost at 7 stones a pit).
LENGTH_FIELDS = ("stones_per_pit", "sow_origin", "capture_rows", "min_stones_to_play")
# The margin above the most memory a kept rule set alike held, for one not yet analysed
# (expected_bytes): measured peaks of the same kind differ by up to 10 % (3.1 to 3.3 GB, 6.5 to 6.9).
PEAK_MARGIN = 1.15


@dataclass(frozen=True)
class Atlas:
    """A checked atlas config (see the module docstring)."""

    name: str
    grids: tuple[tuple[str, dict[str, tuple[Any, ...]]], ...]  # (label, field -> values), [grid] first
    parts: dict[str, dict[str, tuple[Any, ...]]]

    def rule_sets(self, part: str | None = None) -> list[engine.Rules]:
        """The atlas's rule sets in order, each once; with ``part``, those of that part only."""
        found: dict[engine.Rules, None] = {}
        for _, grid in self.grids:
            for values in itertools.product(*grid.values()):
                found[engine.Rules(**dict(zip(grid, values, strict=True)))] = None
        if part is None:
            return list(found)
        if part not in self.parts:
            known = ", ".join(self.parts) or "none"
            raise ConfigError(f"the atlas {self.name} has no part {part!r}; its parts: {known}")
        wanted = self.parts[part]
        return [rules for rules in found if all(getattr(rules, key) in values for key, values in wanted.items())]

    def config(self) -> dict[str, Any]:
        """The config as plain JSON types (what the manifest keeps)."""
        grids = {label: _plain_grid(grid) for label, grid in self.grids}
        return {"name": self.name, "grids": grids, "parts": {label: _plain_grid(part) for label, part in self.parts.items()}}


def atlas_of_manifest(manifest: dict[str, Any]) -> Atlas:
    """The Atlas whose config a manifest keeps (Atlas.config), checked as a config file is."""
    config = manifest["config"]
    try:
        grids = dict(config["grids"])
        return parse_atlas({"name": config["name"], "grid": grids.pop("grid"), "grids": grids, "parts": config["parts"]})
    except (ConfigError, KeyError, TypeError, AttributeError) as error:
        raise RecordError(f"the manifest's config is not an atlas config ({error})") from None


def load_atlas(path: str | Path) -> Atlas:
    """Read and check an atlas config; any mistake raises ConfigError naming the file."""
    return load_config(Path(path), "atlas", parse_atlas)


def parse_atlas(data: dict[str, Any]) -> Atlas:
    """The Atlas a parsed TOML table describes, checked key by key."""
    check_keys(data, CONFIG_KEYS, REQUIRED, "atlas")
    grids = [("grid", _grid(data["grid"], "[grid]"))]
    more = data.get("grids", {})
    if not isinstance(more, dict):
        raise ConfigError(f"grids must be a table of [grids.LABEL] tables, not {shown(more)}")
    grids += [(str(label), _grid(grid, f"[grids.{label}]")) for label, grid in more.items()]
    _check_size(grids)
    for label, grid in grids:
        where = "[grid]" if label == "grid" else f"[grids.{label}]"
        _check_values(grid, where)
        _check_combinations(grid, where)
    parts = data.get("parts", {})
    if not isinstance(parts, dict):
        raise ConfigError(f"parts must be a table of [parts.LABEL] tables, not {shown(parts)}")
    atlas = Atlas(
        parse_name(data["name"]),
        tuple(grids),
        {str(label): _check_values(_grid(part, f"[parts.{label}]"), f"[parts.{label}]") for label, part in parts.items()},
    )
    for label in atlas.parts:
        if not atlas.rule_sets(label):
            raise ConfigError(f"[parts.{label}] holds none of the atlas's rule sets")
    return atlas


def _grid(table: object, where: str) -> dict[str, tuple[Any, ...]]:
    """A table of rule fields, each with a non-empty list of values, of at most MAX_RULE_SETS
    combinations: its shape only, so that a grid of millions is refused before a value is
    looked at (checking one takes 0.3 ms)."""
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table of rule fields, each with a list of values, not {shown(table)}")
    grid: dict[str, tuple[Any, ...]] = {}
    size = 1
    for key, values in table.items():
        if key not in FIELDS:
            raise ConfigError(f"unknown rule {key!r} in {where}; the rules are {', '.join(FIELDS)}")
        if not isinstance(values, list) or not values:
            raise ConfigError(
                f"{where} {key} must be a non-empty list of values, such as {key} = [{_example(key)}], not {shown(values)}"
            )
        size *= len(values)
        if size > MAX_RULE_SETS:
            raise ConfigError(f"{where} makes more than {MAX_RULE_SETS:,} rule sets; an atlas takes at most {MAX_RULE_SETS:,}")
        grid[key] = tuple(tuple(value) if isinstance(value, list) else value for value in values)
    return grid


def _check_values(grid: dict[str, tuple[Any, ...]], where: str) -> dict[str, tuple[Any, ...]]:
    """The grid, once each value is one its field takes, and is listed once."""
    for key, values in grid.items():
        for value in values:
            try:
                engine.Rules(**{key: value})
            except (ValueError, TypeError) as error:
                raise ConfigError(f"{where} {key}: {error}") from None
        # Only once every value is one of the field's (true == 1 in Python, but 1 is no feeding
        # rule); valid values are hashable, a list of stone counts having become a tuple.
        seen: set[Any] = set()
        for value in values:
            if value in seen:
                raise ConfigError(f"{where} {key} lists {_toml(value)} twice; list each value once")
            seen.add(value)
    return grid


def _check_size(grids: list[tuple[str, dict[str, tuple[Any, ...]]]]) -> None:
    """Refuse an atlas of more than MAX_RULE_SETS rule sets (its grids' products summed) before any is made."""
    size = sum(math.prod(len(values) for values in grid.values()) for _, grid in grids)
    if size > MAX_RULE_SETS:
        raise ConfigError(f"the grids make {size:,} rule sets; an atlas takes at most {MAX_RULE_SETS:,}: split it")


def _check_combinations(grid: dict[str, tuple[Any, ...]], where: str) -> None:
    """Refuse a grid one of whose rule sets cannot be (each value is valid alone, not every
    combination: 7 stones to play a pit is no rule when 3 stones a pit make 18 in all)."""
    for values in itertools.product(*grid.values()):
        fields = dict(zip(grid, values, strict=True))
        try:
            engine.Rules(**fields)
        except (ValueError, TypeError) as error:
            named = ", ".join(f"{key} = {_toml(value)}" for key, value in fields.items())
            raise ConfigError(f"{where} makes the rule set {named}, which cannot be: {error}") from None


def _toml(value: Any) -> str:
    """A value as the config spells it: true, 3, "either", [2, 4, 6]."""
    return json.dumps(RuleField.plain(value))


def _example(key: str) -> str:
    return _toml(RULE_FIELD[key].default)


def _plain_grid(grid: dict[str, tuple[Any, ...]]) -> dict[str, list[Any]]:
    return {key: [RuleField.plain(value) for value in values] for key, values in grid.items()}


# ---------------------------------------------------------------------------------------------
# Running


def run_atlas(
    atlas: Atlas,
    out: Path | None = None,
    *,
    part: str | None = None,
    jobs: int = 2,
    backend_name: str = "loky",
    scheduler: str | None = None,
    progress: bool = True,
) -> Path:
    """Analyse every rule set of ``atlas`` (of ``part`` only, when given) not yet in ``out``
    (default data/<name>/), then write atlas.parquet and the manifest; returns the folder.
    A folder holding another atlas, or anything but an atlas's files, is refused."""
    check_backend(backend_name)
    wanted = atlas.rule_sets(part)
    directory = DATA / atlas.name if out is None else out
    with claim(directory, ATLAS_RUN, atlas.config()), backend(backend_name, scheduler, jobs):
        try:
            (directory / ROWS).mkdir(exist_ok=True)
        except OSError as error:
            raise RecordError(f"cannot write the atlas to {directory}: {error.strerror or error}") from None
        # Once the workers are there (a scheduler that does not answer leaves nothing), and before
        # any task, so that a killed first run leaves a folder the next one resumes.
        _write_manifest(directory, atlas)
        missing = [rules for rules in wanted if _read_row(directory, rules) is None]
        room = _worker_memory(backend_name, jobs)
        kept = kept_costs(directory)
        killed = killed_marks(directory, missing)  # read once, before this run writes its own
        refused = refusals(directory, missing, room, kept, killed)
        for message in refused.values():
            log.warning("%s", message)
        todo = run_order([rules for rules in missing if rules.name not in refused], killed)
        try:
            _compute(directory, atlas, todo, (jobs, room), (kept, killed), loky=backend_name == "loky", progress=progress)
        finally:
            _write_manifest(directory, atlas, refused)
    return directory


def run_order(todo: list[engine.Rules], killed: dict[str, tuple[int, int]]) -> list[engine.Rules]:
    """The order a run takes ``todo`` in: the largest first (the longest, so the workers end
    together), but after them the rule sets alike (LENGTH_FIELDS, which hold alike) to one whose
    last run was killed on it (``killed``: killed_marks), and the killed ones last."""
    kinds = {_length_key(engine.Rules.from_name(name)) for name in killed}
    return sorted(todo, key=lambda rules: (rules.name in killed, _length_key(rules) in kinds, -positions_of(rules)))


def _compute(
    directory: Path,
    atlas: Atlas,
    todo: list[engine.Rules],
    workers: tuple[int, int],
    known: tuple[dict[str, Cost], dict[str, tuple[int, int]]],
    *,
    loky: bool,
    progress: bool,
) -> None:
    """Run the tasks on ``workers`` (how many, the memory of each), writing each one's row as it
    comes back (``known``: the costs of the rows already there, for the bar's estimate, and the
    killed_marks found as the run began). Each task in flight has its STARTED mark, removed when
    its row is written or the run ends, but kept when a worker is killed, or the run itself."""
    if not todo:
        return
    (jobs, room), (kept, killed_before) = workers, known
    expected = {rules.name: round(expected_seconds(rules, kept)) for rules in todo}
    bar = tqdm(
        total=sum(expected.values()),
        desc=f"atlas {atlas.name}: {len(todo)} rule set{'' if len(todo) == 1 else 's'} to analyse",
        bar_format="{desc}: {percentage:3.0f}%|{bar:20}| {elapsed} elapsed, about {remaining} left{postfix}",
        disable=not progress,
    )
    ticker = Ticker(bar)
    started: list[str] = []
    killed = False
    try:
        # On dask every worker of the cluster takes tasks (-1); one task a worker: see _dispatched.
        results = Parallel(n_jobs=jobs if loky else -1, return_as="generator_unordered", pre_dispatch="n_jobs", batch_size=1)(
            _dispatched(directory, todo, (room, killed_before), started, loky)
        )
        for analysis in _surviving(results, jobs):
            _write_row(directory, analysis)
            _row_path(directory, analysis.rules, STARTED).unlink(missing_ok=True)
            bar.set_postfix_str(f"last done: {analysis.rules} ({analysis.seconds['total']:.0f} s)", refresh=False)
            bar.update(expected[analysis.rules])
    except WorkerKilledError:
        killed = True
        raise
    finally:
        if not killed:
            for name in started:
                _row_path(directory, name, STARTED).unlink(missing_ok=True)
        ticker.stop()
        bar.close()


def _dispatched(
    directory: Path, todo: list[engine.Rules], marks: tuple[int, dict[str, tuple[int, int]]], started: list[str], loky: bool
) -> Iterator[Any]:
    """The tasks, each one's STARTED mark written (the memory a worker has, and the kills its
    killed_marks entry counts) as joblib takes it, when a worker is free to start it (joblib's
    default takes twice the workers' tasks ahead, whose marks would count kills of rule sets never started)."""
    room, killed = marks
    for rules in todo:
        mark = {"worker_bytes": room, "runs_killed_before": killed.get(rules.name, (0, 0))[0]}
        write_atomic(_row_path(directory, rules.name, STARTED), json.dumps(mark).encode())
        started.append(rules.name)
        yield delayed(_task)(rules, loky, engine.cache_folder())


class WorkerKilledError(RecordError):
    """A worker of the atlas was killed by the system (its tasks' STARTED marks are kept)."""


def _surviving(results: Iterator[Analysis], jobs: int) -> Iterator[Analysis]:
    """The tasks' results as they come; a worker killed by the system (out of memory, most
    likely: a rule set whose games cycle to the cap may need more than expected_bytes) ends the
    run with a one-line RecordError, the rows already done kept."""
    try:
        yield from results
    except TerminatedWorkerError:
        raise WorkerKilledError(
            "a worker of the atlas was killed by the system, most likely for lack of memory (a rule set needed more "
            f"than its estimate); the rows done are kept: run again with fewer --jobs than {jobs}"
            if jobs > 1
            else "the atlas's worker was killed by the system, most likely for lack of memory; the rows done are kept: "
            "run the rule set in progress on a larger machine"
        ) from None


def _task(rules: engine.Rules, loky: bool, cache: Path | None) -> Analysis:
    """One rule set analysed (in a worker), its scratch files in ``cache``/scratch/."""
    if loky:
        exit_with_parent()
    return analyse(rules, cache)


@dataclass(frozen=True)
class Cost:
    """What analysing a rule set took, as its row's record says: seconds and, if measured, the
    most memory the process held (pipeline.atlas.analyse.Analysis)."""

    seconds: float
    peak_bytes: int | None = None


def expected_seconds(rules: engine.Rules, kept: dict[str, Cost]) -> float:
    """What analysing ``rules`` should take: the median of the seconds ``kept`` (rule set name ->
    Cost, kept_costs) records for the rule sets alike in every LENGTH_FIELDS field, else
    SECONDS_PER_POSITION a position."""
    alike = [cost.seconds for cost in _alike(rules, kept)]
    if alike:
        return statistics.median(alike)
    return max(1.0, SECONDS_PER_POSITION * positions_of(rules))


def expected_bytes(rules: engine.Rules, kept: dict[str, Cost]) -> int:
    """The memory analysing ``rules`` should need: pipeline.atlas.analyse.estimated_bytes (a
    size a position), or PEAK_MARGIN times the most that a kept rule set alike in every
    LENGTH_FIELDS field held, if more (games that cycle hold more: 13 GB where the size said 4.4)."""
    peaks = [cost.peak_bytes for cost in _alike(rules, kept) if cost.peak_bytes]
    return max([estimated_bytes(rules), *(round(PEAK_MARGIN * peak) for peak in peaks)])


def _alike(rules: engine.Rules, kept: dict[str, Cost]) -> list[Cost]:
    return [cost for name, cost in kept.items() if _length_key(engine.Rules.from_name(name)) == _length_key(rules)]


def kept_costs(directory: Path) -> dict[str, Cost]:
    """What each row kept in ``directory`` cost, from its record (a record that is damaged, of
    another engine or without costs is passed over: its rule set is computed again)."""
    kept: dict[str, Cost] = {}
    for path in sorted((directory / ROWS).glob("*.json")):
        try:
            rules = engine.Rules.from_name(path.stem)
            record = read_json(path, _row_identity(rules.name))
        except (ValueError, TypeError, DamagedFileError):
            continue
        costs = record.get("costs") if isinstance(record, dict) else None
        seconds = costs.get("seconds") if isinstance(costs, dict) else None
        total = seconds.get("total") if isinstance(seconds, dict) else None
        if isinstance(total, int | float) and total > 0:
            peak = costs.get("peak_bytes") if isinstance(costs, dict) else None
            kept[rules.name] = Cost(float(total), peak if isinstance(peak, int) and peak > 0 else None)
    return kept


def _length_key(rules: engine.Rules) -> tuple[Any, ...]:
    return tuple(getattr(rules, name) for name in LENGTH_FIELDS)


def _worker_memory(backend_name: str, jobs: int) -> int:
    """The memory one task may take: this machine's shared by the loky workers, or the smallest
    limit among the dask cluster's workers (dask's memory_limit, their machine's when 0)."""
    if backend_name == "loky":
        return memory_bytes() // jobs
    from distributed import get_client

    workers = get_client().scheduler_info()["workers"].values()
    limits = [int(worker.get("memory_limit") or 0) for worker in workers]
    known = [limit for limit in limits if limit > 0]
    return min(known) if known else memory_bytes() // max(1, len(limits))


def killed_marks(directory: Path, rule_sets: list[engine.Rules]) -> dict[str, tuple[int, int]]:
    """The rule sets with a STARTED mark left by a killed run: runs killed in a row, a worker's memory in the last."""
    found = {rules.name: _killed(directory, rules.name) for rules in rule_sets}
    return {name: killed for name, killed in found.items() if killed is not None}


def refusals(
    directory: Path, missing: list[engine.Rules], room: int, kept: dict[str, Cost], killed_before: dict[str, tuple[int, int]]
) -> dict[str, str]:
    """The rule sets of ``missing`` that a worker with ``room`` bytes should not take, each with
    its one-line reason: more than room expected (expected_bytes), or killed before it ended in
    KILLS_REFUSED runs in a row, the last one's workers having no less room (its STARTED mark:
    an analysis killed by the system for memory leaves nothing else; one kill may be the user's)."""
    refused = {}
    for rules in missing:
        killed = killed_before.get(rules.name)
        if killed is not None and killed[0] >= KILLS_REFUSED and room <= killed[1]:
            path = _row_path(directory, rules.name, STARTED)
            refused[rules.name] = (
                f"refused {rules.name}: its analysis was killed before it ended in the last {killed[0]} runs (most likely "
                f"for lack of memory), the last with {killed[1] / 2**30:.1f} GB a worker, and a worker has "
                f"{room / 2**30:.1f} GB here; run it with fewer --jobs or on a larger worker, or delete {path} to try again"
            )
        elif expected_bytes(rules, kept) > room:
            refused[rules.name] = _refusal(rules, room, kept)
    return refused


def _killed(directory: Path, name: str) -> tuple[int, int] | None:
    """How many runs in a row were killed analysing ``name`` and the memory a worker had in the
    last, from its STARTED mark (a mark left when no run holds the folder); None without one,
    or with one that cannot be read: the rule set is then tried again."""
    try:
        found = json.loads(_row_path(directory, name, STARTED).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(found, dict):
        return None
    room, before = found.get("worker_bytes"), found.get("runs_killed_before")
    if not isinstance(room, int) or not isinstance(before, int) or isinstance(room, bool) or isinstance(before, bool):
        return None
    return (before + 1, room) if room > 0 and before >= 0 else None


def _refusal(rules: engine.Rules, room: int, kept: dict[str, Cost]) -> str:
    return (
        f"refused {rules.name}: its analysis needs about {expected_bytes(rules, kept) / 2**30:.1f} GB "
        f"({positions_of(rules):,} positions) and a worker has {room / 2**30:.1f} GB; "
        "run it with fewer --jobs or on a larger worker"
    )


# ---------------------------------------------------------------------------------------------
# Files


def _row_path(directory: Path, name: str, suffix: str = ".parquet") -> Path:
    return directory / ROWS / f"{name}{suffix}"


def _row_identity(name: str) -> dict[str, str]:
    """What a row's record says it is (engine.integrity)."""
    return {"kind": "atlas row", "rules": name, "engine": engine.ENGINE_VERSION}


def _write_row(directory: Path, analysis: Analysis) -> None:
    """The row, then its record (the row file's SHA-256 and the task's costs): a row counts as
    done only once its record is there."""
    data = parquet_bytes(pa.Table.from_pylist([analysis.row], schema=schema()))
    path = _row_path(directory, analysis.rules)
    write_atomic(path, data)
    record = {
        "row": {"file": path.name, "bytes": len(data), "sha256": sha256(data)},
        "costs": {"seconds": analysis.seconds, "peak_bytes": analysis.peak_bytes, "host": socket.gethostname()},
    }
    write_json(_row_path(directory, analysis.rules, ".json"), record, _row_identity(analysis.rules), indent=1)


def _read_row(directory: Path, rules: engine.Rules) -> _Row | None:
    """A finished task's row and costs, or None when there is none or it is damaged (then it is
    computed again, with a warning)."""
    path = _row_path(directory, rules.name)
    try:
        record = read_json(_row_path(directory, rules.name, ".json"), _row_identity(rules.name))
    except DamagedFileError as error:
        log.warning("%s; analysing %s again", error, rules.name)
        return None
    if record is None:
        return None
    entry = record.get("row")
    if not isinstance(entry, dict) or entry.get("file") != path.name or file_sha256(path) != entry.get("sha256"):
        log.warning("the row %s is missing or does not match its record; analysing %s again", path, rules.name)
        return None
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as error:
        log.warning("the row %s is unreadable (%s); analysing %s again", path, error, rules.name)
        return None
    if table.schema != schema() or table.num_rows != 1 or table.column("rules")[0].as_py() != rules.name:
        log.warning("the row %s is not this version's row of %s; analysing it again", path, rules.name)
        return None
    costs = record.get("costs")
    return _Row(table, costs if isinstance(costs, dict) else None)


@dataclass(frozen=True)
class _Row:
    table: pa.Table
    costs: dict[str, Any] | None


def _write_manifest(directory: Path, atlas: Atlas, refused: dict[str, str] | None = None) -> None:
    """atlas.parquet from the rows done, in the atlas's order, and the manifest."""
    rows = [(rules, _read_row(directory, rules)) for rules in atlas.rule_sets()]
    done = [(rules, row) for rules, row in rows if row is not None]
    data = parquet_bytes(pa.concat_tables([row.table for _, row in done]) if done else schema().empty_table())
    try:
        write_atomic(directory / ATLAS, data)
        manifest = {
            "atlas": atlas.name,
            "config": atlas.config(),
            "versions": versions(),
            "rule_sets": len(rows),
            "done": len(done),
            "refused": refused or {},
            "costs": {rules.name: row.costs for rules, row in done},
            "files": {ATLAS: {"bytes": len(data), "sha256": sha256(data)}},
        }
        write_manifest(directory, ATLAS_RUN, manifest)
    except OSError as error:
        raise RecordError(f"cannot write the atlas to {directory}: {error.strerror or error}") from None


def read_atlas_manifest(directory: Path) -> dict[str, Any]:
    """An atlas folder's manifest, its seal and config checked, with a table of files."""
    return read_listed_manifest(directory, ATLAS_RUN)


def rows_done(directory: Path) -> list[str]:
    """The rule sets whose rows in ``directory`` are sound (sealed, of this engine, matching their
    records), in the atlas's order: what a run there would not compute again."""
    atlas = atlas_of_manifest(read_atlas_manifest(directory))
    return [rules.name for rules in atlas.rule_sets() if _read_row(directory, rules) is not None]


def read_atlas(directory: Path) -> pa.Table:
    """The atlas's table, after checking it against the manifest."""
    manifest = read_atlas_manifest(directory)
    entry = manifest["files"].get(ATLAS)
    path = directory / ATLAS
    if not isinstance(entry, dict) or file_sha256(path) != entry.get("sha256"):
        raise RecordError(
            f"{path} is missing or does not match its checksum in the manifest; run 'modiar atlas run' again to rewrite it"
        )
    return pq.read_table(path)
