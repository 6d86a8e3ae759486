"""The small study the tests share: random and greedy, 20 games a seat, 3 stones a pit (80 games
of a few plies, no table to build), as a config for parse_study and as the TOML text of a file.

A test changes what it needs by keyword, ``small_config(games_per_seat=40, rules={})``, and
tests/conftest.py's fixtures write it (``small_study``) or run it once for the session
(``small_study_run``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

SMALL_STUDY: dict[str, Any] = {
    "name": "small",
    "seed": 3,
    "games_per_seat": 20,
    "strategies": ["random", "greedy"],
    "rules": {"stones_per_pit": 3},
}


def small_config(**changes: Any) -> dict[str, Any]:
    """The small study's config with ``changes`` in place of its own keys."""
    return {**SMALL_STUDY, **changes}


def toml_text(config: Mapping[str, Any]) -> str:
    """A study's config as the text of its TOML file: the plain keys first, then a table a key
    that holds one ([rules], [games], [variants]), whose own tables are written inline."""
    plain = [f"{_key(key)} = {_value(value)}" for key, value in config.items() if not isinstance(value, Mapping)]
    tables = [
        "\n".join([f"[{_key(key)}]", *(f"{_key(name)} = {_value(inner)}" for name, inner in value.items())])
        for key, value in config.items()
        if isinstance(value, Mapping)
    ]
    return "\n\n".join(["\n".join(plain), *tables]) + "\n"


def _key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() else json.dumps(key)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_key(key)} = {_value(inner)}" for key, inner in value.items()) + " }"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(inner) for inner in value) + "]"
    return json.dumps(value)  # a string in double quotes with JSON's escapes, which TOML reads alike; a number
