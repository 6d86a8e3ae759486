"""The cost model's one home: the measured rates and sizes of pipeline/costs.toml, read once.

Every estimate of time or memory (pipeline.estimates, the progress bars of pipeline.runs.progress
and pipeline.exact, the products' planners) reads its figures from ``COSTS``; none is written in
code. The engine says what its work is (positions, plies searched, playouts a move), the file
what that work costs on this machine. ``modiar bench --write-costs`` rewrites the entries it
measured (``rewrite_costs``), keeping the others and every comment.

A file that lacks an entry, holds one this module does not read, or one that is not a positive
number (a whole one for bytes) is refused in one line (CostError) naming the entry.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from engine.store import write_atomic
from pipeline.runs.paths import PACKAGE

COSTS_FILE = PACKAGE / "costs.toml"


class CostError(ValueError):
    """A cost file that cannot be read, or an entry of it that is missing, unknown or not a cost."""


@dataclass(frozen=True)
class Costs:
    """Every figure of the cost file, by its name there (its comment says what it measures)."""

    base_bytes: int
    study_worker_bytes: int
    chunk_bytes: int
    positions_bytes: int
    sample_game_bytes: int
    scalar_game_seconds: float
    batched_game_seconds: float
    heuristic_game_seconds: float
    perfect_game_seconds: float
    alphabeta_game_seconds: float
    alphabeta_growth: float
    mcts_playouts_per_second: float
    mcts_batched_playouts_per_second: float
    mcts_batched_slowdown: float
    mcts_playout_bytes: int
    mcts_board_bytes_per_position: int
    table_seconds_per_position: float
    table_bytes_per_position: int
    table_growth: float
    solve_seconds_per_position: float
    solve_bytes_per_position: int
    solve_seconds_growth: float
    solve_bytes_growth: float
    remoteness_seconds_per_position: float
    remoteness_bytes_per_position: int
    verdict_seconds_per_position: float
    verdict_bytes_per_position: int
    solution_bytes_per_position: int
    policy_seconds_per_position: float
    policy_bytes_per_position: int
    sweep_seconds_per_position: float
    sweep_bytes_per_position: int
    exact_cycling_seconds: float
    exact_wide_pair_seconds: float
    exact_wide_one_seconds: float
    exact_narrow_seconds: float
    exploit_wide_seconds: float
    exploit_seconds: float
    exact_worker_bytes: int
    atlas_seconds_per_position: float
    atlas_bytes_per_position: int
    fair_exact_seconds: float
    fair_start_seconds: float
    fair_start_bytes: int
    report_tables_seconds: float
    report_tables_seconds_per_game: float
    report_sections_seconds: float
    report_figures_seconds: float
    report_calibration_seconds_per_strategy: float
    bench_seconds: float


def read_costs(path: Path = COSTS_FILE) -> Costs:
    """The costs of the file at ``path`` (CostError when it cannot be read or an entry is wrong)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise CostError(f"cannot read the cost file {path}: {error.strerror or error}") from None
    return parse_costs(text, path)


def parse_costs(text: str, path: Path = COSTS_FILE) -> Costs:
    """The costs of a cost file's text (``path`` names it in errors)."""
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise CostError(f"the cost file {path} is not TOML: {error}") from None
    kinds = _kinds()
    unknown = sorted(set(table) - set(kinds))
    if unknown:
        raise CostError(f"the cost file {path} has an entry no estimate reads: {unknown[0]}; remove it or name it as Costs does")
    missing = [name for name in kinds if name not in table]
    if missing:
        raise CostError(f"the cost file {path} lacks the entry {missing[0]}; restore it from the repository's copy")
    checked: dict[str, Any] = {name: _checked(name, table[name], whole, path) for name, whole in kinds.items()}
    return Costs(**checked)


def rewrite_costs(measured: Mapping[str, float], path: Path = COSTS_FILE) -> dict[str, tuple[str, str]]:
    """Rewrite the entries ``measured`` names with their new values, in place of the old ones on
    their lines (comments and every other entry kept), the whole file at once; returns each
    entry's old and new value as written. Refuses (CostError, nothing written) a name that is no
    entry of the file, or a value that is no cost."""
    read_costs(path)  # the file as it stands reads
    text = path.read_text(encoding="utf-8")
    kinds = _kinds()
    changed = {}
    for name, value in measured.items():
        if name not in kinds:
            raise CostError(f"{name} is no entry of the cost file {path}")
        new = _written(_checked(name, value, kinds[name], path))
        found = re.search(rf"^({re.escape(name)}\s*=\s*)([^#\n]*?)(\s*(?:#.*)?)$", text, re.MULTILINE)
        if found is None:
            raise CostError(f"the cost file {path} has no line of its own for {name}")
        changed[name] = (found.group(2), new)
        text = text[: found.start(2)] + new + text[found.end(2) :]
    parse_costs(text, path)  # what is written reads back
    write_atomic(path, text.encode("utf-8"))
    return changed


def _kinds() -> dict[str, bool]:
    """Each entry's name, and whether it is a whole number (bytes)."""
    return {field.name: field.type == "int" for field in fields(Costs)}


def _checked(name: str, value: object, whole: bool, path: Path) -> int | float:
    """``value`` as the cost ``name`` (a whole number of bytes when ``whole``), else CostError."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise CostError(f"the cost file {path} gives {name} = {value!r}: a cost is a number above 0")
    if not whole:
        return float(value)
    if not float(value).is_integer():
        raise CostError(f"the cost file {path} gives {name} = {value!r}: bytes are a whole number")
    return int(value)


def _written(value: int | float) -> str:
    """A value as the file writes it: a whole number with its thousands marked, else to three figures."""
    if isinstance(value, int):
        return f"{value:_}"
    rounded = float(f"{value:.3g}")
    return f"{rounded:_}" if rounded >= 1 else repr(rounded)


COSTS = read_costs()
