"""The search ladder: mcts(playouts=2**k), 1 to 4,096 playouts, sampled in batches beside the exact ladder.

    name = "search-ladder"        # letters, digits, - and _: it becomes a folder name
    seed = 2026                   # every game's seed derives from it
    playouts = [1, 2, 4, 8]       # the rungs: mcts(playouts=n) for each n
    opponents = ["perfect", "random"]   # engine strategies each rung also meets, in both seats
    half_width = 0.01             # a pairing stops once its first-player score's 95% interval is
                                  #   this narrow either side ...
    round_games = 1000            # ... looked at after every round of this many games ...
    playout_budget = 2000000      # ... or once games x playouts reach this (the strong rungs)

Each rung X = mcts(playouts=n) plays itself and, for each opponent O, X v O and O v X, so that its
score is read in both seats. Games go through engine.play_batch (engine.play.mcts: the scalar
MctsStrategy's games, searched in lockstep), round after round, game i of pairing S v N having
the seed engine.game.game_seeds(seed of [seed, pipeline.runs.seeds.pairing_key(S, N)], i + 1)[i]: the
same config gives the same games whatever the number of workers.

The stopping rule is a fixed-width sequential interval (Chow and Robbins 1965): play rounds until
the interval's half-width is at most ``half_width``. The rule looks at the width, not at the
estimate, so it does not push the estimate one way; its coverage tends to the nominal 95% as the
width shrinks. A pairing stopped by the budget instead says so (``stopped``) and its interval is
wider. The first-player score's interval is pipeline.analysis.stats.first_player's (Clopper-Pearson on
the decisive games, Wilson on the share of them); a rung's score against an opponent, over both
seats, is the mean of its scores as South and as North with the Wilson interval of each seat.

How strong is each rung, exactly: over its own games, every move mcts chose after the first (the
first move's captures may be forfeited) is scored by the strong solution: the share that are a
best move, and the mean loss in stones (the best move's value minus the chosen one's, at the
plies left). Exact per position; only the positions are sampled.

    data/<name>/search_ladder.parquet    one row per pairing, rung by rung
    data/<name>/manifest.json            the config, the versions, each file's bytes and SHA-256

Each pairing's row is also kept in the engine's cache folder (``search/``) as soon as it is
played, so that a run stopped halfway starts again where it stood.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from joblib import Parallel, delayed
from tqdm import tqdm

import engine
from engine.game import WINNERS
from engine.play import replay
from engine.players import policy_table
from engine.store import SEARCH, write_atomic
from engine.tables import kept_tables
from pipeline.analysis.stats import first_player
from pipeline.exact.cache import cached_result, slug
from pipeline.runs.config import RULES_MD, ConfigError, check_keys, load_config, parse_name, parse_rules, parse_strategies
from pipeline.runs.paths import DATA
from pipeline.runs.progress import Ticker
from pipeline.runs.records import RecordError, check_rows, file_sha256, parquet_bytes, sha256, versions
from pipeline.runs.runfolder import SEARCH_LADDER, claim, write_manifest
from pipeline.runs.runfolder import read_manifest as read_run_manifest
from pipeline.runs.sanity import check_search_row
from pipeline.runs.seeds import pairing_key
from pipeline.runs.workers import exit_with_parent, parallel_jobs

CONFIG_KEYS = ("name", "seed", "playouts", "opponents", "half_width", "round_games", "playout_budget", "rules")
REQUIRED = ("name", "seed", "playouts")
ROWS = "search_ladder.parquet"
CACHE_FOLDER = SEARCH.folder  # in the engine's cache folder: each pairing's row once played
COLUMNS = (
    "south", "north", "playouts", "games", "stopped", "south_wins", "draws", "north_wins",
    "first_player_score", "first_player_low", "first_player_high", "mean_plies",
    "feeding_forced", "grand_slam_blocked", "searched_moves", "perfect_moves", "loss_stones",
)  # fmt: skip


@dataclass(frozen=True)
class SearchLadder:
    """A checked search ladder config (see the module docstring)."""

    name: str
    seed: int
    playouts: tuple[int, ...]
    opponents: tuple[str, ...] = ("perfect", "random")
    half_width: float = 0.01
    round_games: int = 1000
    playout_budget: int = 2_000_000
    rules: engine.Rules = RULES_MD

    def rungs(self) -> list[str]:
        return [f"mcts(playouts={n})" for n in self.playouts]

    def pairings(self) -> list[tuple[str, str]]:
        """Every ordered pairing, rung by rung: X v X, then X v O and O v X for each opponent O."""
        found: dict[tuple[str, str], None] = {}
        for rung in self.rungs():
            found[rung, rung] = None
            for opponent in self.opponents:
                found[rung, opponent] = found[opponent, rung] = None
        return list(found)

    def most_games(self, south: str, north: str) -> int:
        """The games a pairing may take: the budget over its largest search, in whole rounds or fewer."""
        playouts = max(_playouts(south), _playouts(north), 1)
        return max(1, min(self.playout_budget // playouts, 1000 * self.round_games))

    def config(self) -> dict[str, Any]:
        rules = {field.name: getattr(self.rules, field.name) for field in dataclasses.fields(self.rules)}
        config = {field.name: getattr(self, field.name) for field in dataclasses.fields(self) if field.name != "rules"}
        return {**config, "playouts": list(self.playouts), "opponents": list(self.opponents), "rules": rules}


def load_search_ladder(path: str | Path) -> SearchLadder:
    """Read and check a search ladder config; any mistake raises ConfigError naming the file."""
    return load_config(Path(path), "search ladder", parse_search_ladder)


def parse_search_ladder(data: dict[str, Any]) -> SearchLadder:
    check_keys(data, CONFIG_KEYS, REQUIRED, "search ladder")
    seed = data["seed"]
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**64:
        raise ConfigError(f"seed must be a whole number from 0 to 2**64 - 1, not {seed!r}")
    playouts = data["playouts"]
    if not isinstance(playouts, list) or not playouts:
        raise ConfigError(f"playouts must be a list of whole numbers, not {playouts!r}")
    for n in playouts:
        parse_strategies([f"mcts(playouts={n})"], "playouts")  # the engine's words for a bad count
    opponents = parse_strategies(data["opponents"], "opponents") if "opponents" in data else ("perfect", "random")
    half_width = _number(data, "half_width", 0.01, lambda x: 0 < x < 0.5, "a number above 0 and below 0.5")
    whole = "a whole number of games"
    round_games = int(_number(data, "round_games", 1000, lambda x: x == int(x) and 1 <= x <= 1_000_000, whole))
    budget = int(_number(data, "playout_budget", 2_000_000, lambda x: x == int(x) and x >= 1, "a whole number, at least 1"))
    return SearchLadder(
        parse_name(data["name"]),
        seed,
        tuple(int(n) for n in playouts),
        tuple(opponents),
        half_width,
        round_games,
        budget,
        parse_rules(data.get("rules", {})),
    )


def _number(data: dict[str, Any], key: str, default: float, accepts: Any, allowed: str) -> float:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or not accepts(value):
        raise ConfigError(f"{key} must be {allowed}, not {value!r}")
    return float(value)


def _playouts(spec: str) -> int:
    strategy = engine.make_strategy(spec)
    return int(getattr(strategy, "playouts", 0))


# ---------------------------------------------------------------------------------------------
# Running


def run_search_ladder(ladder: SearchLadder, out: Path | None = None, *, jobs: int = 1, progress: bool = True) -> Path:
    """Play every pairing of ``ladder`` to its stopping rule and write its rows into ``out``
    (default data/<name>/); returns the folder. The bar moves by each finished pairing's most
    playouts (its budget), its time left estimated from the rate so far."""
    directory = DATA / ladder.name if out is None else out
    with claim(directory, SEARCH_LADDER, ladder.config()):
        folder = engine.cache_folder()
        _build_caches(ladder)
        pairings = ladder.pairings()
        # the strongest searches first, so that the workers finish together
        order = sorted(range(len(pairings)), key=lambda i: -_work(ladder, *pairings[i]))
        rows: dict[int, dict[str, Any]] = {}
        bar = tqdm(
            total=sum(_work(ladder, *pairing) for pairing in pairings),
            desc=f"search ladder {ladder.name}",
            bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}{postfix}]",
            smoothing=0,
            file=sys.stderr,
            disable=not progress,
            postfix=f"0/{len(pairings)} pairings",
        )
        ticker = Ticker(bar)
        try:
            results = Parallel(n_jobs=parallel_jobs(jobs), return_as="generator_unordered")(
                delayed(_pairing_task)(i, ladder, *pairings[i], folder) for i in order
            )
            for i, row in results:
                rows[i] = row
                bar.set_postfix_str(f"{len(rows)}/{len(pairings)} pairings", refresh=False)
                bar.update(_work(ladder, *pairings[i]))
        finally:
            ticker.stop()
            bar.close()
        _write(directory, ladder, [rows[i] for i in range(len(pairings))])
    return directory


def _build_caches(ladder: SearchLadder) -> None:
    """The tables, the solution and the policy tables the workers read (perfect's scores every
    move), built once here rather than by each worker at once."""
    tables = kept_tables(ladder.rules)
    for spec in {"perfect", *ladder.opponents}:
        if engine.is_table_strategy(spec):
            policy_table(spec, ladder.rules, tables=tables)


def _work(ladder: SearchLadder, south: str, north: str) -> int:
    """A pairing's most playouts a game times its most games: its weight in the queue."""
    return ladder.most_games(south, north) * max(1, _playouts(south) + _playouts(north))


def read_rows(directory: Path) -> pa.Table:
    """A search ladder folder's rows, checked against its manifest and each for its arithmetic
    (pipeline.runs.sanity): RecordError for a file that fails either."""
    manifest = read_run_manifest(directory, SEARCH_LADDER)
    entry = manifest.get("files", {}).get(ROWS) if isinstance(manifest.get("files"), dict) else None
    if not isinstance(entry, dict) or file_sha256(directory / ROWS) != entry.get("sha256"):
        raise RecordError(
            f"{directory / ROWS} is missing or does not match its checksum in the manifest; run the search ladder again"
        )
    table = pq.read_table(directory / ROWS)
    rules = str(manifest.get("rules"))

    def check(row: dict[str, Any]) -> None:
        check_search_row(row, engine.Rules.from_name(rules))

    check_rows(directory / ROWS, table.to_pylist(), check, "the row of {south} v {north}", "run the search ladder again")
    return table


def _pairing_task(i: int, ladder: SearchLadder, south: str, north: str, cache: Path | None) -> tuple[int, dict[str, Any]]:
    exit_with_parent()
    engine.set_cache_folder(cache)
    return i, cached_pairing(ladder, south, north)


def cached_pairing(ladder: SearchLadder, south: str, north: str) -> dict[str, Any]:
    """play_pairing's row, kept in the cache folder's ``search/`` once played: a run stopped
    halfway, or another ladder with the same seed, rules and stopping rule, plays it no more."""
    path, of = _pairing_cache(ladder, south, north)
    return cached_result(
        path, of, "search ladder pairing", lambda: play_pairing(ladder, south, north), dict, lambda row: _sane(row, ladder)
    )


def _sane(row: dict[str, Any], ladder: SearchLadder) -> dict[str, Any]:
    """A kept pairing's row, once its figures add up (else InsaneRowError: it is played again)."""
    check_search_row(row, ladder.rules)
    return row


def is_cached(ladder: SearchLadder, south: str, north: str) -> bool:
    """Whether the pairing's row is in the cache folder (its estimate counts it as free)."""
    path, _ = _pairing_cache(ladder, south, north)
    return path is not None and path.is_file()


def _pairing_cache(ladder: SearchLadder, south: str, north: str) -> tuple[Path | None, dict[str, str]]:
    """Where the pairing's row is kept (None without a cache folder) and what it is the row of."""
    of = {
        "rules": ladder.rules.name,
        "south": south,
        "north": north,
        "seed": str(ladder.seed),
        "stopping": f"half_width {ladder.half_width!r}, round_games {ladder.round_games}, playout_budget {ladder.playout_budget}",
        "engine": engine.ENGINE_VERSION,
    }
    folder = engine.cache_folder()
    if folder is None:
        return None, of
    key = hashlib.sha256(json.dumps(of, sort_keys=True).encode()).hexdigest()[:12]
    name = f"{ladder.rules.name}-{slug(south)}-{slug(north)}-{key}-engine{engine.ENGINE_VERSION}.json"
    return folder / CACHE_FOLDER / name, of


def play_pairing(ladder: SearchLadder, south: str, north: str) -> dict[str, Any]:
    """One pairing's row: rounds of games until the stopping rule, then its figures."""
    rules = ladder.rules
    seed = int(np.random.SeedSequence([ladder.seed, pairing_key(south, north)]).generate_state(1, dtype=np.uint64)[0])
    most = ladder.most_games(south, north)
    counts = np.zeros(3, dtype=np.int64)  # South's wins, draws, North's wins
    plies = feeding = slams = 0
    strength = np.zeros(3)  # moves searched, perfect ones, stones lost
    games = 0
    while True:
        stop = min(games + ladder.round_games, most)
        batch = engine.play_batch(stop, south, north, rules=rules, seed=seed, start=games)
        counts += np.bincount(np.asarray(batch.winner, dtype=np.int64), minlength=3)[[_SOUTH, _DRAW, _NORTH]]
        plies += int(batch.plies.sum())
        feeding += int(np.count_nonzero(batch.events["feeding_forced"]))
        slams += int(np.count_nonzero(batch.events["grand_slam_blocked"]))
        strength += strength_of(batch, rules, [side for side, spec in enumerate((south, north)) if _playouts(spec)])
        games = stop
        score = first_player(counts[:1], counts[1:2], counts[2:])
        precise = (score.high[0] - score.low[0]) / 2 <= ladder.half_width
        if precise or games >= most:
            break
    return {
        "south": south,
        "north": north,
        "playouts": max(_playouts(south), _playouts(north)),
        "games": games,
        "stopped": "precision" if precise else "budget",
        "south_wins": int(counts[0]),
        "draws": int(counts[1]),
        "north_wins": int(counts[2]),
        "first_player_score": float(score.score[0]),
        "first_player_low": float(score.low[0]),
        "first_player_high": float(score.high[0]),
        "mean_plies": plies / games,
        "feeding_forced": feeding / games,
        "grand_slam_blocked": slams / games,
        "searched_moves": int(strength[0]),
        "perfect_moves": int(strength[1]),
        "loss_stones": float(strength[2]),
    }


_SOUTH, _DRAW, _NORTH = (WINNERS.index(name) for name in ("south", "draw", "north"))


def strength_of(batch: engine.GameBatch, rules: engine.Rules, sides: list[int]) -> np.ndarray:
    """(moves, best moves, stones lost) of the moves after the first that ``sides`` (0 South, 1
    North) played, scored by the strong solution at the plies left (perfect's move values,
    engine.players.policy): a move is best when no legal move has a higher value."""
    searching = sides
    if not searching or not len(batch.moves):
        return np.zeros(3)
    tables = kept_tables(rules)
    played = replay(rules, batch.moves, batch.move_offsets, tables=tables)
    ply = np.arange(len(batch.moves)) - np.repeat(batch.move_offsets[:-1], batch.plies)
    chosen = np.flatnonzero((ply > 0) & np.isin(played.mover, searching))
    values = policy_table("perfect", rules, tables=tables).values
    moves = best = lost = 0.0
    for at in np.unique(ply[chosen]):
        here = chosen[ply[chosen] == at]
        position = played.position[here].astype(np.int64)
        child = tables.child[position]
        q = values.q(tables.captured[position].astype(np.int64), child, rules.ply_cap - int(at))
        q = np.where(child >= 0, q, np.iinfo(np.int64).min)
        top = q.max(axis=1)
        taken = q[np.arange(len(here)), played.pit[here].astype(np.int64)]
        moves, best, lost = moves + len(here), best + np.count_nonzero(taken == top), lost + float((top - taken).sum())
    return np.array([moves, best, lost])


def _write(directory: Path, ladder: SearchLadder, rows: list[dict[str, Any]]) -> None:
    table = pa.table({column: [row[column] for row in rows] for column in COLUMNS})
    data = parquet_bytes(table.replace_schema_metadata({"search_ladder": ladder.name, "rules": ladder.rules.name}))
    try:
        directory.mkdir(parents=True, exist_ok=True)
        write_atomic(directory / ROWS, data)
        manifest = {
            SEARCH_LADDER.name: ladder.name,
            "rules": ladder.rules.name,
            "config": ladder.config(),
            "versions": versions(),
            "files": {ROWS: {"bytes": len(data), "sha256": sha256(data)}},
        }
        write_manifest(directory, SEARCH_LADDER, manifest)
    except OSError as error:
        raise RecordError(f"cannot write the search ladder to {directory}: {error.strerror or error}") from None
