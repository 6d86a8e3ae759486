"""A study: a TOML config (pipeline/studies/*.toml), checked in full before anything runs.

    name = "smoke"                 # letters, digits, - and _: it becomes a folder name
    seed = 7                       # 0 to 2**64 - 1: every game's seed derives from it
    games_per_seat = 1000          # games of each ordered pairing (South, North)
    strategies = ["random", "greedy"]   # spec strings of engine.make_strategy
    keep_plies = false             # also write one row per ply (plies/)
    chunk_games = 262144           # at most this many games per chunk (a unit of work, a file, a
                                   #   resume point); each pairing is cut into at least 8 chunks
    exact = false                  # true: also the exact outcome (engine.exact_outcome) of every
                                   #   pairing of two table strategies, in every rule set (mcts
                                   #   pairings are only sampled); "self-play": of those of a
                                   #   strategy with itself; written to exact.parquet

    [rules]                        # any field of engine.Rules; RULES.md when empty
    feeding = false

    [games]                        # fewer (or more) games for some pairings:
    "mcts(playouts=200)" = 100     #   a strategy: at most this many per seat in its pairings
    "random vs random" = 1000000   #   an ordered pairing "SOUTH vs NORTH": exactly this many

    [variants.stones5]             # more rule sets, each with a label (the rules of a name):
    rules = { stones_per_pit = 5 } #   changes to [rules], which stays the study's own rule set
    strategies = ["random"]        #   optional, default the study's strategies
    games = { random = 5000 }      #   optional, default the study's [games] (those of its strategies)

The study is a round robin of every ordered pairing of the strategies, self-play included,
under [rules] (labelled "default") and again under each variant's rules with its strategies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import engine
from pipeline.runs.config import (
    RULES_MD,
    ConfigError,
    check_keys,
    load_config,
    parse_name,
    parse_rules,
    parse_strategies,
    rules_dict,
)
from pipeline.runs.paths import NAME_RULE, is_name

CHUNK_GAMES = 1 << 18
MAX_CHUNK_GAMES = 1 << 22  # a chunk is held in a worker's memory whole: about 100 bytes a game
MAX_PAIRINGS = 10_000  # ordered pairings in all rule sets: 100 strategies in one round robin
MAX_SEED = (1 << 64) - 1
CONFIG_KEYS = ("name", "seed", "games_per_seat", "strategies", "rules", "keep_plies", "chunk_games", "exact", "games", "variants")
VARIANT_KEYS = ("rules", "strategies", "games")
REQUIRED = ("name", "seed", "games_per_seat", "strategies")
VERSUS = " vs "
BASE = "default"  # the label of the study's own rule set, [rules]
EXACT_SELF_PLAY = "self-play"  # the value of the exact key that asks for self-play pairings only
EXACT = (False, True, EXACT_SELF_PLAY)  # the values of the exact key


@dataclass(frozen=True)
class Pairing:
    """One ordered pairing of a round robin; ``number`` (its place in the study) names its files.

    ``variant`` is the label of its rule set: BASE for the study's [rules], else a [variants] key."""

    number: int
    south: str
    north: str
    games: int
    rules: engine.Rules = RULES_MD
    variant: str = BASE


@dataclass(frozen=True)
class Variant:
    """A rule set of the study with its own round robin: [rules] (BASE) or one of [variants]."""

    label: str
    rules: engine.Rules
    strategies: tuple[str, ...]
    games: tuple[tuple[str, int], ...] = ()  # its [games] table, in the config's order

    def pairings(self, games_per_seat: int, first: int = 0) -> list[Pairing]:
        """Every ordered pairing, South's strategy major, numbered from ``first``, with its number of games."""
        caps = dict(self.games)
        pairings = []
        for i, south in enumerate(self.strategies):
            for j, north in enumerate(self.strategies):
                games = caps.get(f"{south}{VERSUS}{north}")
                if games is None:
                    games = min(games_per_seat, caps.get(south, games_per_seat), caps.get(north, games_per_seat))
                number = first + i * len(self.strategies) + j
                pairings.append(Pairing(number, south, north, games, self.rules, self.label))
        return pairings

    def as_dict(self) -> dict[str, Any]:
        return {"rules": rules_dict(self.rules), "strategies": list(self.strategies), "games": dict(self.games)}


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
    variants: tuple[Variant, ...] = ()  # the [variants] tables, in the config's order
    exact: bool | str = False  # one of EXACT

    def rule_sets(self) -> list[Variant]:
        """The study's own rule set (labelled BASE), then its variants."""
        return [Variant(BASE, self.rules, self.strategies, self.games), *self.variants]

    def pairings(self) -> list[Pairing]:
        """Every rule set's round robin in turn (South's strategy major), numbered through the study:
        the study's own rule set first, so its pairings keep their numbers whatever the variants."""
        pairings: list[Pairing] = []
        for rule_set in self.rule_sets():
            pairings += rule_set.pairings(self.games_per_seat, first=len(pairings))
        return pairings

    def exact_pairings(self) -> list[Pairing]:
        """The pairings whose exact outcome the study records (the exact key): of two table
        strategies, and with ``exact = "self-play"`` of a strategy with itself; in study order."""
        if self.exact is False:
            return []
        return [
            pairing
            for pairing in self.pairings()
            if (self.exact is True or pairing.south == pairing.north)
            and engine.is_table_strategy(pairing.south)
            and engine.is_table_strategy(pairing.north)
        ]

    def total_games(self) -> int:
        return sum(pairing.games for pairing in self.pairings())

    def as_dict(self) -> dict[str, Any]:
        """The config in plain JSON types, every default written out (stored in the manifest)."""
        return {
            "name": self.name,
            "seed": self.seed,
            "games_per_seat": self.games_per_seat,
            "strategies": list(self.strategies),
            "rules": rules_dict(self.rules),
            "keep_plies": self.keep_plies,
            "chunk_games": self.chunk_games,
            "games": dict(self.games),
            # Only when asked for: the config of a study without exact outcomes stays what it was.
            **({"exact": self.exact} if self.exact is not False else {}),
            # Only when there are variants: the config of a study without them stays what it was.
            **({"variants": {variant.label: variant.as_dict() for variant in self.variants}} if self.variants else {}),
        }


def load_study(path: str | Path) -> Study:
    """Read and check a study config; any mistake raises ConfigError naming the file."""
    return load_config(Path(path), "study", parse_study)


def parse_study(data: dict[str, Any]) -> Study:
    """The Study a parsed TOML table describes, checked key by key."""
    check_keys(data, CONFIG_KEYS, REQUIRED, "study")
    strategies = parse_strategies(data["strategies"])
    rules = parse_rules(data.get("rules", {}))
    games = _games(data.get("games", {}), strategies)
    study = Study(
        name=parse_name(data["name"]),
        seed=_whole(data, "seed", 0, MAX_SEED),
        games_per_seat=_whole(data, "games_per_seat", 1),
        strategies=strategies,
        rules=rules,
        keep_plies=_flag(data, "keep_plies"),
        chunk_games=_whole(data, "chunk_games", 1, MAX_CHUNK_GAMES) if "chunk_games" in data else CHUNK_GAMES,
        games=games,
        exact=_exact(data.get("exact", False)),
        variants=_variants(data.get("variants", {}), Variant(BASE, rules, strategies, games)),
    )
    _check_pairings(study)
    return study


def _check_pairings(study: Study) -> None:
    """Refuse a round robin too large to plan, before a single pairing is made."""
    pairings = sum(len(rule_set.strategies) ** 2 for rule_set in study.rule_sets())
    if pairings > MAX_PAIRINGS:
        raise ConfigError(
            f"the study has {pairings:,} ordered pairings, at most {MAX_PAIRINGS:,} can be planned; "
            "list fewer strategies or split the study"
        )


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


def _exact(value: object) -> bool | str:
    if isinstance(value, bool):  # not 1 or 0.0, which equal True and False
        return value
    if value == EXACT_SELF_PLAY:
        return EXACT_SELF_PLAY
    raise ConfigError(f'exact must be true, false or "{EXACT_SELF_PLAY}", not {value!r}')


def _variants(table: object, base: Variant) -> tuple[Variant, ...]:
    """The [variants] tables, each checked and then compared with the rule sets before it."""
    if not isinstance(table, dict):
        raise ConfigError(f"variants must be a table of [variants.LABEL] tables, not {table!r}")
    variants: list[Variant] = []
    for label, entry in table.items():
        variant = _variant(label, entry, base)
        same = next((other for other in (base, *variants) if other.rules == variant.rules), None)
        if same is not None:
            raise ConfigError(
                f"[variants.{label}] plays the rules {variant.rules.name}, as {_described(same)} does; "
                "change its rules or remove one of them"
            )
        variants.append(variant)
    return tuple(variants)


def _variant(label: object, entry: object, base: Variant) -> Variant:
    if not is_name(label) or label == BASE:
        raise ConfigError(f"variant label {label!r} cannot be used: {NAME_RULE}, and not {BASE!r} (the study's own [rules])")
    assert isinstance(label, str)
    where = f"[variants.{label}]"
    if not isinstance(entry, dict):
        raise ConfigError(f"{where} must be a table with rules (and optionally strategies and games), not {entry!r}")
    unknown = [key for key in entry if key not in VARIANT_KEYS]
    if unknown or "rules" not in entry:
        problem = f"unknown key {unknown[0]!r}" if unknown else "missing key 'rules'"
        raise ConfigError(f"{where}: {problem}; a variant has rules and optionally strategies and games")
    try:
        strategies = parse_strategies(entry["strategies"]) if "strategies" in entry else base.strategies
        games = _games(entry["games"], strategies) if "games" in entry else _games_among(base.games, strategies)
    except ConfigError as error:
        raise ConfigError(f"{where}: {error}") from None
    return Variant(label, parse_rules(entry["rules"], base.rules, f"{where} rules"), strategies, games)


def _games_among(games: tuple[tuple[str, int], ...], strategies: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
    """The entries of a [games] table that name only these strategies."""
    return tuple((key, count) for key, count in games if all(spec in strategies for spec in key.split(VERSUS)))


def _described(rule_set: Variant) -> str:
    return "the study's own [rules]" if rule_set.label == BASE else f"[variants.{rule_set.label}]"


def _games(table: object, strategies: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
    """The [games] entries with their specs in canonical spelling, each pairing or strategy once."""
    if not isinstance(table, dict):
        raise ConfigError(f'games must be a table ([games]) of "STRATEGY" or "SOUTH vs NORTH" = games, not {table!r}')
    games: dict[str, int] = {}
    for key in table:
        named = _VERSUS.split(key.strip())
        bad = f'[games] key {key!r} must be one of the strategies or "SOUTH vs NORTH" with two of them'
        try:
            specs = [engine.canonical_spec(spec) for spec in named]
        except engine.UnknownStrategyError:
            raise ConfigError(bad) from None
        if len(named) > 2 or any(spec not in strategies for spec in specs):
            raise ConfigError(bad)
        canonical = VERSUS.join(specs)
        if canonical in games:
            raise ConfigError(f"[games] names {canonical!r} twice (once as {key!r})")
        games[canonical] = _whole(table, key, 1, label=f"[games] {key!r}")
    return tuple(games.items())


_VERSUS = re.compile(r"\s+vs\s+")
