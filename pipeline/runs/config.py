"""What every config of the project shares (a study's, a ladder's, an atlas's): reading the TOML
file, its one-line errors (ConfigError), the checks of its keys and name, and the grammar of
the values they all take: strategy specs and a table of rule fields (engine.game.rules declares
each field; a table of them changes RULES.md's). Each product's config module adds its own keys.
"""

from __future__ import annotations

import difflib
import stat
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import engine
from engine.game import RULE_FIELD, RULE_FIELDS, RuleField
from pipeline.runs.paths import NAME_RULE, RUNS, STUDIES, bundled, bundled_kind, is_name

MAX_CONFIG_BYTES = 1 << 20
MAX_SHOWN = 80  # characters of a value an error message quotes
RULES_MD = engine.Rules()
T = TypeVar("T")


class ConfigError(ValueError):
    """A study config that cannot run: one line naming the problem and the way out."""


def load_config(path: Path, kind: str, parse: Callable[[dict[str, Any]], T]) -> T:
    """Read a ``kind`` config (a study, a ladder) and check it with ``parse``; any mistake raises
    ConfigError naming the file."""
    _check_bundled_kind(path, kind)
    try:
        data = tomllib.loads(read_config(path, kind))
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path} is not valid TOML: {error}") from None
    except RecursionError:  # tomllib reads nested arrays and tables by recursion
        raise ConfigError(f"{path} nests arrays or tables thousands deep: it is not a {kind} config") from None
    try:
        return parse(data)
    except ConfigError as error:
        raise ConfigError(f"{path}: {error}") from None
    except RecursionError:  # a value nested deep, but within tomllib's reach, met by a recursive check
        raise ConfigError(f"{path} nests arrays or tables too deep to be a {kind} config") from None


def check_keys(data: dict[str, Any], keys: tuple[str, ...], required: tuple[str, ...], kind: str) -> None:
    """Refuse a key a ``kind`` config does not have, and a missing required one."""
    unknown = [key for key in data if key not in keys]
    if unknown:
        raise ConfigError(f"unknown key {unknown[0]!r}{did_you_mean(unknown[0], keys)}; a {kind} has the keys {', '.join(keys)}")
    missing = [key for key in required if key not in data]
    if missing:
        raise ConfigError(f"missing key {missing[0]!r}; every {kind} needs {', '.join(required)}")


def read_config(path: Path, kind: str = "study") -> str:
    """The text of a ``kind`` config file (a study, a ladder): a regular file of UTF-8 text (a byte-order mark is allowed)."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise ConfigError(f"{kind} config {path} is not a regular file")
        with open(path, "rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError as error:
        raise ConfigError(f"cannot read {kind} config {path}: {error.strerror}; {_bundled_words(path, kind)}") from None
    except OSError as error:
        raise ConfigError(f"cannot read {kind} config {path}: {error.strerror or error}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{kind} config {path} is larger than {MAX_CONFIG_BYTES >> 10} KiB: not a {kind} config")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ConfigError(f"{kind} config {path} is not UTF-8 text (byte {error.start}): is it a TOML file?") from None


def parse_name(name: object) -> str:
    if not is_name(name):
        raise ConfigError(f"name {name!r} cannot be a folder name: {NAME_RULE}")
    return str(name)


def parse_strategies(value: object, key: str = "strategies") -> tuple[str, ...]:
    """The specs of the config's ``key`` (strategies; a ladder's rungs, opponents) in their
    canonical spelling (engine.canonical_spec), each once: two spellings of one strategy would
    otherwise split its games between pairings or merge two of them."""
    if not isinstance(value, list) or not value or not all(isinstance(spec, str) for spec in value):
        raise ConfigError(f'{key} must be a non-empty list of spec strings such as ["random", "greedy"], not {shown(value)}')
    specs = [_canonical(spec, key) for spec in value]
    duplicate = next((spec for spec in specs if specs.count(spec) > 1), None)
    if duplicate is not None:
        spellings = " and ".join(repr(written) for written, spec in zip(value, specs, strict=True) if spec == duplicate)
        raise ConfigError(f"strategy {duplicate!r} is listed twice in {key} (as {spellings})")
    return tuple(specs)


def shown(value: object) -> str:
    """A value as an error message quotes it: its repr, cut short, so that the message stays one
    readable line whatever the config holds (a list of a million entries, a page of text)."""
    text = repr(value)
    return text if len(text) <= MAX_SHOWN else f"{text[: MAX_SHOWN - 3]}..."


def did_you_mean(word: object, known: Sequence[str]) -> str:
    """The hint after a name that is none of ``known`` but near one in spelling: " (did you mean
    'games_per_seat'?)"; else nothing."""
    nearest = difflib.get_close_matches(str(word), known, n=1, cutoff=0.75)
    return f" (did you mean {nearest[0]!r}?)" if nearest else ""


def rule_hint(name: object) -> str:
    """The hint after a rule field that is none of Rules': the field nearest in spelling, or the
    one whose token in a rule set's name begins so (stones: stones_per_pit); else nothing."""
    by_spelling = {field.prefix: field.name for field in RULE_FIELDS} | {field.name: field.name for field in RULE_FIELDS}
    nearest = difflib.get_close_matches(str(name), by_spelling, n=1, cutoff=0.75)
    return f" (did you mean {by_spelling[nearest[0]]!r}?)" if nearest else ""


def _check_bundled_kind(path: Path, kind: str) -> None:
    """Refuse a bundled config of another kind (``modiar study run ladder``), naming the command that runs it."""
    other = bundled_kind(path.stem)
    if other != kind and path.parent.resolve() == STUDIES.resolve() and path.is_file():
        article = "an" if kind[0] in "aeiou" else "a"
        raise ConfigError(f"{path.stem} is a bundled {other}, not {article} {kind}: {RUNS[other]} {path.stem} runs it")


def _bundled_words(path: Path, kind: str) -> str:
    """The way out of a config file that is not there: the bundled ones of its kind, named without a path."""
    names = bundled(kind)
    nearest = difflib.get_close_matches(path.name, names, n=1)
    kinds = kind[:-1] + "ies" if kind.endswith("y") else kind + ("es" if kind.endswith("s") else "s")
    bundled_ones = f"bundled {kinds} are named without a path: {', '.join(names)}"
    if nearest:
        return f"did you mean {nearest[0]} ({RUNS[kind]} {nearest[0]})? {bundled_ones}"
    return f"{bundled_ones} (e.g. {RUNS[kind]} {names[0]})"


def _canonical(spec: str, key: str) -> str:
    try:
        return engine.canonical_spec(spec)
    except engine.UnknownStrategyError as error:
        raise ConfigError(f"{key}: {error}") from None


def parse_rules(table: object, base: engine.Rules | None = None, where: str = "[rules]") -> engine.Rules:
    """The rules of a table of engine.Rules fields: changes to ``base``, or to RULES.md without it."""
    if not isinstance(table, dict):
        raise ConfigError(f"rules must be a table ({where}) of engine.Rules fields, not {table!r}")
    fields = list(RULE_FIELD)
    unknown = [key for key in table if key not in fields]
    if unknown:
        raise ConfigError(f"unknown rule {unknown[0]!r} in {where}{rule_hint(unknown[0])}; the rules are {', '.join(fields)}")
    try:
        return (engine.Rules() if base is None else base).replace(**table)
    except (ValueError, TypeError) as error:
        raise ConfigError(f"{where}: {error}") from None


def rules_dict(rules: engine.Rules) -> dict[str, Any]:
    """Every field of the rules in plain JSON types."""
    return {field.name: RuleField.plain(getattr(rules, field.name)) for field in RULE_FIELDS}
