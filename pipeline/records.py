"""A study's records on disk: Parquet chunks of games (and plies) and the manifest that vouches for them.

    data/<study>/manifest.json           the config, the versions, every chunk: file, rows, SHA-256
    data/<study>/games/pPPP-cCCCCC.parquet   one row per game of chunk C of pairing P
    data/<study>/plies/pPPP-cCCCCC.parquet   one row per ply (keep_plies = true)

Records are written once and never edited: each file goes to a temporary name and is then
renamed into place, and so is the manifest after each chunk. Parquet is written with fixed
settings and no timestamps, so the same games always give the same bytes.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import platform
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

import engine
from engine.batch import END_REASONS, WINNERS, GameBatch
from pipeline.paths import GAMES, MANIFEST

COMPRESSION = "zstd"
COMPRESSION_LEVEL = 3
PLY_FLAGS = ("feeding_active", "feeding_forced", "feeding_lapsed", "grand_slam_blocked", "first_move_forfeit", "capture")


class RecordError(ValueError):
    """Records on disk that do not match their manifest or the study asked for."""


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
    """The SHA-256 of a file, None when it is missing."""
    try:
        return sha256(path.read_bytes())
    except FileNotFoundError:
        return None


def write_atomic(path: Path, data: bytes) -> None:
    """Write a whole file or nothing: a temporary file, flushed, then renamed into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(temporary, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def versions() -> dict[str, str]:
    return {
        "engine": engine.ENGINE_VERSION,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pyarrow": pa.__version__,
    }


def new_manifest(config: dict[str, Any]) -> dict[str, Any]:
    return {"study": config["name"], "config": config, "versions": versions(), "chunks": {}}


def read_manifest(directory: Path) -> dict[str, Any]:
    path = directory / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RecordError(f"{path} not found: is {directory} a study folder written by 'modiar study run'?") from None
    except (OSError, ValueError) as error:
        raise RecordError(f"{path} is not a readable manifest ({error}); run the study again into a new folder") from None
    if not isinstance(manifest, dict) or not {"config", "chunks", "versions"} <= set(manifest):
        raise RecordError(f"{path} is not a study manifest (no config, versions and chunks)")
    return manifest


def write_manifest(directory: Path, manifest: dict[str, Any]) -> None:
    manifest = {**manifest, "chunks": dict(sorted(manifest["chunks"].items()))}
    write_atomic(directory / MANIFEST, (json.dumps(manifest, indent=1) + "\n").encode())


def check_files(directory: Path, manifest: dict[str, Any], folder: str = GAMES) -> list[Path]:
    """The chunk files of one folder (games/ or plies/), each checked against the manifest.

    A missing, changed or unlisted file raises RecordError naming it.
    """
    listed = {}
    for chunk in manifest["chunks"].values():
        entry = chunk.get(folder)
        if entry is not None:
            listed[entry["file"]] = entry["sha256"]
    for file, digest in sorted(listed.items()):
        found = file_sha256(directory / file)
        if found is None:
            raise RecordError(f"{directory / file} is missing; run the study again to replay its chunk")
        if found != digest:
            raise RecordError(
                f"{directory / file} does not match its checksum in the manifest (truncated or changed); "
                "delete it and run the study again"
            )
    on_disk = sorted((directory / folder).glob("*.parquet")) if (directory / folder).is_dir() else []
    for path in on_disk:
        if f"{folder}/{path.name}" not in listed:
            raise RecordError(f"{path} is not in the manifest of {directory}: a foreign file; move it away")
    return [directory / file for file in sorted(listed)]


def scan_games(directory: str | Path, folder: str = GAMES) -> pl.LazyFrame:
    """The games (or, with folder="plies", the plies) of a study as a polars LazyFrame, after
    checking every file against the manifest."""
    directory = Path(directory)
    files = check_files(directory, read_manifest(directory), folder)
    if not files:
        raise RecordError(f"{directory} holds no finished chunk in {folder}/; run the study first")
    return pl.scan_parquet(files)


def read_games(directory: str | Path) -> Any:
    """The games of a study as a pandas DataFrame (checked as by scan_games)."""
    return scan_games(directory).collect().to_pandas()
