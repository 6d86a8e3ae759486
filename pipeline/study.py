"""A study: a TOML config (pipeline/studies/*.toml), checked in full before anything runs.

    name = "smoke"                 # letters, digits, - and _: it becomes a folder name
    seed = 7                       # 0 to 2**64 - 1: every game's seed derives from it
    games_per_seat = 1000          # games of each ordered pairing (South, North)
    strategies = ["random", "greedy"]   # spec strings of engine.make_strategy
    keep_plies = false             # also write one row per ply (plies/)
    chunk_games = 262144           # at most this many games per chunk (a unit of work, a file, a
                                   #   resume point); each pairing is cut into at least 8 chunks

    [rules]                        # any field of engine.Rules; RULES.md when empty
    feeding = false

    [games]                        # fewer (or more) games for some pairings:
    "mcts(playouts=200)" = 100     #   a strategy: at most this many per seat in its pairings
    "random vs random" = 1000000   #   an ordered pairing "SOUTH vs NORTH": exactly this many

The study is a round robin of every ordered pairing of the strategies, self-play included.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import engine

CHUNK_GAMES = 1 << 18
MAX_SEED = (1 << 64) - 1
KEYS = ("name", "seed", "games_per_seat", "strategies", "rules", "keep_plies", "chunk_games", "games")
REQUIRED = ("name", "seed", "games_per_seat", "strategies")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
VERSUS = " vs "


class ConfigError(ValueError):
    """A study config that cannot run: one line naming the problem and the way out."""


@dataclass(frozen=True)
class Pairing:
    """One ordered pairing of the round robin; ``number`` (its place in the round robin) names its files."""

    number: int
    south: str
    north: str
    games: int


@dataclass(frozen=True)
class Study:
    name: str
    seed: int
    games_per_seat: int
    strategies: tuple[str, ...]
    rules: engine.Rules
    keep_plies: bool = False
    chunk_games: int = CHUNK_GAMES
    games: tuple[tuple[str, int], ...] = ()  # the [games] table, in the config's order

    def pairings(self) -> list[Pairing]:
        """Every ordered pairing, South's strategy major, with its number of games."""
        caps = dict(self.games)
        pairings = []
        for i, south in enumerate(self.strategies):
            for j, north in enumerate(self.strategies):
                games = caps.get(f"{south}{VERSUS}{north}")
                if games is None:
                    games = min(self.games_per_seat, caps.get(south, self.games_per_seat), caps.get(north, self.games_per_seat))
                pairings.append(Pairing(i * len(self.strategies) + j, south, north, games))
        return pairings

    def total_games(self) -> int:
        return sum(pairing.games for pairing in self.pairings())

    def as_dict(self) -> dict[str, Any]:
        """The config in plain JSON types, every default written out (stored in the manifest)."""
        return {
            "name": self.name,
            "seed": self.seed,
            "games_per_seat": self.games_per_seat,
            "strategies": list(self.strategies),
            "rules": {
                key: list(value) if isinstance(value, tuple) else value for key, value in dataclasses.asdict(self.rules).items()
            },
            "keep_plies": self.keep_plies,
            "chunk_games": self.chunk_games,
            "games": dict(self.games),
        }


def load_study(path: str | Path) -> Study:
    """Read and check a study config; any mistake raises ConfigError naming the file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"cannot read study config {path}: {error.strerror or error}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path} is not valid TOML: {error}") from None
    try:
        return parse_study(data)
    except ConfigError as error:
        raise ConfigError(f"{path}: {error}") from None


def parse_study(data: dict[str, Any]) -> Study:
    """The Study a parsed TOML table describes, checked key by key."""
    unknown = [key for key in data if key not in KEYS]
    if unknown:
        raise ConfigError(f"unknown key {unknown[0]!r}; a study has the keys {', '.join(KEYS)}")
    missing = [key for key in REQUIRED if key not in data]
    if missing:
        raise ConfigError(f"missing key {missing[0]!r}; every study needs {', '.join(REQUIRED)}")
    strategies = _strategies(data["strategies"])
    return Study(
        name=_name(data["name"]),
        seed=_whole(data, "seed", 0, MAX_SEED),
        games_per_seat=_whole(data, "games_per_seat", 1),
        strategies=strategies,
        rules=_rules(data.get("rules", {})),
        keep_plies=_flag(data, "keep_plies"),
        chunk_games=_whole(data, "chunk_games", 1) if "chunk_games" in data else CHUNK_GAMES,
        games=_games(data.get("games", {}), strategies),
    )


def _name(name: object) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ConfigError(
            f"name {name!r} cannot be a folder name: use 1 to 64 letters, digits, '-' or '_', starting with a letter or digit"
        )
    return name


def _whole(data: dict[str, Any], key: str, low: int, high: int | None = None, *, label: str | None = None) -> int:
    value = data[key]
    if not isinstance(value, int) or isinstance(value, bool) or value < low or (high is not None and value > high):
        bound = f"from {low} to {high}" if high is not None else f"of at least {low}"
        raise ConfigError(f"{label or key} must be a whole number {bound}, not {value!r}")
    return value


def _flag(data: dict[str, Any], key: str) -> bool:
    value = data.get(key, False)
    if not isinstance(value, bool):
        raise ConfigError(f"{key} must be true or false, not {value!r}")
    return value


def _strategies(value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(spec, str) for spec in value):
        raise ConfigError(f'strategies must be a non-empty list of spec strings such as ["random", "greedy"], not {value!r}')
    for spec in value:
        try:
            engine.make_strategy(spec)
        except engine.UnknownStrategyError as error:
            raise ConfigError(str(error)) from None
    if len(set(value)) < len(value):
        duplicate = next(spec for spec in value if value.count(spec) > 1)
        raise ConfigError(f"strategy {duplicate!r} is listed twice in strategies")
    return tuple(value)


def _rules(table: object) -> engine.Rules:
    if not isinstance(table, dict):
        raise ConfigError(f"rules must be a table ([rules]) of engine.Rules fields, not {table!r}")
    fields = [field.name for field in dataclasses.fields(engine.Rules)]
    unknown = [key for key in table if key not in fields]
    if unknown:
        raise ConfigError(f"unknown rule {unknown[0]!r} in [rules]; the rules are {', '.join(fields)}")
    try:
        return engine.Rules(**table)
    except (ValueError, TypeError) as error:
        raise ConfigError(f"[rules]: {error}") from None


def _games(table: object, strategies: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
    if not isinstance(table, dict):
        raise ConfigError(f'games must be a table ([games]) of "STRATEGY" or "SOUTH vs NORTH" = games, not {table!r}')
    for key in table:
        named = key.split(VERSUS) if VERSUS in key else [key]
        strangers = [spec for spec in named if spec not in strategies]
        if len(named) > 2 or strangers:
            raise ConfigError(f'[games] key {key!r} must be one of the strategies or "SOUTH vs NORTH" with two of them')
        _whole(table, key, 1, label=f"[games] {key!r}")
    return tuple(table.items())
