"""The rule set: every rule of RULES.md as a field, the default being RULES.md itself."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

PITS = 6
ROW = 3
PIT_BITS = 6
PIT_LIMIT = (1 << PIT_BITS) - 1  # a pit of the board code holds at most 63 stones

CAPTURE_ROWS = ("either", "opponent", "own")
GRAND_SLAM = ("prohibited", "allowed", "no_capture")
MAX_PLY_CAP = 10_000  # keeps every per-game event counter within 16 bits (engine.events)


@dataclass(frozen=True)
class Rules:
    """One rule set of Modiar. ``Rules()`` is exactly RULES.md.

    Fields (RULES.md, "Variants"):
      stones_per_pit      stones in each pit at the start (7)
      min_stones_to_play  a pit needs this many stones to be played (2: no singletons)
      sow_origin          the first stone goes back into the origin pit (True); False
                          starts in the next pit and skips the origin on every lap
      capture_counts      a pit holding one of these counts is captured ((2, 4, 6))
      capture_rows        "either" row, the "opponent"'s row only, or the mover's "own" row only
      first_move_forfeit  the first move of the game captures nothing (True)
      feeding             a player must feed an opponent whose row is empty (True)
      grand_slam          "prohibited", "allowed", or "no_capture" (legal, captures nothing)
      ply_cap             the game ends after this many moves (400)
    """

    stones_per_pit: int = 7
    min_stones_to_play: int = 2
    sow_origin: bool = True
    capture_counts: tuple[int, ...] = (2, 4, 6)
    capture_rows: str = "either"
    first_move_forfeit: bool = True
    feeding: bool = True
    grand_slam: str = "prohibited"
    ply_cap: int = 400

    def __post_init__(self) -> None:
        counts = self.capture_counts
        if isinstance(counts, (set, frozenset, list)):
            object.__setattr__(self, "capture_counts", tuple(sorted(counts)))
        _validate(self)
        # Rules key the per-rule-set caches, looked up once per game: hash the fields once.
        object.__setattr__(self, "_hash", hash(dataclasses.astuple(self)))

    def __hash__(self) -> int:
        return self._hash  # type: ignore[attr-defined, no-any-return]

    def __reduce__(self) -> tuple[type[Rules], tuple[object, ...]]:
        # Rebuild from the fields, so that a copy in another process hashes as that process does.
        return self.__class__, dataclasses.astuple(self)

    @property
    def total_stones(self) -> int:
        return PITS * self.stones_per_pit

    @property
    def name(self) -> str:
        """Stable short name: ``modiar`` for RULES.md, plus one token per changed field."""
        tokens = [_token(field.name, getattr(self, field.name)) for field in _changed_fields(self)]
        return "-".join(["modiar", *tokens])

    @classmethod
    def from_name(cls, name: str) -> Rules:
        """The rule set whose ``name`` is ``name`` (the inverse of ``Rules.name``); each field at most once."""
        if not isinstance(name, str):
            raise TypeError(f"name must be a rule set name such as 'modiar' or 'modiar-stones5', not {name!r}")
        head, *tokens = name.split("-")
        if head != "modiar":
            raise ValueError(f"rule set name {name!r} does not start with 'modiar'")
        fields: dict[str, Any] = {}
        for field, value in (_parse_token(token, name) for token in tokens):
            if field in fields:
                raise ValueError(f"rule set name {name!r} gives {field} twice ({_PREFIX[field]}...); give each field once")
            fields[field] = value
        return cls(**fields)

    def replace(self, **changes: Any) -> Rules:
        return dataclasses.replace(self, **changes)


def check_rules(rules: object) -> None:
    """A TypeError naming ``rules`` unless it is a Rules; a rule set's name gets the call that reads it."""
    if isinstance(rules, Rules):
        return
    if isinstance(rules, str):
        raise TypeError(f"rules must be an engine.Rules, not the name {rules!r}: pass engine.Rules.from_name({rules!r})")
    raise TypeError(f"rules must be an engine.Rules, such as Rules() or Rules.from_name(name), not {rules!r}")


def _refusing_unknown_fields(init: Callable[..., None]) -> Callable[..., None]:
    """``init`` (the dataclass's __init__), after a check of the field names: the TypeError of
    ``init`` itself names a stray field but not the real ones."""

    @functools.wraps(init)  # keeps the signature of the fields for help() and inspect
    def checked_init(self: Rules, *values: Any, **fields: Any) -> None:
        _check_field_names(fields)
        init(self, *values, **fields)

    return checked_init


def _check_field_names(fields: dict[str, Any]) -> None:
    names = [field.name for field in dataclasses.fields(Rules)]
    unknown = [name for name in fields if name not in names]
    if unknown:
        raise TypeError(f"Rules has no field {unknown[0]!r}; its fields are {', '.join(names)}")


def _validate(rules: Rules) -> None:
    _require_int(rules, "stones_per_pit", 1, PIT_LIMIT // PITS)
    _require_int(rules, "min_stones_to_play", 1, rules.total_stones)
    _require_int(rules, "ply_cap", 1, MAX_PLY_CAP)
    for name in ("sow_origin", "first_move_forfeit", "feeding"):
        if not isinstance(getattr(rules, name), bool):
            raise ValueError(f"Rules.{name} must be True or False, not {getattr(rules, name)!r}")
    counts = rules.capture_counts
    if not isinstance(counts, tuple) or not counts:
        raise ValueError(f"Rules.capture_counts must be a non-empty tuple of stone counts, not {counts!r}")
    for count in counts:
        if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= rules.total_stones:
            raise ValueError(
                f"Rules.capture_counts holds {count!r}: each count must be a whole number "
                f"from 1 to the {rules.total_stones} stones in play"
            )
    if list(counts) != sorted(set(counts)):
        raise ValueError(f"Rules.capture_counts must list distinct counts in ascending order, not {counts!r}")
    _require_choice(rules, "capture_rows", CAPTURE_ROWS)
    _require_choice(rules, "grand_slam", GRAND_SLAM)


def _require_int(rules: Rules, name: str, low: int, high: int) -> None:
    value = getattr(rules, name)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ValueError(f"Rules.{name} must be a whole number from {low} to {high}, not {value!r}")


def _require_choice(rules: Rules, name: str, choices: tuple[str, ...]) -> None:
    value = getattr(rules, name)
    if value not in choices:
        raise ValueError(f"Rules.{name} must be one of {', '.join(choices)}, not {value!r}")


# Name tokens: a short prefix per field, followed by the field's value.
_PREFIX = {
    "stones_per_pit": "stones",
    "min_stones_to_play": "min",
    "sow_origin": "origin",
    "capture_counts": "captures",
    "capture_rows": "rows",
    "first_move_forfeit": "forfeit",
    "feeding": "feeding",
    "grand_slam": "slam",
    "ply_cap": "cap",
}
_FIELD_OF_PREFIX = {prefix: field for field, prefix in _PREFIX.items()}


def _changed_fields(rules: Rules) -> list[dataclasses.Field[object]]:
    default = _DEFAULT
    return [f for f in dataclasses.fields(rules) if getattr(rules, f.name) != getattr(default, f.name)]


def _token(field: str, value: object) -> str:
    if isinstance(value, bool):
        text = "on" if value else "off"
    elif isinstance(value, tuple):
        text = ".".join(str(count) for count in value)
    else:
        text = str(value).replace("_", "")
    return f"{_PREFIX[field]}{text}"


def _parse_token(token: str, name: str) -> tuple[str, object]:
    for prefix, field in _FIELD_OF_PREFIX.items():
        if token.startswith(prefix):
            text = token[len(prefix) :]
            return field, _parse_value(field, text, name)
    raise ValueError(f"rule set name {name!r} has an unknown part {token!r}")


def _parse_value(field: str, text: str, name: str) -> object:
    try:
        if field in ("sow_origin", "first_move_forfeit", "feeding"):
            return {"on": True, "off": False}[text]
        if field == "capture_counts":
            return tuple(int(count) for count in text.split("."))
        if field == "grand_slam":
            return {"prohibited": "prohibited", "allowed": "allowed", "nocapture": "no_capture"}[text]
        if field == "capture_rows":
            return text
        return int(text)
    except (KeyError, ValueError):
        raise ValueError(f"rule set name {name!r} has a bad value {text!r} for {field}") from None


Rules.__init__ = _refusing_unknown_fields(Rules.__init__)  # type: ignore[method-assign]
_DEFAULT = Rules()
