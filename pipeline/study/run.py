"""Running a study: every ordered pairing's games, cut into chunks, played by joblib workers.

Seeds come first, work second. Game i of the pairing SOUTH vs NORTH has the seed

    engine.game.game_seeds(block_seeds[i // SEED_BLOCK], SEED_BLOCK)[i % SEED_BLOCK]
    with block_seeds = SeedSequence(entropy).generate_state(blocks, uint64)
    and entropy = [study seed, pairing_key(SOUTH, NORTH)]                        under the study's [rules]
                  [study seed, pairing_key(SOUTH, NORTH), rules_key(RULES)]      under a variant's rules

so that a block of games is exactly one engine.play_batch call, and a game's seed depends
on the study's seed, the two specs and (for a variant) its rule set's name alone: not on the
other strategies or variants of the study, nor on a variant's label or place in [variants],
and not on the chunk size, the number of jobs or the backend. The study's own rule set keeps
the entropy it had before variants existed, so its games are those of the same study without
[variants]. Pairings of engine strategies go through engine.play_batch (mcts's searches in
lockstep, engine.play.mcts), the others through engine.play_game; both play the same game
for a seed. Each chunk is written as soon as it is
back, then the manifest: a killed run, started again, skips the chunks whose files match their
checksums.

Before the games, the workers build the position tables, the policy tables of the table
strategies (engine.players.policy) and, when a "perfect" plays, the solution of every rule set whose
cache files are missing, one rule set a worker: the chunks come rule set by rule set, and two
workers starting the same rule set would otherwise both build its tables.

After the games, a study with ``exact = true`` (or ``"self-play"``) gets the exact outcome of
each of its pairings of table strategies (Study.exact_pairings): each one is taken from the
cache folder's ``exact/`` (pipeline.exact.cache) or computed by a worker and cached there, and
all of them are written as one file, ``exact.parquet``, in the order of the pairings (so the
same bytes for any number of jobs), listed in the manifest with its SHA-256. It is written only
once every chunk is done, whole or not at all; a missing or changed one is written again from
the cache by the next run. A config that changes ``exact`` alone keeps the games on disk: the
next run writes exact.parquet for the new value (or drops it).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from joblib import Parallel, delayed

import engine
from engine.game import game_seeds
from engine.play import GameBatch, batchable, concatenate
from engine.players import engine_strategy
from engine.store import temporary_files, write_atomic
from pipeline.exact.cache import cached_exact_outcome, exact_jobs, exact_seconds, read_cached
from pipeline.exact.progress import ExactBar, Reporter
from pipeline.runs.config import ConfigError
from pipeline.runs.costs import COSTS
from pipeline.runs.lock import FolderBusyError, folder_lock
from pipeline.runs.paths import EXACT, GAMES, JOURNAL, LOCK, MANIFEST, PLIES, study_dir
from pipeline.runs.progress import GamesBar
from pipeline.runs.records import (
    ChunkEntry,
    ExactEntry,
    FileEntry,
    Manifest,
    RecordError,
    append_chunk,
    batch_of_records,
    chunk_file,
    exact_done,
    exact_table,
    file_sha256,
    games_table,
    new_manifest,
    parquet_bytes,
    parquet_rows,
    plies_table,
    read_study_manifest,
    sha256,
    write_manifest,
)
from pipeline.runs.runfolder import STUDY, clear_litter, is_sealed
from pipeline.runs.seeds import pairing_key, rules_key
from pipeline.runs.workers import backend as _backend
from pipeline.runs.workers import check_backend, check_jobs, check_scheduler, exit_with_parent, keep_caches_loaded, parallel_jobs
from pipeline.study.caches import build_all, missing_caches
from pipeline.study.config import BASE, Pairing, Study

SEED_BLOCK = 1 << 16  # games per seed block: engine.play.batch plays 2**16 games in lockstep
MIN_CHUNKS = 8  # a pairing is cut into at least this many chunks (when it has the games)
# ... but a pairing with mcts into chunks of SEARCH_CHUNK games or more, while it makes two: its
# searches run in lockstep (engine.play.mcts), faster the more games there are at once:
# mcts(100) self-play 190 games/s on one core with 2,500 games, 270 with 5,000, 285 with 10,000.
SEARCH_CHUNK = 5000
MAX_CHUNKS = 100_000  # chunks of a study: its manifest holds one entry each


@dataclass(frozen=True)
class Chunk:
    """Games start .. stop - 1 of one pairing; their game_ids start at first_id."""

    pairing: Pairing
    index: int
    start: int
    stop: int
    first_id: int

    @property
    def name(self) -> str:
        return f"p{self.pairing.number:03d}-c{self.index:05d}"

    def __len__(self) -> int:
        return self.stop - self.start


@dataclass(frozen=True)
class ChunkResult:
    name: str
    rows: int
    games: bytes  # Parquet
    plies: bytes | None


def plan(study: Study) -> list[Chunk]:
    """Every chunk of the study, pairing by pairing; game_ids number the games of the study.
    Refuses (ConfigError) a study of more than MAX_CHUNKS chunks before making any."""
    _check_chunks(study)
    chunks, first_id = [], 0
    for pairing in study.pairings():
        size = _chunk_size(study, pairing)
        for index, start in enumerate(range(0, pairing.games, size)):
            stop = min(start + size, pairing.games)
            chunks.append(Chunk(pairing, index, start, stop, first_id + start))
        first_id += pairing.games
    return chunks


def _check_chunks(study: Study) -> None:
    count = sum(-(-pairing.games // _chunk_size(study, pairing)) for pairing in study.pairings())
    if count > MAX_CHUNKS:
        raise ConfigError(
            f"the study plans {count:,} chunks (about {count * COSTS.chunk_bytes / 1e9:,.1f} GB to plan and record them); "
            f"at most {MAX_CHUNKS:,}: lower games_per_seat or raise chunk_games"
        )


def chunk_size(games: int, most: int, *, searches: bool = False) -> int:
    """The games per chunk of a pairing: at most ``most``, and small enough to cut the pairing
    into MIN_CHUNKS chunks, so that a few hundred slow games still share out between workers;
    with mcts (``searches``), SEARCH_CHUNK games or half the pairing if that is fewer. Chunks of
    more than a seed block take whole blocks, so that engine.play_batch plays each block in one
    call."""
    size = -(-games // MIN_CHUNKS)
    if searches:
        size = max(size, min(SEARCH_CHUNK, -(-games // 2)))
    if size > SEED_BLOCK:
        size = -(-size // SEED_BLOCK) * SEED_BLOCK
    return max(1, min(size, most))


def _chunk_size(study: Study, pairing: Pairing) -> int:
    searches = engine_strategy(pairing.south).searches or engine_strategy(pairing.north).searches
    return chunk_size(pairing.games, study.chunk_games, searches=searches)


def chunk_seeds(seed: int, chunk: Chunk) -> np.ndarray:
    """The seeds of the chunk's games (uint64), as the module docstring defines them."""
    return np.concatenate([game_seeds(int(block_seed), stop)[start:] for block_seed, start, stop in _blocks(seed, chunk)])


def play_chunk(study: Study, chunk: Chunk, *, batched: bool = True, cache: Path | None = None) -> ChunkResult:
    """Play one chunk and encode its records (runs in a worker, whose engine keeps its tables
    and solutions in ``cache``: the caller's cache folder, passed as workers may be elsewhere)."""
    exit_with_parent()
    engine.set_cache_folder(cache)
    keep_caches_loaded()
    rules = chunk.pairing.rules
    batch = _play_batched(study, chunk) if batched else None
    if batch is None:
        seeds = chunk_seeds(study.seed, chunk).tolist()
        south, north = chunk.pairing.south, chunk.pairing.north
        records = [engine.play_game(south, north, rules=rules, seed=game_seed) for game_seed in seeds]
        batch = batch_of_records(records, south, north, rules.name)
    games = parquet_bytes(games_table(batch, study=study.name, first_id=chunk.first_id))
    plies = parquet_bytes(plies_table(batch, rules, chunk.first_id)) if study.keep_plies else None
    return ChunkResult(chunk.name, len(batch), games, plies)


def run_study(
    study: Study,
    out: Path | None = None,
    *,
    jobs: int = 1,
    backend: str = "loky",
    scheduler: str | None = None,
    progress: bool = True,
    batched: bool = True,
    stop_after: int | None = None,
) -> Path:
    """Play every chunk not yet on disk and record it; returns the study's folder.

    Refuses (RecordError, nothing written) when the folder holds another config's records, is
    being written by another run, or cannot be written; a finished study is not written at all
    (it may sit on read-only media). ``stop_after`` stops after that many chunks, as a killed
    run would.
    """
    check_backend(backend)
    if scheduler is None:
        check_jobs(jobs)  # the workers run on this machine
    else:
        check_scheduler(scheduler)
    directory = study_dir(study.name, out)
    if directory.exists() and not directory.is_dir():
        raise RecordError(f"{directory} is not a folder; choose a folder for the records with --out")
    if (directory / MANIFEST).is_file() and _finished(directory, study):
        return directory
    made = [path for path in (directory, directory / LOCK) if not path.exists()]
    run = _Run(
        study=study,
        directory=directory,
        jobs=jobs,
        backend=backend,
        scheduler=scheduler,
        progress=progress,
        batched=batched,
        stop_after=stop_after,
    )
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with folder_lock(directory):
            _run_locked(run)
    except OSError as error:
        raise RecordError(_write_error(directory, error)) from None
    finally:
        _remove_if_unused(directory, made)
    return directory


@dataclass(frozen=True)
class _Run:
    """What run_study was asked, for the part of the run that holds the folder's lock."""

    study: Study
    directory: Path
    jobs: int
    backend: str
    scheduler: str | None
    progress: bool
    batched: bool
    stop_after: int | None


def _run_locked(run: _Run) -> None:
    study, directory = run.study, run.directory
    manifest = _open_manifest(directory, study)
    chunks = [chunk for chunk in plan(study) if not chunk_done(directory, manifest, chunk, study.keep_plies)]
    complete = run.stop_after is None or run.stop_after >= len(chunks)  # every chunk done by the end of this run
    if run.stop_after is not None:
        chunks = chunks[: run.stop_after]
    with _backend(run.backend, run.scheduler, run.jobs):
        clear_litter(directory, STUDY)  # temporary files of a run killed mid-write: never part of the records
        write_manifest(directory, manifest)  # only once the workers are there: a failed start leaves nothing
        _build_missing_caches(chunks, run.jobs, run.progress)
        bar = GamesBar(chunks, study.name, progress=run.progress, jobs=run.jobs)
        results = Parallel(n_jobs=parallel_jobs(run.jobs), return_as="generator_unordered")(
            delayed(play_chunk)(study, chunk, batched=run.batched, cache=engine.cache_folder()) for chunk in chunks
        )
        with warnings.catch_warnings():  # a failed write cancels the chunks in flight: no need to say so
            warnings.filterwarnings("ignore", message=".*tasks which were still being processed", category=UserWarning)
            try:
                for result in results:
                    manifest["chunks"][result.name] = _record(directory, result)
                    bar.done(result.name, result.rows)
            finally:
                results.close()
                bar.close()
        if complete and not exact_done(directory, manifest, len(study.exact_pairings())):
            _record_exact(run, manifest)
        write_manifest(directory, manifest)  # the journal folded into the manifest


def _finished(directory: Path, study: Study) -> bool:
    """Whether every chunk of the study is on disk, checked, and in the manifest itself."""
    config = study.as_dict()
    if not is_sealed(directory) or _only_exact_differs(read_study_manifest(directory, legacy=True)["config"], config):
        return False  # a manifest to seal, or exact.parquet to write afresh: under the folder's lock
    manifest = _open_manifest(directory, study)
    return (
        not (directory / JOURNAL).exists()
        and all(chunk_done(directory, manifest, chunk, study.keep_plies) for chunk in plan(study))
        and (not study.exact_pairings() or exact_done(directory, manifest, len(study.exact_pairings())))
    )


def _write_error(directory: Path, error: OSError) -> str:
    """One line for a folder that cannot be written (full, read-only, below a file, busy)."""
    if isinstance(error, FolderBusyError):
        return f"{error}; wait for it to finish or stop it"
    where = error.filename or directory
    return f"cannot write {where}: {error.strerror or error}; the chunks already finished are kept, run again once it is fixed"


def _remove_if_unused(directory: Path, made: list[Path]) -> None:
    """Remove the folder and lock this run made if no manifest was written: a failed start leaves nothing."""
    if (directory / MANIFEST).exists():
        return
    try:
        for path in reversed(made):
            if path.name == LOCK:
                path.unlink()
            else:
                path.rmdir()
    except OSError:
        pass  # the folder holds something else, or was never made


def _record_exact(run: _Run, manifest: Manifest) -> None:
    """Write exact.parquet (see the module docstring) and list it in the manifest; the
    outcomes not in the cache are computed by the workers."""
    pairings = run.study.exact_pairings()
    if not pairings:
        return
    found: dict[_ExactKey, engine.ExactOutcome] = {}
    for pairing in pairings:
        cached = read_cached(pairing.south, pairing.north, pairing.rules)
        if cached is not None:
            found[_exact_key(pairing)] = cached
    missing = [pairing for pairing in pairings if _exact_key(pairing) not in found]
    missing.sort(key=lambda pairing: -exact_seconds(pairing.south, pairing.north))  # the longest first
    if missing:
        build_all(missing_caches(missing), run.jobs, run.progress)
        jobs = run.jobs if run.backend == "dask" else exact_jobs(run.jobs, {pairing.rules for pairing in missing})
        bar = ExactBar(
            [(_exact_name(_exact_key(pairing)), exact_seconds(pairing.south, pairing.north)) for pairing in missing],
            jobs,
            progress=run.progress,
        )
        try:
            for key, outcome, seconds in Parallel(n_jobs=parallel_jobs(jobs), return_as="generator_unordered")(
                delayed(_exact_job)(_exact_key(pairing), engine.cache_folder(), bar.folder) for pairing in missing
            ):
                found[key] = outcome
                bar.done(_exact_name(key), seconds)
        finally:
            bar.close()
    rows = [(pairing.variant, found[_exact_key(pairing)]) for pairing in pairings]
    data = parquet_bytes(exact_table(rows, study=run.study.name))
    write_atomic(run.directory / EXACT, data)
    manifest["exact"] = ExactEntry(file=EXACT, bytes=len(data), sha256=sha256(data), rows=len(rows))


_ExactKey = tuple[engine.Rules, str, str]


def _exact_key(pairing: Pairing) -> _ExactKey:
    return pairing.rules, pairing.south, pairing.north


def _exact_name(key: _ExactKey) -> str:
    """A pairing as the exact outcomes' bar names it: the rule set only where it is not RULES.md's."""
    rules, south, north = key
    return f"{south} v {north}" + ("" if rules == engine.Rules() else f" ({rules.name})")


def _exact_job(key: _ExactKey, cache: Path | None, reports: Path | None) -> tuple[_ExactKey, engine.ExactOutcome, float]:
    """The exact outcome of one pairing, from the cache folder or computed and cached (runs in a
    worker, reporting its progress to the bar's folder ``reports``), and its seconds."""
    exit_with_parent()
    started = time.perf_counter()
    engine.set_cache_folder(cache)
    keep_caches_loaded()
    rules, south, north = key
    reporter = Reporter(reports, _exact_name(key))
    try:
        return key, cached_exact_outcome(south, north, rules, reporter), time.perf_counter() - started
    finally:
        reporter.close()


def _build_missing_caches(chunks: list[Chunk], jobs: int, progress: bool) -> None:
    build_all(missing_caches(chunk.pairing for chunk in chunks), jobs, progress)


def _entropy(seed: int, pairing: Pairing) -> list[int]:
    """The entropy of a pairing's seed blocks, as the module docstring defines it."""
    entropy = [seed, pairing_key(pairing.south, pairing.north)]
    return entropy if pairing.variant == BASE else [*entropy, rules_key(pairing.rules)]


def _blocks(seed: int, chunk: Chunk) -> list[tuple[int, int, int]]:
    """(block seed, first, stop) within each seed block the chunk touches."""
    first_block, last_block = chunk.start // SEED_BLOCK, (chunk.stop - 1) // SEED_BLOCK
    block_seeds = np.random.SeedSequence(_entropy(seed, chunk.pairing)).generate_state(last_block + 1, dtype=np.uint64)
    return [
        (int(block_seeds[block]), max(chunk.start - block * SEED_BLOCK, 0), min(chunk.stop - block * SEED_BLOCK, SEED_BLOCK))
        for block in range(first_block, last_block + 1)
    ]


def _play_batched(study: Study, chunk: Chunk) -> GameBatch | None:
    """The chunk through engine.play_batch, or None when its strategies have no batched version
    (engine.play_game then plays the same games)."""
    pairing = chunk.pairing
    if not batchable(pairing.south, pairing.north, pairing.rules):
        return None
    return concatenate(
        [
            engine.play_batch(stop, pairing.south, pairing.north, rules=pairing.rules, seed=block_seed, start=start)
            for block_seed, start, stop in _blocks(study.seed, chunk)
        ]
    )


def _only_exact_differs(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether two configs differ, in their exact key alone (the games they play are the same)."""
    return old != new and {**old, "exact": None} == {**new, "exact": None}


def _open_manifest(directory: Path, study: Study) -> Manifest:
    """The folder's manifest, or a new one; refuses a folder that belongs to something else."""
    config = study.as_dict()
    if (directory / MANIFEST).exists():
        manifest = read_study_manifest(directory, legacy=True)
        if _only_exact_differs(manifest["config"], config):
            # The games stand: the manifest takes the new config, and exact.parquet is written
            # afresh for it (or dropped), the manifest first so that a crash leaves no stale entry.
            manifest["config"] = config
            manifest.pop("exact", None)
            write_manifest(directory, manifest)
            (directory / EXACT).unlink(missing_ok=True)
        if manifest["config"] != config:
            keys = [*config, *(key for key in manifest["config"] if key not in config)]
            changed = next(key for key in keys if manifest["config"].get(key) != config.get(key))
            raise RecordError(
                f"{directory} holds study records of another config ({changed} differs); "
                "run into a new folder with --out or delete the old one"
            )
        if manifest["versions"].get("engine") != engine.ENGINE_VERSION:
            raise RecordError(
                f"{directory} was played by engine version {manifest['versions'].get('engine')}, "
                f"this is {engine.ENGINE_VERSION}; run into a new folder with --out"
            )
        _check_cut(directory, manifest, study)
        return manifest
    litter = {path.name for path in temporary_files(directory)}  # of a run killed during its first manifest write
    foreign = [path.name for path in directory.iterdir() if path.name not in {LOCK, *litter}] if directory.is_dir() else []
    if foreign:
        raise RecordError(
            f"{directory} is not empty and holds no {MANIFEST} (it holds {foreign[0]}); choose another folder with --out"
        )
    return new_manifest(config)


def chunk_listed(manifest: Manifest, chunk: Chunk) -> bool:
    """Whether the manifest lists the chunk with its games (its files not looked at)."""
    entry = manifest["chunks"].get(chunk.name)
    return entry is not None and entry["rows"] == len(chunk)


def _check_cut(directory: Path, manifest: Manifest, study: Study) -> None:
    """Refuses a folder holding a chunk this plan does not have (cut otherwise, by an older
    modiar): read beside this plan's chunks, its games would count twice. A planned chunk of
    another size is only not done, and is played again."""
    planned = {chunk.name for chunk in plan(study)}
    stray = next((name for name in manifest["chunks"] if name not in planned), None)
    if stray is not None:
        raise RecordError(
            f"{directory} holds chunk {stray} of {manifest['chunks'][stray]['rows']:,} games, which this version of "
            "modiar does not cut; run into a new folder with --out"
        )


def chunk_done(directory: Path, manifest: Manifest, chunk: Chunk, keep_plies: bool, *, games_checked: bool = False) -> bool:
    """Whether the chunk's files are on disk as the manifest vouches for them, with its games
    (``games_checked``: its games file was checked already, by records.check_files)."""
    if not chunk_listed(manifest, chunk):
        return False
    entry = manifest["chunks"][chunk.name]
    folders = (() if games_checked else (GAMES,)) + ((PLIES,) if keep_plies else ())
    files = [chunk_file(entry, folder) for folder in folders]
    return all(file is not None and file_sha256(directory / file["file"]) == file["sha256"] for file in files) and (
        games_checked or parquet_rows(directory / entry["games"]["file"]) == len(chunk)
    )


def _record(directory: Path, result: ChunkResult) -> ChunkEntry:
    """Write a chunk's files, then add it to the journal; returns its manifest entry."""
    entry = ChunkEntry(rows=result.rows, games=_write_chunk_file(directory, GAMES, result.name, result.games))
    if result.plies is not None:
        entry["plies"] = _write_chunk_file(directory, PLIES, result.name, result.plies)
    append_chunk(directory, result.name, entry)
    return entry


def _write_chunk_file(directory: Path, folder: str, name: str, data: bytes) -> FileEntry:
    file = f"{folder}/{name}.parquet"
    write_atomic(directory / file, data)
    return FileEntry(file=file, bytes=len(data), sha256=sha256(data))
