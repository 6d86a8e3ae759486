"""The skill ladder: table strategies from weak to strong, every figure exact (no games sampled).

    name = "ladder"                          # letters, digits, - and _: it becomes a folder name
    rungs = ["random", "alphabeta(depth=1)", ..., "perfect"]   # table strategies, weakest first
    opponents = ["perfect", "random"]        # each rung also meets these, in both seats

    [rules]                                  # any field of engine.Rules; RULES.md when empty

For each rung X the ladder computes, with engine.exact_outcome, X against itself and, for each
opponent O, X against O and O against X (so that the seat is never confounded with the
strength: X's score is read in both seats), and, with engine.exploitability, what a best
counter-strategy wins against X in each seat. Each ordered pairing is computed once however
often it is listed. Every result is kept in the cache folder as it is finished
(pipeline.exact.cache), so a stopped run loses none of them and a second run reads them all.

    data/<name>/ladder.parquet           one row per pairing (pipeline.runs.records.exact_table's
                                         schema), in the order of the rungs
    data/<name>/exploitability.parquet   one row per rung: strategy, rules, as_south, as_north
    data/<name>/manifest.json            the config, the versions, each file's bytes and SHA-256
                                         (sealed; the folder held while a run writes it: pipeline.runs.runfolder)

The same config gives the same bytes for any number of workers. ``modiar ladder report DIR``
(pipeline.ladder.report) draws the figures against strength.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
from joblib import Parallel, delayed

import engine
from engine.store import write_atomic
from pipeline.exact.cache import (
    cached_exact_outcome,
    cached_exploitability,
    exact_jobs,
    exact_seconds,
    exploit_seconds,
    read_cached,
    read_cached_exploitability,
    worker_bytes,
)
from pipeline.exact.progress import ExactBar, Reporter
from pipeline.runs.config import RULES_MD, ConfigError, check_keys, load_config, parse_name, parse_rules, parse_strategies
from pipeline.runs.paths import DATA
from pipeline.runs.records import RecordError, check_exact_rows, exact_table, file_sha256, parquet_bytes, sha256, versions
from pipeline.runs.runfolder import LADDER as LADDER_RUN
from pipeline.runs.runfolder import claim, read_listed_manifest, write_manifest
from pipeline.runs.workers import exit_with_parent, memory_bytes, parallel_jobs

log = logging.getLogger(__name__)
CONFIG_KEYS = ("name", "rungs", "opponents", "rules")
REQUIRED = ("name", "rungs")
DEFAULT_OPPONENTS = ("perfect", "random")
OUTCOMES = "ladder.parquet"
EXPLOITABILITY = "exploitability.parquet"
VARIANT = "default"  # the variant column of exact_table: a ladder has one rule set


@dataclass(frozen=True)
class Ladder:
    """A checked ladder config (see the module docstring)."""

    name: str
    rungs: tuple[str, ...]
    opponents: tuple[str, ...] = DEFAULT_OPPONENTS
    rules: engine.Rules = RULES_MD

    def pairings(self) -> list[tuple[str, str]]:
        """Every ordered pairing (south, north) the ladder computes, each once, rung by rung:
        X v X, then X v O and O v X for each opponent O."""
        found: dict[tuple[str, str], None] = {}
        for rung in self.rungs:
            found[rung, rung] = None
            for opponent in self.opponents:
                found[rung, opponent] = None
                found[opponent, rung] = None
        return list(found)

    def config(self) -> dict[str, Any]:
        """The config as plain JSON types (what the manifest keeps)."""
        rules = {field.name: getattr(self.rules, field.name) for field in dataclasses.fields(self.rules)}
        return {"name": self.name, "rungs": list(self.rungs), "opponents": list(self.opponents), "rules": rules}


def load_ladder(path: str | Path) -> Ladder:
    """Read and check a ladder config; any mistake raises ConfigError naming the file."""
    return load_config(Path(path), "ladder", parse_ladder)


def parse_ladder(data: dict[str, Any]) -> Ladder:
    """The Ladder a parsed TOML table describes, checked key by key."""
    check_keys(data, CONFIG_KEYS, REQUIRED, "ladder")
    rungs = parse_strategies(data["rungs"], "rungs")
    opponents = parse_strategies(data["opponents"], "opponents") if "opponents" in data else DEFAULT_OPPONENTS
    for key, specs in (("rungs", rungs), ("opponents", opponents)):
        for spec in specs:
            if not engine.is_table_strategy(spec):
                raise ConfigError(
                    f"{key}: {spec} has no policy table, so its games cannot be computed exactly; "
                    "a ladder takes table strategies only"
                )
    return Ladder(parse_name(data["name"]), rungs, opponents, parse_rules(data.get("rules", {})))


# ---------------------------------------------------------------------------------------------
# Running


def run_ladder(ladder: Ladder, out: Path | None = None, *, jobs: int = 1, progress: bool = True) -> Path:
    """Compute every pairing and exploitability of ``ladder`` (those the cache folder holds are
    read) and write its files into ``out`` (default data/<name>/); returns the folder. A folder
    that holds another ladder's manifest, or anything but a ladder's files, is refused."""
    directory = DATA / ladder.name if out is None else out
    allowed = exact_jobs(jobs, [ladder.rules])
    if allowed < jobs:
        worker = worker_bytes(ladder.rules)
        raise RecordError(
            f"--jobs {jobs} needs about {jobs * worker / 2**30:.1f} GB (its widest pairings take "
            f"{worker / 2**30:.1f} GB a worker) and this machine has {memory_bytes() / 2**30:.0f} GB; "
            f"use --jobs {allowed}"
        )
    with claim(directory, LADDER_RUN, ladder.config()):
        _run_locked(ladder, directory, jobs, progress)
    return directory


def _run_locked(ladder: Ladder, directory: Path, jobs: int, progress: bool) -> None:
    """Compute what the cache folder lacks and write the ladder's files, holding its folder."""
    outcomes: dict[tuple[str, str], engine.ExactOutcome] = {}
    exploits: dict[str, engine.Exploitability] = {}
    for pairing in ladder.pairings():
        cached = read_cached(*pairing, ladder.rules)
        if cached is not None:
            outcomes[pairing] = cached
    for spec in ladder.rungs:
        found = read_cached_exploitability(spec, ladder.rules)
        if found is not None:
            exploits[spec] = found
    tasks = [("exact", pairing) for pairing in ladder.pairings() if pairing not in outcomes]
    tasks += [("exploit", (spec, spec)) for spec in ladder.rungs if spec not in exploits]
    tasks.sort(key=lambda task: -_weight(*task))
    if tasks:
        folder = engine.cache_folder()
        # The bar names each pairing running with its ply and mass in play, and estimates the time
        # left from the tasks' expected seconds at this machine's pace and the running ones' rates.
        bar = ExactBar(
            [(_name(kind, pairing), _weight(kind, pairing)) for kind, pairing in tasks],
            jobs,
            progress=progress,
            desc=f"ladder {ladder.name}",
            unit="tasks",
        )
        try:
            results = Parallel(n_jobs=parallel_jobs(jobs), return_as="generator_unordered")(
                delayed(_task)(kind, pairing, ladder.rules, folder, bar.folder) for kind, pairing in tasks
            )
            for kind, pairing, result, seconds in results:
                log.debug("%s %s: %.1f s", kind, " v ".join(pairing), seconds)
                if isinstance(result, engine.ExactOutcome):
                    outcomes[pairing] = result
                elif isinstance(result, engine.Exploitability):
                    exploits[pairing[0]] = result
                bar.done(_name(kind, pairing), seconds)
        finally:
            bar.close()
    _write(directory, ladder, [outcomes[pairing] for pairing in ladder.pairings()], [exploits[spec] for spec in ladder.rungs])


def _task(
    kind: str, pairing: tuple[str, str], rules: engine.Rules, cache: Path | None, reports: Path | None
) -> tuple[str, tuple[str, str], object, float]:
    """One pairing's exact outcome or one rung's exploitability, from the cache folder or
    computed and cached, and the seconds it took (runs in a worker; an exact outcome reports
    its progress to the bar's folder ``reports``)."""
    exit_with_parent()
    engine.set_cache_folder(cache)
    started = time.perf_counter()
    if kind == "exact":
        reporter = Reporter(reports, _name(kind, pairing))
        try:
            result: object = cached_exact_outcome(*pairing, rules, reporter)
        finally:
            reporter.close()
    else:
        result = cached_exploitability(pairing[0], rules)
    return kind, pairing, result, time.perf_counter() - started


def _name(kind: str, pairing: tuple[str, str]) -> str:
    return f"{pairing[0]} v {pairing[1]}" if kind == "exact" else f"exploitability of {pairing[0]}"


def _weight(kind: str, pairing: tuple[str, str]) -> float:
    return exact_seconds(*pairing) if kind == "exact" else exploit_seconds(pairing[0])


# ---------------------------------------------------------------------------------------------
# Files


def exploitability_table(exploits: list[engine.Exploitability], *, ladder: str) -> pa.Table:
    """One row per strategy: what a best response wins against it as South and as North
    (stones per game), and their mean."""
    return pa.table(
        {
            "ladder": pa.array([ladder] * len(exploits), pa.string()),
            "engine_version": pa.array([engine.ENGINE_VERSION] * len(exploits), pa.string()),
            "rules": pa.array([found.rules.name for found in exploits], pa.string()),
            "strategy": pa.array([found.strategy for found in exploits], pa.string()),
            "as_south": pa.array([found.as_south for found in exploits], pa.float64()),
            "as_north": pa.array([found.as_north for found in exploits], pa.float64()),
            "mean": pa.array([(found.as_south + found.as_north) / 2 for found in exploits], pa.float64()),
        }
    )


def _write(directory: Path, ladder: Ladder, outcomes: list[engine.ExactOutcome], exploits: list[engine.Exploitability]) -> None:
    files = {
        OUTCOMES: parquet_bytes(exact_table([(VARIANT, outcome) for outcome in outcomes], study=ladder.name)),
        EXPLOITABILITY: parquet_bytes(exploitability_table(exploits, ladder=ladder.name)),
    }
    try:
        directory.mkdir(parents=True, exist_ok=True)
        entries = {}
        for name, data in files.items():
            write_atomic(directory / name, data)
            entries[name] = {"bytes": len(data), "sha256": sha256(data)}
        manifest = {
            "ladder": ladder.name,
            "rules": ladder.rules.name,
            "config": ladder.config(),
            "versions": versions(),
            "files": entries,
        }
        write_manifest(directory, LADDER_RUN, manifest)
    except OSError as error:
        raise RecordError(f"cannot write the ladder to {directory}: {error.strerror or error}") from None


def read_ladder_manifest(directory: Path) -> dict[str, Any]:
    """A ladder folder's manifest, its seal and config checked, with a table of files."""
    return read_listed_manifest(directory, LADDER_RUN)


def checked_files(directory: Path) -> Iterator[Path]:
    """The ladder's Parquet files, each after checking it against the manifest."""
    manifest = read_ladder_manifest(directory)
    for name in (OUTCOMES, EXPLOITABILITY):
        entry = manifest["files"].get(name)
        if not isinstance(entry, dict) or file_sha256(directory / name) != entry.get("sha256"):
            raise RecordError(
                f"{directory / name} is missing or does not match its checksum in the manifest; "
                "run the ladder again to rewrite it from the cache"
            )
        if name == OUTCOMES:
            check_exact_rows(directory / name, "run the ladder again to rewrite it from the cache")
        yield directory / name
