"""An atlas config: the grids of rule sets, and its named parts, checked before any work.

    name = "atlas"                     # letters, digits, - and _: it becomes a folder name
    [grid]                             # rule fields, each with the list of its values; a field
    feeding = [true, false]            # left out keeps RULES.md's value
    grand_slam = ["prohibited", "allowed", "no_capture"]
    [grids.stones]                     # more grids (optional): the atlas is the union of them all
    stones_per_pit = [3, 4, 5, 6, 8]
    [parts.quick]                      # named parts (optional): ``--part quick`` computes only the
    capture_rows = ["either"]          # rule sets whose fields take these values

A grid's rule sets come in the order of its product, its first field varying slowest; a rule
set listed by two grids is computed once, where it first comes (pipeline.atlas.run runs them).
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import engine
from engine.game import RULE_FIELD, RuleField
from pipeline.runs.config import ConfigError, check_keys, load_config, parse_name, shown
from pipeline.runs.records import RecordError

CONFIG_KEYS = ("name", "grid", "grids", "parts")
REQUIRED = ("name", "grid")
FIELDS = tuple(RULE_FIELD)  # the rule fields a grid may vary, in their declared order
# The most rule sets an atlas may hold: at about 3 minutes a 7-stone rule set (README, one rule
# set of the atlas: 185 s) on 2 workers, 10,000 would take ten days; listing and checking them, about 1.5 s.
MAX_RULE_SETS = 10_000


@dataclass(frozen=True)
class Atlas:
    """A checked atlas config (see the module docstring)."""

    name: str
    grids: tuple[tuple[str, dict[str, tuple[Any, ...]]], ...]  # (label, field -> values), [grid] first
    parts: dict[str, dict[str, tuple[Any, ...]]]

    def rule_sets(self, part: str | None = None) -> list[engine.Rules]:
        """The atlas's rule sets in order, each once; with ``part``, those of that part only."""
        found: dict[engine.Rules, None] = {}
        for _, grid in self.grids:
            for values in itertools.product(*grid.values()):
                found[engine.Rules(**dict(zip(grid, values, strict=True)))] = None
        if part is None:
            return list(found)
        if part not in self.parts:
            known = ", ".join(self.parts) or "none"
            raise ConfigError(f"the atlas {self.name} has no part {part!r}; its parts: {known}")
        wanted = self.parts[part]
        return [rules for rules in found if all(getattr(rules, key) in values for key, values in wanted.items())]

    def config(self) -> dict[str, Any]:
        """The config as plain JSON types (what the manifest keeps)."""
        grids = {label: _plain_grid(grid) for label, grid in self.grids}
        return {"name": self.name, "grids": grids, "parts": {label: _plain_grid(part) for label, part in self.parts.items()}}


def atlas_of_manifest(manifest: dict[str, Any]) -> Atlas:
    """The Atlas whose config a manifest keeps (Atlas.config), checked as a config file is."""
    config = manifest["config"]
    try:
        grids = dict(config["grids"])
        return parse_atlas({"name": config["name"], "grid": grids.pop("grid"), "grids": grids, "parts": config["parts"]})
    except (ConfigError, KeyError, TypeError, AttributeError) as error:
        raise RecordError(f"the manifest's config is not an atlas config ({error})") from None


def load_atlas(path: str | Path) -> Atlas:
    """Read and check an atlas config; any mistake raises ConfigError naming the file."""
    return load_config(Path(path), "atlas", parse_atlas)


def parse_atlas(data: dict[str, Any]) -> Atlas:
    """The Atlas a parsed TOML table describes, checked key by key."""
    check_keys(data, CONFIG_KEYS, REQUIRED, "atlas")
    grids = [("grid", _grid(data["grid"], "[grid]"))]
    more = data.get("grids", {})
    if not isinstance(more, dict):
        raise ConfigError(f"grids must be a table of [grids.LABEL] tables, not {shown(more)}")
    grids += [(str(label), _grid(grid, f"[grids.{label}]")) for label, grid in more.items()]
    _check_size(grids)
    for label, grid in grids:
        where = "[grid]" if label == "grid" else f"[grids.{label}]"
        _check_values(grid, where)
        _check_combinations(grid, where)
    parts = data.get("parts", {})
    if not isinstance(parts, dict):
        raise ConfigError(f"parts must be a table of [parts.LABEL] tables, not {shown(parts)}")
    atlas = Atlas(
        parse_name(data["name"]),
        tuple(grids),
        {str(label): _check_values(_grid(part, f"[parts.{label}]"), f"[parts.{label}]") for label, part in parts.items()},
    )
    for label in atlas.parts:
        if not atlas.rule_sets(label):
            raise ConfigError(f"[parts.{label}] holds none of the atlas's rule sets")
    return atlas


def _grid(table: object, where: str) -> dict[str, tuple[Any, ...]]:
    """A table of rule fields, each with a non-empty list of values, of at most MAX_RULE_SETS
    combinations: its shape only, so that a grid of millions is refused before a value is
    looked at (checking one takes 0.3 ms)."""
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table of rule fields, each with a list of values, not {shown(table)}")
    grid: dict[str, tuple[Any, ...]] = {}
    size = 1
    for key, values in table.items():
        if key not in FIELDS:
            raise ConfigError(f"unknown rule {key!r} in {where}; the rules are {', '.join(FIELDS)}")
        if not isinstance(values, list) or not values:
            raise ConfigError(
                f"{where} {key} must be a non-empty list of values, such as {key} = [{_example(key)}], not {shown(values)}"
            )
        size *= len(values)
        if size > MAX_RULE_SETS:
            raise ConfigError(f"{where} makes more than {MAX_RULE_SETS:,} rule sets; an atlas takes at most {MAX_RULE_SETS:,}")
        grid[key] = tuple(tuple(value) if isinstance(value, list) else value for value in values)
    return grid


def _check_values(grid: dict[str, tuple[Any, ...]], where: str) -> dict[str, tuple[Any, ...]]:
    """The grid, once each value is one its field takes, and is listed once."""
    for key, values in grid.items():
        for value in values:
            try:
                engine.Rules(**{key: value})
            except (ValueError, TypeError) as error:
                raise ConfigError(f"{where} {key}: {error}") from None
        # Only once every value is one of the field's (true == 1 in Python, but 1 is no feeding
        # rule); valid values are hashable, a list of stone counts having become a tuple.
        seen: set[Any] = set()
        for value in values:
            if value in seen:
                raise ConfigError(f"{where} {key} lists {_toml(value)} twice; list each value once")
            seen.add(value)
    return grid


def _check_size(grids: list[tuple[str, dict[str, tuple[Any, ...]]]]) -> None:
    """Refuse an atlas of more than MAX_RULE_SETS rule sets (its grids' products summed) before any is made."""
    size = sum(math.prod(len(values) for values in grid.values()) for _, grid in grids)
    if size > MAX_RULE_SETS:
        raise ConfigError(f"the grids make {size:,} rule sets; an atlas takes at most {MAX_RULE_SETS:,}: split it")


def _check_combinations(grid: dict[str, tuple[Any, ...]], where: str) -> None:
    """Refuse a grid one of whose rule sets cannot be (each value is valid alone, not every
    combination: 7 stones to play a pit is no rule when 3 stones a pit make 18 in all)."""
    for values in itertools.product(*grid.values()):
        fields = dict(zip(grid, values, strict=True))
        try:
            engine.Rules(**fields)
        except (ValueError, TypeError) as error:
            named = ", ".join(f"{key} = {_toml(value)}" for key, value in fields.items())
            raise ConfigError(f"{where} makes the rule set {named}, which cannot be: {error}") from None


def _toml(value: Any) -> str:
    """A value as the config spells it: true, 3, "either", [2, 4, 6]."""
    return json.dumps(RuleField.plain(value))


def _example(key: str) -> str:
    return _toml(RULE_FIELD[key].default)


def _plain_grid(grid: dict[str, tuple[Any, ...]]) -> dict[str, list[Any]]:
    return {key: [RuleField.plain(value) for value in values] for key, values in grid.items()}
