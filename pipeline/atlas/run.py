"""The Modiar atlas: every rule set of a grid analysed exactly, one task a rule set.

The atlas's config (pipeline.atlas.config) gives its grids of rule sets and its parts. Each rule set
is one task
(pipeline.atlas.analyse.analyse: tables, solution, exact outcomes, exploitability), run by joblib on
loky workers or a dask cluster, as pipeline.atlas.plan plans them: with ``--jobs N``, N workers
for the rule sets that fit 1/N of the machine, then fewer for the rest, and the rule sets no
worker here holds refused up front, in one line. A finished task is written at once, whole or
not at all, as its row in data/<name>/rows/ (pipeline.atlas.rows), so a killed run loses only
the tasks in progress, and a second run computes only what is missing (a task builds its files
in a scratch folder of the engine's cache folder, removed as it ends: pipeline.atlas.analyse).
A row kept from before the verdict columns is completed rather than computed again: its task
adds them (pipeline.atlas.analyse.supplement) and keeps the row's other figures.
Every run ends by writing

    data/<name>/atlas.parquet    one row per rule set done, in the atlas's order
    data/<name>/manifest.json    the config, the versions, each rule set's cost, the rule sets
                                 refused for memory, and atlas.parquet's SHA-256 (sealed, and the
                                 folder held while a run writes it: pipeline.runs.runfolder)

The rows depend on nothing but their rule sets, so the atlas has the same bytes whatever the
number of workers, the backend, or how many runs it took.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
from joblib import Parallel, delayed
from joblib.externals.loky.process_executor import TerminatedWorkerError

import engine
from engine.store import write_atomic
from pipeline.atlas.analyse import Analysis, analyse, schema, supplement
from pipeline.atlas.config import Atlas, atlas_of_manifest
from pipeline.atlas.plan import Plan, plan, task_seconds
from pipeline.atlas.rows import (
    ROWS,
    STARTED,
    Cost,
    Row,
    Started,
    checked_table,
    kept_costs,
    killed_marks,
    read_row,
    row_path,
    write_row,
)
from pipeline.report.prose import plural
from pipeline.runs.lock import FolderBusyError, folder_lock
from pipeline.runs.paths import DATA
from pipeline.runs.progress import TasksBar
from pipeline.runs.records import RecordError, file_sha256, parquet_bytes, sha256, versions
from pipeline.runs.runfolder import ATLAS as ATLAS_RUN
from pipeline.runs.runfolder import claim, read_listed_manifest, write_manifest
from pipeline.runs.workers import backend, check_backend, exit_with_parent, memory_bytes, parallel_jobs

log = logging.getLogger(__name__)
ATLAS = "atlas.parquet"


def run_atlas(
    atlas: Atlas,
    out: Path | None = None,
    *,
    part: str | None = None,
    jobs: int = 2,
    backend_name: str = "loky",
    scheduler: str | None = None,
    hours: float | None = None,
    progress: bool = True,
) -> Path:
    """Analyse every rule set of ``atlas`` (of ``part`` only, when given) not yet in ``out``
    (default data/<name>/), as pipeline.atlas.plan plans it with up to ``jobs`` workers, then
    write atlas.parquet and the manifest; returns the folder. Given ``hours``, no rule set starts
    after that many hours; those in flight are finished, and a later run goes on from there. A
    folder holding another atlas, or anything but an atlas's files, is refused."""
    check_backend(backend_name)
    until = None if hours is None else time.time() + 3600 * hours
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
        found = {rules.name: read_row(directory, rules) for rules in wanted}
        missing = [rules for rules in wanted if (row := found[rules.name]) is None or not row.complete]
        incomplete = {name: row for name, row in found.items() if row is not None and not row.complete}
        refused: dict[str, str] = {}  # the last plan's, as the run ends
        try:
            _run_plans(
                directory,
                atlas,
                missing,
                worker_rooms(backend_name, jobs),
                refused,
                incomplete,
                loky=backend_name == "loky",
                until=until,
                progress=progress,
            )
        finally:
            _write_manifest(directory, atlas, refused)
    return directory


def worker_rooms(backend_name: str, jobs: int) -> dict[int, int]:
    """Workers -> the memory one task may take: this machine's shared by 1 to ``jobs`` loky
    workers, or, on dask, the smallest limit among the cluster's workers (dask's memory_limit,
    their machine's when 0), which a run does not change."""
    if backend_name == "loky":
        return {workers: memory_bytes() // workers for workers in range(1, jobs + 1)}
    from distributed import get_client

    workers = get_client().scheduler_info()["workers"].values()
    limits = [int(worker.get("memory_limit") or 0) for worker in workers]
    known = [limit for limit in limits if limit > 0]
    return {jobs: min(known) if known else memory_bytes() // max(1, len(limits))}


def _run_plans(
    directory: Path,
    atlas: Atlas,
    missing: list[engine.Rules],
    rooms: dict[int, int],
    refused: dict[str, str],
    incomplete: dict[str, Row],
    *,
    loky: bool,
    until: float | None,
    progress: bool,
) -> None:
    """The plan's first phase whole, when it has the most workers (``rooms``: worker_rooms); the
    rule sets that need fewer one batch (a task a worker) at a time, planned again after each
    with the costs of the rows just written; none started after ``until`` (time.time()), if
    given. ``refused`` is kept as the last plan's; each refusal is said once, as it is first
    planned. The rule sets of ``incomplete`` (rows kept without the verdict columns) are completed."""
    killed = killed_marks(directory, missing)  # read once, before this run writes its own
    kept = kept_costs(directory)
    costs_of = {name: row.costs for name, row in incomplete.items()}
    planned = plan(missing, rooms, kept, killed, directory, costs_of)
    _say_fewer_workers(planned, rooms)
    bar = _bar(atlas.name, planned, kept, costs_of, progress)
    finished: set[str] = set()

    def done(analysis: Analysis) -> None:
        finished.add(analysis.rules)
        bar.done(analysis.rules, f"{analysis.rules} ({analysis.task_seconds:.0f} s)")

    try:
        while True:
            for name, message in planned.refused.items():
                if name not in refused:
                    log.warning("%s", message)
            refused.clear()
            refused.update(planned.refused)
            if not planned.phases:
                return
            if until is not None and time.time() >= until:
                left = sum(len(phase.rule_sets) for phase in planned.phases)
                log.warning("the run's time (--hours) is up with %s left; run it again to go on", plural(left, "rule set"))
                return
            phase = planned.phases[0]
            batch = list(phase.rule_sets if phase.workers == max(rooms) else phase.rule_sets[: phase.workers])
            _compute(directory, batch, (phase.workers, phase.room, killed), done, loky=loky, until=until, incomplete=incomplete)
            missing = [rules for rules in missing if rules.name not in finished]  # all the batch's, but past ``until``
            planned = plan(missing, rooms, kept_costs(directory), killed, directory, costs_of)
    finally:
        bar.close()


def _say_fewer_workers(planned: Plan, rooms: dict[int, int]) -> None:
    most = max(rooms)
    for phase in planned.phases:
        if phase.workers < most:
            log.warning(
                "%s need%s more than the %.1f GB a worker has with %d workers: run after the others, %d at a time (%.1f GB each)",
                plural(len(phase.rule_sets), "rule set"),
                "" if len(phase.rule_sets) > 1 else "s",
                rooms[most] / 2**30,
                most,
                phase.workers,
                phase.room / 2**30,
            )


def _bar(
    name: str, planned: Plan, kept: dict[str, Cost], incomplete: dict[str, dict[str, Any] | None], progress: bool
) -> TasksBar:
    """The run's progress bar: each rule set planned to take its expected seconds
    (pipeline.atlas.plan.task_seconds: less for a row to complete) over the workers of its phase."""
    wall = {
        rules.name: task_seconds(rules, kept, incomplete) / phase.workers for phase in planned.phases for rules in phase.rule_sets
    }
    completed = sum(name in incomplete for name in wall)
    parts = [f"{plural(len(wall) - completed, 'rule set')} to analyse"] if len(wall) > completed or not completed else []
    what = ", ".join([*parts, *([f"{plural(completed, 'rule set')} to complete"] if completed else [])])
    return TasksBar(f"atlas {name}: {what}", wall, progress=progress)


def _compute(
    directory: Path,
    todo: list[engine.Rules],
    workers: tuple[int, int, dict[str, tuple[int, int]]],
    done: Callable[[Analysis], None],
    *,
    loky: bool,
    until: float | None = None,
    incomplete: dict[str, Row] | None = None,
) -> None:
    """Run the tasks on ``workers`` (how many, the memory of each, and the killed_marks found as
    the run began), none started after ``until`` (time.time()) if given, those of ``incomplete``
    completing their kept rows (supplement), writing each one's row
    as it comes back, then telling ``done``. Each task in flight has its STARTED mark, removed
    when its row is written or the run ends, but kept when a worker is killed, or the run itself."""
    jobs, room, killed_before = workers
    run = f"{socket.gethostname()}:{os.getpid()}:{time.time_ns()}"
    marks = {
        rules.name: Started(
            row_path(directory, rules.name, STARTED).resolve(), room, killed_before.get(rules.name, (0, 0))[0], run
        )
        for rules in todo
    }
    killed = False
    try:
        # On dask every thread of the cluster takes tasks (parallel_jobs); one task a worker: see _dispatched.
        results = Parallel(n_jobs=parallel_jobs(jobs), return_as="generator_unordered", pre_dispatch="n_jobs", batch_size=1)(
            _dispatched(todo, marks, loky, until, incomplete or {})
        )
        for analysis in _surviving(results, jobs):
            if analysis is None:  # its worker found the time up (_started)
                continue
            write_row(directory, analysis)
            marks[analysis.rules].path.unlink(missing_ok=True)
            done(analysis)
    except WorkerKilledError:
        killed = True
        raise
    finally:
        if not killed:
            for mark in marks.values():
                mark.remove()


def _dispatched(
    todo: list[engine.Rules], marks: dict[str, Started], loky: bool, until: float | None, incomplete: dict[str, Row]
) -> Iterator[Any]:
    """The tasks, none after ``until`` (time.time()) if given (and each task checks it again as it
    starts: _started). A loky worker writes its task's
    STARTED mark as it starts it: joblib takes tasks from here ahead of the workers (one more
    every other task done, even with pre_dispatch n_jobs), and a mark written here would count a
    kill of a rule set never started. A dask worker may have no access to the folder, so its
    marks are written here."""
    for rules in todo:
        if until is not None and time.time() >= until:
            return
        if not loky:
            marks[rules.name].write()
        kept = incomplete.get(rules.name)
        row = None if kept is None else (kept.table.to_pylist()[0], kept.costs)
        yield delayed(_started)(_task, rules, loky, engine.cache_folder(), marks[rules.name] if loky else None, row, until)


class WorkerKilledError(RecordError):
    """A worker of the atlas was killed by the system (its tasks' STARTED marks are kept)."""


def _surviving(results: Iterator[Analysis | None], jobs: int) -> Iterator[Analysis | None]:
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


def _started(
    task: Callable[..., Analysis],
    rules: engine.Rules,
    loky: bool,
    cache: Path | None,
    mark: Started | None,
    kept: tuple[dict[str, Any], dict[str, Any] | None] | None = None,
    until: float | None = None,
) -> Analysis | None:
    """In a worker: its task's STARTED mark written, if given, then ``task`` (_task, passed so
    that the tests' stand-ins, which die as the system kills a worker, reach the worker); None,
    with nothing written or run, once ``until`` (time.time()) is past: joblib takes tasks ahead
    of the workers, so the time _dispatched checked may be long gone."""
    if until is not None and time.time() >= until:
        return None
    if loky:
        exit_with_parent()
    if mark is not None:
        mark.write()
    return task(rules, cache, kept)


def _task(rules: engine.Rules, cache: Path | None, kept: tuple[dict[str, Any], dict[str, Any] | None] | None = None) -> Analysis:
    """One rule set analysed, its scratch files in ``cache``/scratch/; given ``kept`` (a row
    without the verdict columns, and its record's costs), that row completed."""
    return analyse(rules, cache) if kept is None else supplement(rules, kept[0], kept[1], cache)


# ---------------------------------------------------------------------------------------------
# Files


def _write_manifest(directory: Path, atlas: Atlas, refused: dict[str, str] | None = None) -> None:
    """atlas.parquet from the rows done, in the atlas's order, and the manifest."""
    rows = [(rules, read_row(directory, rules)) for rules in atlas.rule_sets()]
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


def gather_rows(directory: Path) -> None:
    """Write atlas.parquet and the manifest again from the sealed rows when they hold rule sets,
    or verdicts, that atlas.parquet does not (a run killed before its end wrote it only as it
    started), and say so; when a run holds the folder, say that and leave it be."""
    manifest = read_atlas_manifest(directory)
    atlas = atlas_of_manifest(manifest)
    rows = {rules.name: row for rules in atlas.rule_sets() if (row := read_row(directory, rules)) is not None}
    done = list(rows)
    table = read_atlas(directory)
    waiting = {
        name
        for name, by in zip(table.column("rules").to_pylist(), table.column("decided_by").to_pylist(), strict=True)
        if by is None
    }
    if set(done) <= set(table.column("rules").to_pylist()) and not any(rows[name].complete for name in waiting & set(rows)):
        return
    refused = manifest.get("refused")
    try:
        with folder_lock(directory, ATLAS_RUN.command):
            _write_manifest(directory, atlas, refused if isinstance(refused, dict) else {})
    except FolderBusyError:
        log.warning("a run is writing %s: the report shows the rule sets and verdicts done when it began", directory)
        return
    log.warning("%s held rows a stopped run had not gathered; atlas.parquet now holds all %d", directory, len(done))


def read_atlas_manifest(directory: Path) -> dict[str, Any]:
    """An atlas folder's manifest, its seal and config checked, with a table of files."""
    return read_listed_manifest(directory, ATLAS_RUN)


def rows_done(directory: Path) -> list[str]:
    """The rule sets whose rows in ``directory`` are sound (sealed, of this engine, matching their
    records), in the atlas's order: what a run there would not compute again (a row without the
    verdict columns among them: a run completes it, rows_incomplete)."""
    atlas = atlas_of_manifest(read_atlas_manifest(directory))
    return [rules.name for rules in atlas.rule_sets() if read_row(directory, rules) is not None]


def rows_incomplete(directory: Path) -> list[str]:
    """The rule sets of ``directory`` whose sound rows lack the verdict columns, in the atlas's order."""
    atlas = atlas_of_manifest(read_atlas_manifest(directory))
    return [rules.name for rules in atlas.rule_sets() if (row := read_row(directory, rules)) is not None and not row.complete]


def read_atlas(directory: Path) -> pa.Table:
    """The atlas's table, after checking it against the manifest."""
    manifest = read_atlas_manifest(directory)
    entry = manifest["files"].get(ATLAS)
    path = directory / ATLAS
    if not isinstance(entry, dict) or file_sha256(path) != entry.get("sha256"):
        raise RecordError(
            f"{path} is missing or does not match its checksum in the manifest; run 'modiar atlas run' again to rewrite it"
        )
    return checked_table(path)
