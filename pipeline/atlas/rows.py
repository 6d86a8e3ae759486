"""An atlas folder's rows: one rule set's row and record, its STARTED mark, and what each cost.

    rows/<rule set>.parquet   its row (pipeline.atlas.analyse.schema)
    rows/<rule set>.json      the row file's SHA-256, and the task's seconds per part, peak
                              memory, what that peak counts (PEAK_MEASURE) and host; sealed as
                              that rule set's row (engine.store.integrity), written last
    rows/<rule set>.started   while its task is in flight: the memory a worker has, how many
                              runs were killed on it before and the run; written by the worker
                              as it starts the task, removed with the row, or as the run ends,
                              but left by a run the system killed

A row counts as done only once its record is there and matches it, so a row whose record is
missing, fails its seal or does not match its file, or whose figures do not add up
(pipeline.runs.sanity), is computed again, with a warning. A sound row kept from before the
verdict columns (pipeline.atlas.analyse.kept_schema) reads back with them null, as a row that
``modiar atlas run`` completes (pipeline.atlas.analyse.supplement) rather than computes again.
"""

from __future__ import annotations

import json
import logging
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

import engine
from engine.store import DamagedFileError, read_json, write_atomic, write_json
from engine.tables import positions_of
from pipeline.atlas.analyse import SELF_PLAY_SPECS, UNSHARED, Analysis, kept_schema, schema
from pipeline.runs.records import check_rows, file_sha256, parquet_bytes, sha256
from pipeline.runs.sanity import InsaneRowError, check_atlas_row

log = logging.getLogger(__name__)
ROWS = "rows"
STARTED = ".started"  # rows/<rule set>.started: its task is in flight, or was when its run was killed
# What an analysis's peak counts (pipeline.atlas.analyse.peak_memory): resident memory less the
# pages shared with files, which the system writes out rather than kill the process for. Older
# records, without this field, are taken as resident peaks: most are, the solver's log (since
# file-backed) with them, up to 21 GB where such a rule set now holds 6 (docs/atlas.md, "Memory, here").
PEAK_MEASURE = UNSHARED


@dataclass(frozen=True)
class Cost:
    """What analysing a rule set took, as its row's record says: seconds and, if measured, the
    most memory the process held, and whether that counts the unshared memory only (PEAK_MEASURE)
    or all resident memory (an older record's, which overstates it)."""

    seconds: float
    peak_bytes: int | None = None
    unshared: bool = False


@dataclass(frozen=True)
class Row:
    """A finished task's row (of schema(): a row kept from before the verdict columns has them
    null, and is not ``complete``), and the costs its record keeps."""

    table: pa.Table
    costs: dict[str, Any] | None
    complete: bool = True


def row_path(directory: Path, name: str, suffix: str = ".parquet") -> Path:
    return directory / ROWS / f"{name}{suffix}"


def write_row(directory: Path, analysis: Analysis) -> None:
    """The row, then its record (the row file's SHA-256 and the task's costs): a row counts as
    done only once its record is there."""
    data = parquet_bytes(pa.Table.from_pylist([analysis.row], schema=schema()))
    path = row_path(directory, analysis.rules)
    write_atomic(path, data)
    costs = {"seconds": analysis.seconds, "peak_bytes": analysis.peak_bytes, "peak_measure": analysis.peak_measure}
    record = {
        "row": {"file": path.name, "bytes": len(data), "sha256": sha256(data)},
        "costs": costs | {"host": socket.gethostname()},
    }
    write_json(row_path(directory, analysis.rules, ".json"), record, row_identity(analysis.rules), indent=1)


def read_row(directory: Path, rules: engine.Rules) -> Row | None:
    """A finished task's row and costs, or None when there is none or it is damaged (then it is
    computed again, with a warning)."""
    path = row_path(directory, rules.name)
    try:
        record = read_json(row_path(directory, rules.name, ".json"), row_identity(rules.name))
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
    complete = table.schema == schema()
    if not (complete or table.schema == kept_schema()) or table.num_rows != 1 or table.column("rules")[0].as_py() != rules.name:
        log.warning("the row %s is not this version's row of %s; analysing it again", path, rules.name)
        return None
    if not complete:
        nulls = {
            name: pa.nulls(1, kind)
            for name, kind in zip(schema().names, schema().types, strict=True)
            if name not in table.schema.names
        }
        table = pa.Table.from_pydict(
            {name: table.column(name) if name in table.schema.names else nulls[name] for name in schema().names}, schema=schema()
        )
    try:
        check_row(table.to_pylist()[0], rules)
    except InsaneRowError as error:
        log.warning("the row %s does not add up (%s); analysing %s again", path, error, rules.name)
        return None
    costs = record.get("costs")
    return Row(table, costs if isinstance(costs, dict) else None, complete)


def check_row(row: dict[str, Any], rules: engine.Rules) -> None:
    """Refuse (InsaneRowError) an atlas row of ``rules`` whose figures do not add up."""
    check_atlas_row(row, rules, positions_of(rules), SELF_PLAY_SPECS)


def _check_own_row(row: dict[str, Any]) -> None:
    """check_row against the rule set the row names."""
    check_row(row, engine.Rules.from_name(str(row.get("rules"))))


def checked_table(path: Path) -> pa.Table:
    """An atlas.parquet whose rows each add up (RecordError naming the first that does not)."""
    table = pq.read_table(path)
    check_rows(path, table.to_pylist(), _check_own_row, "the row of {rules}", "run 'modiar atlas run' again to rewrite it")
    return table


def kept_costs(directory: Path) -> dict[str, Cost]:
    """What each row kept in ``directory`` cost, from its record (a record that is damaged, of
    another engine or without costs is passed over: its rule set is computed again)."""
    kept: dict[str, Cost] = {}
    for path in sorted((directory / ROWS).glob("*.json")):
        try:
            rules = engine.Rules.from_name(path.stem)
            record = read_json(path, row_identity(rules.name))
        except (ValueError, TypeError, DamagedFileError):
            continue
        costs = record.get("costs") if isinstance(record, dict) else None
        if isinstance(costs, dict) and (cost := _cost(costs)) is not None:
            kept[rules.name] = cost
    return kept


@dataclass(frozen=True)
class Started:
    """A task's STARTED mark: the memory a worker has, how many runs in a row were killed on it
    before, and the run that writes it (so that a run removes its own marks only, leaving those
    of rule sets that a killed run left and this one did not start)."""

    path: Path
    worker_bytes: int
    runs_killed_before: int
    run: str

    def write(self) -> None:
        mark = {"worker_bytes": self.worker_bytes, "runs_killed_before": self.runs_killed_before, "run": self.run}
        write_atomic(self.path, json.dumps(mark).encode())

    def remove(self) -> None:
        """Remove the mark if this run wrote it."""
        try:
            found = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return
        if isinstance(found, dict) and found.get("run") == self.run:
            self.path.unlink(missing_ok=True)


def killed_marks(directory: Path, rule_sets: list[engine.Rules]) -> dict[str, tuple[int, int]]:
    """The rule sets with a STARTED mark left by a killed run: runs killed in a row, a worker's memory in the last."""
    found = {rules.name: _killed(directory, rules.name) for rules in rule_sets}
    return {name: killed for name, killed in found.items() if killed is not None}


def _killed(directory: Path, name: str) -> tuple[int, int] | None:
    """How many runs in a row were killed analysing ``name`` and the memory a worker had in the
    last, from its STARTED mark (a mark left when no run holds the folder); None without one,
    or with one that cannot be read: the rule set is then tried again."""
    try:
        found = json.loads(row_path(directory, name, STARTED).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(found, dict):
        return None
    room, before = found.get("worker_bytes"), found.get("runs_killed_before")
    if not isinstance(room, int) or not isinstance(before, int) or isinstance(room, bool) or isinstance(before, bool):
        return None
    return (before + 1, room) if room > 0 and before >= 0 else None


def _cost(costs: dict[str, Any]) -> Cost | None:
    seconds = costs.get("seconds")
    total = seconds.get("total") if isinstance(seconds, dict) else None
    if not isinstance(total, int | float) or total <= 0:
        return None
    peak = costs.get("peak_bytes")
    peak = peak if isinstance(peak, int) and not isinstance(peak, bool) and peak > 0 else None
    return Cost(float(total), peak, costs.get("peak_measure") == PEAK_MEASURE)


def row_identity(name: str) -> dict[str, str]:
    """What a row's record says it is (engine.store.integrity)."""
    return {"kind": "atlas row", "rules": name, "engine": engine.ENGINE_VERSION}
