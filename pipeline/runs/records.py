"""A study's records on disk: Parquet chunks of games (and plies) and the manifest that vouches for them.

    data/<study>/manifest.json           the config, the versions, every chunk: file, rows, SHA-256;
                                           sealed as the study's manifest (pipeline.runs.runfolder)
    data/<study>/.chunks.jsonl           chunks finished since the manifest was written (a running
                                           or killed run), one sealed JSON line each; read with the manifest
    data/<study>/.modiar.lock            held by the run writing the folder (its pid inside)
    data/<study>/games/pPPP-cCCCCC.parquet   one row per game of chunk C of pairing P
    data/<study>/plies/pPPP-cCCCCC.parquet   one row per ply (keep_plies = true)
    data/<study>/exact.parquet           one row per pairing with an exact outcome (exact = true or
                                           "self-play"), listed in the manifest as "exact": file, rows, SHA-256

Records are written once and never edited: each file goes to a temporary name and is then
renamed into place; each finished chunk is then appended to the journal, and the manifest is
rewritten whole (journal included) when a run starts and when it ends. Parquet is written with
fixed settings and no timestamps, so the same games always give the same bytes.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import platform
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NotRequired, Required, TypedDict, cast

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

import engine
from engine.game import TURN_FLAGS, WINNERS
from engine.play import END_REASONS, GameBatch
from engine.store import DamagedFileError, file_digest, regular_file, sealed, unsealed
from pipeline.runs.paths import EXACT, GAMES, JOURNAL, MANIFEST, PLIES
from pipeline.runs.runfolder import STUDY
from pipeline.runs.runfolder import RecordError as RecordError  # raised for a study's records too
from pipeline.runs.runfolder import read_manifest as read_run_manifest
from pipeline.runs.runfolder import write_manifest as write_run_manifest
from pipeline.runs.sanity import check_exact_row, game_faults

COMPRESSION = "zstd"
COMPRESSION_LEVEL = 3
PLY_FLAGS = TURN_FLAGS  # a bool column each in the plies/ schema

PAIRING_COLUMNS = ("rules", "south", "north")  # the columns that name a pairing of a run, in every table
IS_SELF_PLAY = pl.col("south") == pl.col("north")  # a row of a strategy against itself


class FileEntry(TypedDict):
    """One chunk file in the manifest: its path in the study folder, size and SHA-256."""

    file: str
    bytes: int
    sha256: str


class ChunkEntry(TypedDict, total=False):
    """One finished chunk: its games (rows), its games/ file and, with keep_plies, its plies/ file."""

    rows: Required[int]
    games: FileEntry
    plies: FileEntry


class ExactEntry(FileEntry):
    """exact.parquet in the manifest: its file, size, SHA-256 and rows (one per pairing)."""

    rows: int


class Manifest(TypedDict):
    """manifest.json: the study's name, its config (Study.as_dict), the versions that played it, its
    chunks, and its exact outcomes once they are written."""

    study: str
    config: dict[str, Any]
    versions: dict[str, str]
    chunks: dict[str, ChunkEntry]
    exact: NotRequired[ExactEntry]


# ---------------------------------------------------------------------------------------------
# Tables


def games_table(batch: GameBatch, *, study: str, first_id: int, engine_version: str = engine.ENGINE_VERSION) -> pa.Table:
    """The games of a batch as one Arrow table, one row per game (the games/ schema)."""
    n = len(batch)
    offsets = batch.move_offsets.astype(np.int32)
    columns: dict[str, pa.Array] = {
        "study": _constant(study, n),
        "rules": _constant(batch.rules, n),
        "engine_version": _constant(engine_version, n),
        "game_id": pa.array(np.arange(first_id, first_id + n, dtype=np.int64)),
        "south": _constant(batch.south, n),
        "north": _constant(batch.north, n),
        "seed": pa.array(batch.seeds.astype(np.uint64)),
        "winner": _decoded(batch.winner, WINNERS),
        "score_south": pa.array(batch.score_south.astype(np.int16)),
        "score_north": pa.array(batch.score_north.astype(np.int16)),
        "plies": pa.array(batch.plies.astype(np.int16)),
        "end_reason": _decoded(batch.end_reason, END_REASONS),
        "moves": pa.ListArray.from_arrays(pa.array(offsets), pa.array(batch.moves.astype(np.uint8))),
    }
    for name in engine.EVENTS:
        columns[name] = pa.array(batch.events[name].astype(np.uint16))
    return pa.table(columns)


def batch_of_records(records: Sequence[engine.GameRecord], south: str, north: str, rules: str) -> GameBatch:
    """Scalar game records as the columns of a GameBatch, so both paths write one schema."""
    plies = np.array([record.plies for record in records], dtype=np.int16)
    offsets = np.zeros(len(records) + 1, dtype=np.int64)
    np.cumsum(plies, out=offsets[1:])
    moves = np.fromiter((pit for record in records for pit in record.moves), dtype=np.uint8, count=int(offsets[-1]))
    return GameBatch(
        seeds=np.array([record.seed for record in records], dtype=np.uint64),
        winner=np.array([WINNERS.index(record.winner) for record in records], dtype=np.uint8),
        score_south=np.array([record.score_south for record in records], dtype=np.int16),
        score_north=np.array([record.score_north for record in records], dtype=np.int16),
        plies=plies,
        end_reason=np.array([END_REASONS.index(record.end_reason) for record in records], dtype=np.uint8),
        moves=moves,
        move_offsets=offsets,
        events={name: np.array([record.events[name] for record in records], dtype=np.uint16) for name in engine.EVENTS},
        south=south,
        north=north,
        rules=rules,
    )


def plies_table(batch: GameBatch, rules: engine.Rules, first_id: int) -> pa.Table:
    """One row per ply of every game, replayed with engine.apply_move: the board before the move,
    the stones it captured and its turn flags."""
    columns: dict[str, list[int]] = {name: [] for name in ("game_id", "ply", "mover", "pit", "board", "captured", *PLY_FLAGS)}
    start = engine.start_board(rules)
    for game in range(len(batch)):
        board = start
        begin, end = batch.move_offsets[game : game + 2].tolist()
        for ply, pit in enumerate(batch.moves[begin:end].tolist()):
            result = engine.apply_move(board, ply % 2, pit, ply, rules)
            for name, value in zip(
                ("game_id", "ply", "mover", "pit", "board"), (first_id + game, ply, ply % 2, pit, board), strict=True
            ):
                columns[name].append(value)
            columns["captured"].append(result.captured)
            for flag in PLY_FLAGS:
                columns[flag].append(result.events[flag] > 0)
            board = result.board
    types = {
        "game_id": pa.int64(),
        "ply": pa.int16(),
        "mover": pa.uint8(),
        "pit": pa.uint8(),
        "board": pa.uint64(),
        "captured": pa.uint8(),
    }
    return pa.table({name: pa.array(values, type=types.get(name, pa.bool_())) for name, values in columns.items()})


def exact_table(
    outcomes: Sequence[tuple[str, engine.ExactOutcome]], *, study: str, engine_version: str = engine.ENGINE_VERSION
) -> pa.Table:
    """Exact outcomes as one Arrow table, one row per (variant label, outcome) in the order given
    (the exact.parquet schema): the outcome, its length distribution (plies[k]: the probability of
    a game of k plies), its margins (South's score minus North's, with their probability, by
    margin) and, for every event, the probability that it fires in a game and its mean count."""
    columns: dict[str, pa.Array] = {
        "study": pa.array([study] * len(outcomes), pa.string()),
        "engine_version": pa.array([engine_version] * len(outcomes), pa.string()),
        "variant": pa.array([label for label, _ in outcomes], pa.string()),
        "rules": pa.array([outcome.rules.name for _, outcome in outcomes], pa.string()),
        "south": pa.array([outcome.south for _, outcome in outcomes], pa.string()),
        "north": pa.array([outcome.north for _, outcome in outcomes], pa.string()),
    }
    for name in ("south_win", "draw", "north_win", "first_player_score", "mean_plies", "unresolved"):
        columns[name] = pa.array([float(getattr(outcome, name)) for _, outcome in outcomes], pa.float64())
    columns["plies"] = pa.array([outcome.plies.astype(np.float64) for _, outcome in outcomes], pa.list_(pa.float64()))
    margin = pa.list_(pa.struct([("margin", pa.int16()), ("probability", pa.float64())]))
    columns["margin"] = pa.array(
        [[{"margin": m, "probability": p} for m, p in sorted(outcome.margin.items())] for _, outcome in outcomes], margin
    )
    for name in engine.EVENTS:
        columns[f"fires_{name}"] = pa.array([outcome.event_fires[name] for _, outcome in outcomes], pa.float64())
        columns[f"mean_{name}"] = pa.array([outcome.event_mean[name] for _, outcome in outcomes], pa.float64())
    return pa.table(columns)


def parquet_bytes(table: pa.Table) -> bytes:
    """The table as Parquet, the same bytes for the same table (fixed settings, no timestamps)."""
    sink = io.BytesIO()
    pq.write_table(
        table,
        sink,
        compression=COMPRESSION,
        compression_level=COMPRESSION_LEVEL,
        row_group_size=max(len(table), 1),
        write_statistics=True,
        store_schema=True,
    )
    return sink.getvalue()


def _constant(text: str, n: int) -> pa.Array:
    return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int8)), pa.array([text])).cast(pa.string())


def _decoded(codes: np.ndarray, names: tuple[str, ...]) -> pa.Array:
    return pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int8)), pa.array(list(names))).cast(pa.string())


# ---------------------------------------------------------------------------------------------
# Files and the manifest


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_sha256(path: Path) -> str | None:
    """The SHA-256 of a file, None when it is missing, not a regular file or cannot be read."""
    return file_digest(path)


def versions() -> dict[str, str]:
    return {
        "engine": engine.ENGINE_VERSION,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pyarrow": pa.__version__,
    }


def new_manifest(config: dict[str, Any]) -> Manifest:
    return {"study": config["name"], "config": config, "versions": versions(), "chunks": {}}


def read_study_manifest(directory: Path, *, legacy: bool = False) -> Manifest:
    """The folder's manifest with the chunks of its journal, its seal (pipeline.runs.runfolder) and
    every field checked: a manifest is read from a folder a user may have edited, and its names
    become paths. ``legacy``: an unsealed manifest of an earlier release too (for the run)."""
    path = directory / MANIFEST
    manifest = read_run_manifest(directory, STUDY, legacy=legacy)
    _check_manifest(path, manifest)
    for name, entry in _journal(directory):
        manifest["chunks"][name] = entry
    return cast(Manifest, manifest)


def write_manifest(directory: Path, manifest: Manifest) -> None:
    """Write the whole manifest, then drop the journal it now holds."""
    write_run_manifest(directory, STUDY, {**manifest, "chunks": dict(sorted(manifest["chunks"].items()))})
    (directory / JOURNAL).unlink(missing_ok=True)


def append_chunk(directory: Path, name: str, entry: ChunkEntry) -> None:
    """Record one finished chunk in the journal: one line appended and flushed to disk, a cost
    that does not grow with the chunks before it (the manifest is rewritten only at the end)."""
    with open(directory / JOURNAL, "ab") as handle:
        handle.write((json.dumps(sealed({"chunk": name, **entry}, _CHUNK_RECORD)) + "\n").encode())
        handle.flush()
        os.fsync(handle.fileno())


def _journal(directory: Path) -> list[tuple[str, ChunkEntry]]:
    """The journal's chunks; a line cut short by a kill (the last one) is not a chunk."""
    path = directory / JOURNAL
    try:
        if not regular_file(path):
            return []
        lines = path.read_bytes().split(b"\n")
    except DamagedFileError as error:
        raise RecordError(str(error)) from None
    except OSError as error:
        raise RecordError(f"{path} cannot be read ({error.strerror}); move it away to resume from the manifest") from None
    chunks: list[tuple[str, ChunkEntry]] = []
    for number, line in enumerate(lines, 1):
        try:
            entry = unsealed(json.loads(line.decode("utf-8")), _CHUNK_RECORD, path)
            name = entry.pop("chunk")
        except (ValueError, AttributeError, KeyError, TypeError):  # DamagedFileError included
            if number >= len(lines) - 1:  # the last line, or one cut before its newline
                continue
            raise RecordError(f"{path} line {number} is not a chunk record; move the file away to resume") from None
        _check_chunk(path, name, entry)
        chunks.append((name, cast(ChunkEntry, entry)))
    return chunks


def _check_manifest(path: Path, manifest: object) -> None:
    fields = {"study": str, "config": dict, "versions": dict, "chunks": dict}
    if not isinstance(manifest, dict) or not set(fields) <= set(manifest):
        raise RecordError(f"{path} is not a study manifest (it needs {', '.join(fields)})")
    for key, kind in fields.items():
        if not isinstance(manifest[key], kind):
            raise RecordError(
                f"{path}: {key!r} must be a JSON {'string' if kind is str else 'object'}, not {manifest[key]!r:.60}"
            )
    for name, entry in manifest["chunks"].items():
        _check_chunk(path, name, entry)
    if "exact" in manifest:
        _check_exact(path, manifest["exact"])


def _check_exact(path: Path, entry: object) -> None:
    """The exact entry names exact.parquet, with a SHA-256 and its rows."""
    if not isinstance(entry, dict) or entry.get("file") != EXACT:
        raise RecordError(f"{path}: 'exact' names a file other than {EXACT}")
    digest, rows = entry.get("sha256"), entry.get("rows")
    if not isinstance(digest, str) or not _SHA256.fullmatch(digest) or not isinstance(rows, int) or isinstance(rows, bool):
        raise RecordError(f"{path}: 'exact' has no SHA-256 or row count for {EXACT}")


def _check_chunk(path: Path, name: object, entry: object) -> None:
    """A chunk entry names exactly the files a run writes for it: nothing outside the folder."""
    if not isinstance(name, str) or not _CHUNK.fullmatch(name):
        raise RecordError(f"{path}: {name!r:.60} is not a chunk name such as p000-c00000")
    rows = entry.get("rows") if isinstance(entry, dict) else None
    if not isinstance(entry, dict) or not isinstance(rows, int) or isinstance(rows, bool) or rows < 0:
        raise RecordError(f"{path}: chunk {name} has no row count")
    for folder in (GAMES, PLIES):
        file = entry.get(folder)
        if file is None:
            continue
        if not isinstance(file, dict) or file.get("file") != f"{folder}/{name}.parquet":
            raise RecordError(f"{path}: chunk {name} names a file other than {folder}/{name}.parquet")
        digest = file.get("sha256")
        if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
            raise RecordError(f"{path}: chunk {name} has no SHA-256 for {folder}/{name}.parquet")
    if GAMES not in entry:
        raise RecordError(f"{path}: chunk {name} has no games file")


_CHUNK = re.compile(r"p[0-9]{3,}-c[0-9]{5,}")
_CHUNK_RECORD = {"kind": "finished chunk"}  # what a line of the journal says it is (engine.store.integrity)
_SHA256 = re.compile(r"[0-9a-f]{64}")


def parquet_rows(path: Path) -> int | None:
    """The rows a Parquet file says it holds, None when it cannot be read as Parquet."""
    try:
        return int(pq.read_metadata(path).num_rows)
    except (OSError, ValueError, pa.ArrowException):
        return None


def chunk_file(entry: ChunkEntry, folder: str) -> FileEntry | None:
    """A chunk's file in games/ or plies/, None when it has none there."""
    return entry.get("games") if folder == GAMES else entry.get("plies")


def check_files(directory: Path, manifest: Manifest, folder: str = GAMES) -> list[Path]:
    """The chunk files of one folder (games/ or plies/), each checked against the manifest.

    A missing, changed or unlisted file raises RecordError naming it.
    """
    listed, rows = {}, {}
    for chunk in manifest["chunks"].values():
        entry = chunk_file(chunk, folder)
        if entry is not None:
            listed[entry["file"]] = entry["sha256"]
            rows[entry["file"]] = chunk["rows"]
    for file, digest in sorted(listed.items()):
        found = file_sha256(directory / file)
        if found is None:
            raise RecordError(f"{_unreadable(directory / file)}; run the study again to replay its chunk")
        if found != digest:
            raise RecordError(
                f"{directory / file} does not match its checksum in the manifest (truncated or changed); "
                "delete it and run the study again"
            )
        if folder == GAMES and parquet_rows(directory / file) != rows[file]:
            raise RecordError(
                f"{directory / file} holds {parquet_rows(directory / file)} games, its manifest says {rows[file]}; "
                "the manifest was edited: run the study again into a new folder"
            )
    on_disk = sorted((directory / folder).glob("*.parquet")) if (directory / folder).is_dir() else []
    for path in on_disk:
        if f"{folder}/{path.name}" not in listed:
            raise RecordError(f"{path} is not in the manifest of {directory}: a foreign file; move it away")
    return [directory / file for file in sorted(listed)]


def _unreadable(path: Path) -> str:
    """Why a file that file_sha256 could not read is not there: missing, not a regular file, or unreadable."""
    if not os.path.lexists(path):
        return f"{path} is missing"
    try:
        regular_file(path)
    except DamagedFileError as error:
        return str(error)  # not a regular file
    return f"{path} cannot be read"


def scan_games(directory: str | Path, folder: str = GAMES) -> pl.LazyFrame:
    """The games (or, with folder="plies", the plies) of a study as a polars LazyFrame, after
    checking every file against the manifest, and every game for its own arithmetic."""
    directory = Path(directory)
    files = check_files(directory, read_study_manifest(directory), folder)
    if not files:
        raise RecordError(f"{directory} holds no finished chunk in {folder}/; run the study first")
    if folder == GAMES:
        _check_game_rows(directory, files)
    return pl.scan_parquet(files)


def _check_game_rows(directory: Path, files: list[Path]) -> None:
    """Refuse (RecordError naming the game) a study whose games break their own arithmetic
    (pipeline.runs.sanity.game_faults): sealed, yet not what this code writes."""
    try:
        faults = game_faults(pl.scan_parquet(files))
    except (ValueError, pl.exceptions.PolarsError) as error:  # InsaneRowError is a ValueError
        raise RecordError(f"{directory}: its games cannot be checked ({error}); run the study again into a new folder") from None
    if faults.height:
        game, fault = faults.row(0)
        more = f" (and {faults.height - 1} more games)" if faults.height > 1 else ""
        raise RecordError(f"{directory}: game {game} does not add up: {fault}{more}; run the study again into a new folder")


def exact_done(directory: Path, manifest: Manifest, rows: int) -> bool:
    """Whether exact.parquet is on disk as the manifest vouches for it, with ``rows`` outcomes."""
    entry = manifest.get("exact")
    return (
        entry is not None
        and entry["rows"] == rows
        and file_sha256(directory / EXACT) == entry["sha256"]
        and parquet_rows(directory / EXACT) == rows
    )


def scan_exact(directory: str | Path) -> pl.LazyFrame:
    """The exact outcomes of a study (exact.parquet) as a polars LazyFrame, after checking the
    file against the manifest."""
    directory = Path(directory)
    manifest = read_study_manifest(directory)
    entry = manifest.get("exact")
    if entry is None:
        raise RecordError(f"{directory} holds no exact outcomes: its config says no exact, or its run did not finish")
    if not exact_done(directory, manifest, entry["rows"]):
        raise RecordError(
            f"{directory / EXACT} is missing or does not match its checksum in the manifest; "
            "run the study again to rewrite it from the cache"
        )
    check_exact_rows(directory / EXACT, "run the study again to rewrite it from the cache")
    return pl.scan_parquet(directory / EXACT)


def check_exact_rows(path: Path, remedy: str) -> None:
    """Refuse (RecordError naming the row) an exact.parquet one of whose outcomes does not add up
    (pipeline.runs.sanity): sealed, yet not what this code writes."""
    check_rows(path, pq.read_table(path).to_pylist(), check_exact_row, "the outcome of {south} v {north}", remedy)


def check_rows(
    path: Path, rows: list[dict[str, Any]], check: Callable[[dict[str, Any]], object], row_name: str, remedy: str
) -> None:
    """Refuse (RecordError) the first of ``rows``, read from ``path``, that ``check`` finds does
    not add up (pipeline.runs.sanity), named by ``row_name`` (a format of the row's columns), and say
    ``remedy``."""
    for row in rows:
        try:
            check(row)
        except (ValueError, KeyError, TypeError) as error:  # InsaneRowError is a ValueError
            named = row_name.format_map({key: row.get(key) for key in re.findall(r"{(\w+)}", row_name)})
            raise RecordError(f"{path}: {named} does not add up ({error}); {remedy}") from None


def read_games(directory: str | Path) -> Any:
    """The games of a study as a pandas DataFrame (checked as by scan_games)."""
    return scan_games(directory).collect().to_pandas()
