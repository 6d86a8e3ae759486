"""The rule set: every rule of RULES.md as a field, the default being RULES.md itself.

Each field is declared once, in ``Rules``: its type and default, and (``_field``) its kind
(the values it takes, one parser and one printer of its text), the token that names it in a
rule set's name, its words for the reports and its short label. ``RULE_FIELDS`` lists them;
``Rules.name``, ``Rules.from_name``, the command line's ``--rule FIELD=VALUE``, a study's
``[rules]`` table, the atlas's grid and the reports' words all read these declarations, so a
new field is one line here plus the rule itself (engine.game.moves, engine.tables.positions) and RULES.md.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

PITS = 6
ROW = 3
PIT_BITS = 6
PIT_LIMIT = (1 << PIT_BITS) - 1  # a pit of the board code holds at most 63 stones

CAPTURE_ROWS = ("either", "opponent", "own")
GRAND_SLAM = ("prohibited", "allowed", "no_capture")
MAX_PLY_CAP = 10_000  # keeps every per-game event counter within 16 bits (engine.game.events)


class _Kind:
    """The values a rule field takes: ``check`` a value of a rule set, ``parse`` its text (a
    rule set name's token after the prefix, or the VALUE of ``--rule FIELD=VALUE``) and print
    it (``text``), so that ``parse(text(value)) == value``; ``takes`` says in words what parses."""

    takes = ""

    def check(self, rules: Rules, name: str, value: Any) -> None:
        raise NotImplementedError

    def parse(self, text: str) -> Any:
        raise NotImplementedError

    def text(self, value: Any) -> str:
        return str(value)

    def normal(self, value: Any) -> Any:
        """The value as a field holds it (a list of counts becomes a tuple)."""
        return value


@dataclass(frozen=True)
class _Whole(_Kind):
    low: int
    high: Callable[[Rules], int]
    takes = "a whole number"

    def check(self, rules: Rules, name: str, value: Any) -> None:
        high = self.high(rules)
        if not isinstance(value, int) or isinstance(value, bool) or not self.low <= value <= high:
            raise ValueError(f"Rules.{name} must be a whole number from {self.low} to {high}, not {value!r}")

    def parse(self, text: str) -> int:
        return int(text)


class _Switch(_Kind):
    takes = "on or off"
    WORDS: ClassVar[dict[str, bool]] = {"on": True, "true": True, "yes": True, "off": False, "false": False, "no": False}

    def check(self, rules: Rules, name: str, value: Any) -> None:
        if not isinstance(value, bool):
            raise ValueError(f"Rules.{name} must be True or False, not {value!r}")

    def parse(self, text: str) -> bool:
        try:
            return self.WORDS[text.lower()]
        except KeyError:
            raise ValueError(f"{text!r} is not on or off") from None

    def text(self, value: Any) -> str:
        return "on" if value else "off"


@dataclass(frozen=True)
class _Choice(_Kind):
    choices: tuple[str, ...]

    @property
    def takes(self) -> str:  # type: ignore[override]
        return "one of " + ", ".join(self.choices)

    def check(self, rules: Rules, name: str, value: Any) -> None:
        if value not in self.choices:
            raise ValueError(f"Rules.{name} must be one of {', '.join(self.choices)}, not {value!r}")

    def parse(self, text: str) -> str:
        for choice in self.choices:
            if text in (choice, self.text(choice)):
                return choice
        raise ValueError(f"{text!r} is not {self.takes}")

    def text(self, value: Any) -> str:
        return str(value).replace("_", "")


class _Counts(_Kind):
    takes = "whole numbers such as 2,4,6"

    def check(self, rules: Rules, name: str, value: Any) -> None:
        if not isinstance(value, tuple) or not value:
            raise ValueError(f"Rules.{name} must be a non-empty tuple of stone counts, not {value!r}")
        for count in value:
            if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= rules.total_stones:
                raise ValueError(
                    f"Rules.{name} holds {count!r}: each count must be a whole number "
                    f"from 1 to the {rules.total_stones} stones in play"
                )
        if list(value) != sorted(set(value)):
            raise ValueError(f"Rules.{name} must list distinct counts in ascending order, not {value!r}")

    def parse(self, text: str) -> tuple[int, ...]:
        return tuple(int(count) for count in re.split(r"[.,\s]+", text.strip()))

    def text(self, value: Any) -> str:
        return ".".join(str(count) for count in value)

    def normal(self, value: Any) -> Any:
        return tuple(sorted(value)) if isinstance(value, set | frozenset | list) else value


def _field(default: Any, kind: _Kind, prefix: str, words: str, label: str) -> Any:
    """A field of Rules with its declaration (RuleField) beside its default."""
    return dataclasses.field(default=default, metadata={"rule": (kind, prefix, words, label)})


def _stones(rules: Rules) -> int:
    return rules.total_stones


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

    # default, kind, token prefix in a name, words in the reports, short label ("{}": the value)
    stones_per_pit: int = _field(7, _Whole(1, lambda _: PIT_LIMIT // PITS), "stones", "stones per pit", "{} stones")
    min_stones_to_play: int = _field(2, _Whole(1, _stones), "min", "stones needed to play a pit", "min {}")
    sow_origin: bool = _field(True, _Switch(), "origin", "first stone back into the origin pit", "origin {}")
    capture_counts: tuple[int, ...] = _field((2, 4, 6), _Counts(), "captures", "counts captured", "captures {}")
    capture_rows: str = _field("either", _Choice(CAPTURE_ROWS), "rows", "rows captured from", "rows {}")
    first_move_forfeit: bool = _field(True, _Switch(), "forfeit", "first move captures nothing", "forfeit {}")
    feeding: bool = _field(True, _Switch(), "feeding", "compulsory feeding", "feeding {}")
    grand_slam: str = _field("prohibited", _Choice(GRAND_SLAM), "slam", "grand slam", "slam {}")
    ply_cap: int = _field(400, _Whole(1, lambda _: MAX_PLY_CAP), "cap", "ply cap", "cap {}")

    def __post_init__(self) -> None:
        for field in RULE_FIELDS:
            object.__setattr__(self, field.name, field.kind.normal(getattr(self, field.name)))
        for field in RULE_FIELDS:
            field.kind.check(self, field.name, getattr(self, field.name))
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
        tokens = [field.token(getattr(self, field.name)) for field in RULE_FIELDS if getattr(self, field.name) != field.default]
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
        for token in tokens:
            field = _field_of_token(token, name)
            if field.name in fields:
                raise ValueError(f"rule set name {name!r} gives {field.name} twice ({field.prefix}...); give each field once")
            text = token[len(field.prefix) :]
            try:
                fields[field.name] = field.parse(text)
            except ValueError:
                raise ValueError(
                    f"rule set name {name!r} has a bad value {text!r} for {field.name}, which takes {field.takes}"
                    + _nearest_parts(token, field)
                ) from None
        return cls(**fields)

    def replace(self, **changes: Any) -> Rules:
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class RuleField:
    """One field of Rules as declared there: its name and default, its kind, the prefix of its
    token in a rule set's name, its words in the reports and its short label."""

    name: str
    default: Any
    kind: _Kind
    prefix: str
    words: str
    label_format: str

    def parse(self, text: str) -> Any:
        """The value a text spells (``Rules.from_name``'s token after the prefix, or ``--rule``'s
        VALUE); ValueError if it spells none (a value it spells may still be refused by Rules)."""
        return self.kind.parse(text)

    def token(self, value: Any) -> str:
        """The value's token in a rule set's name, e.g. ``feedingoff``, ``captures2.4``."""
        return self.prefix + self.kind.text(value)

    def label(self, value: Any) -> str:
        """The value in a few words: "feeding off", "slam no capture", "4 stones"."""
        words = ("on" if value else "off") if isinstance(value, bool) else str(value).replace("_", " ")
        return self.label_format.format(words)

    @property
    def takes(self) -> str:
        """What its text may be, in words: "on or off", "a whole number"."""
        return self.kind.takes

    @staticmethod
    def plain(value: Any) -> Any:
        """The value in JSON and TOML types: a list for a tuple of counts."""
        return list(value) if isinstance(value, tuple) else value


RULE_FIELDS = tuple(RuleField(f.name, f.default, *f.metadata["rule"]) for f in dataclasses.fields(Rules))
RULE_FIELD = {field.name: field for field in RULE_FIELDS}


def _field_of_token(token: str, name: str) -> RuleField:
    """The field a token of a rule set's name gives (the longest prefix it starts with)."""
    for field in sorted(RULE_FIELDS, key=lambda field: -len(field.prefix)):
        if token.startswith(field.prefix):
            return field
    raise ValueError(f"rule set name {name!r} has an unknown part {token!r}{_nearest_parts(token)}")


def _nearest_parts(token: str, refused: RuleField | None = None) -> str:
    """The way out of a part of a rule set's name that spells no token: the token nearest in
    spelling, the part's number kept ("stone5" gives "stones5"), else what a part is made of
    (RULES.md, Rule-set names). For a part whose value the field ``refused``, only another
    field's token or a completion of its own ("slamallow" gives "slamallowed"), else nothing:
    the message gives the values the field takes."""
    part = token.lower()
    value = re.sub(r"^[a-z]*", "", part)
    value = "" if re.search(r"[a-z]", value) else value  # a number, or nothing of use
    spellings = [
        spelling
        for field in RULE_FIELDS
        for spelling in _spellings(field, value)
        if field is not refused or (spelling.startswith(part) and isinstance(field.kind, _Switch | _Choice))
    ]
    nearest = difflib.get_close_matches(part, spellings, n=1, cutoff=0.6)
    if nearest:
        return f"; did you mean {nearest[0]!r}?"
    if refused is not None:
        return ""
    prefixes = ", ".join(field.prefix for field in RULE_FIELDS)
    return f"; each part is a field's prefix ({prefixes}) and its value, e.g. modiar-stones5-feedingoff"


def _spellings(field: RuleField, value: str) -> list[str]:
    """The tokens of ``field`` a part holding ``value`` may have meant: each of a switch's or a
    choice's, and the prefix with ``value`` (or the default) for a number or a list of counts."""
    if isinstance(field.kind, _Switch):
        return [field.token(True), field.token(False)]
    if isinstance(field.kind, _Choice):
        return [field.token(choice) for choice in field.kind.choices]
    return [field.prefix + (value or field.kind.text(field.default))]


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
    unknown = [name for name in fields if name not in RULE_FIELD]
    if unknown:
        raise TypeError(f"Rules has no field {unknown[0]!r}; its fields are {', '.join(RULE_FIELD)}")


Rules.__init__ = _refusing_unknown_fields(Rules.__init__)  # type: ignore[method-assign]
