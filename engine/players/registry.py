"""Strategies by name: the registry of strategy specs, and the spelling and parsing of a spec.

A spec string names a strategy and its parameters, e.g. ``"random"`` or
``"alphabeta(depth=4)"``; ``make_strategy`` makes it and ``canonical_spec`` spells it the one
way records store it. This module sits above every strategy class (``engine.players.strategies``,
``engine.players.search``), which know nothing of it.
"""

from __future__ import annotations

import difflib
import re
from inspect import signature

from engine.players import search, strategies
from engine.players.base import REGISTERED, EngineStrategy, Strategy

# Every strategy by name: the engine's own (engine.players.strategies, engine.players.search) register
# themselves as their modules load, and so does any subclass of EngineStrategy made with a name.
BUILT_IN = (strategies, search)
REGISTRY: dict[str, type[EngineStrategy]] = REGISTERED

_SPEC = re.compile(r"^\s*([a-z_][a-z0-9_]*)\s*(?:\((.*)\))?\s*$")


class UnknownStrategyError(ValueError):
    """A spec string that names no strategy, or gives it bad parameters."""


def make_strategy(spec: str | Strategy) -> Strategy:
    """The strategy a spec string names, e.g. ``"random"`` or ``"alphabeta(depth=4)"``; objects pass through.

    Specs that differ only in spelling (see ``canonical_spec``) give the same object, whose
    ``spec`` is the canonical spelling.
    """
    if isinstance(spec, str):
        cached = _CACHE.get(spec)
        return cached if cached is not None else _from_spec(spec)
    if not isinstance(spec, Strategy):
        raise TypeError(f"spec must be a strategy spec string such as 'random', or have .spec and .choose(), not {spec!r}")
    return spec


def engine_strategy(spec: str) -> EngineStrategy:
    """The engine's strategy a spec string names, with what it says about itself (its needs,
    its cost, its family: engine.players.base.EngineStrategy); UnknownStrategyError as
    make_strategy."""
    strategy = make_strategy(spec)
    assert isinstance(strategy, EngineStrategy)  # every registered strategy is one
    return strategy


def canonical_spec(spec: str) -> str:
    """The one spelling of a strategy spec: two specs that name the same strategy with the same
    parameters are spelled alike, e.g. ``" alphabeta( depth = 02 )"`` is ``"alphabeta(depth=2)"``.

    The spelling is the ``spec`` of the strategy made: its name, then the parameters that
    define it, in the order the constructor declares them, as ``name=value`` without spaces. A
    parameter with a default value is written out (``"alphabeta"`` is ``"alphabeta(depth=6)"``),
    one that is off is left out (``"perfect"``, ``"perfect(epsilon=0.1)"``); ints without
    leading zeros, floats by ``repr`` (``epsilon=1`` is ``epsilon=1.0``). It goes into records.
    Raises ``UnknownStrategyError`` wherever ``make_strategy`` does.
    """
    if not isinstance(spec, str):
        raise TypeError(f"spec must be a strategy spec string such as 'random' or 'alphabeta(depth=4)', not {spec!r}")
    spelling = _CANONICAL.get(spec)
    if spelling is None:
        _from_spec(spec)
        spelling = _CANONICAL[spec]
    return spelling


def _from_spec(spec: str) -> Strategy:
    name, arguments = _parsed(spec)
    try:
        made = REGISTRY[name](**arguments)
    except (TypeError, ValueError) as error:  # a value it refuses
        raise UnknownStrategyError(f"bad parameters in strategy {spec!r}: {error}; {_parameters(name)}") from None
    strategy = _CACHE.setdefault(made.spec, made)
    _CACHE[spec] = strategy
    _CANONICAL[spec] = _CANONICAL[made.spec] = made.spec
    return strategy


# By spec as given and by canonical spelling: specs that differ only in spelling share one strategy.
_CACHE: dict[str, Strategy] = {}
_CANONICAL: dict[str, str] = {}


def _parsed(spec: str) -> tuple[str, dict[str, object]]:
    """The strategy's name and the parameters the spec gives it, checked against its constructor."""
    match = _SPEC.match(spec)
    known = ", ".join(sorted(REGISTRY))
    if match is None or match.group(1) not in REGISTRY:
        raise UnknownStrategyError(f"unknown strategy {spec!r}{_nearest(spec, match)}; known strategies: {known}")
    name, text = match.groups()
    try:
        bound = signature(REGISTRY[name]).bind(**_parse_arguments(text or "", spec))
    except TypeError:  # a parameter the strategy does not take
        raise UnknownStrategyError(f"bad parameters in strategy {spec!r}: {_parameters(name)}") from None
    return name, dict(bound.arguments)


def _nearest(spec: str, match: re.Match[str] | None) -> str:
    """The hint for a spec whose name is a known one misspelt, its parameters kept: " (did you mean
    'perfect(epsilon=0.1)'?)"; else nothing."""
    name, parameters = match.groups() if match else (spec.strip(), None)
    nearest = difflib.get_close_matches(name.lower(), REGISTRY, n=1)
    if not nearest:
        return ""
    suggestion = nearest[0] + (f"({parameters})" if parameters else "")
    return f" (did you mean {suggestion!r}?)"


def _parameters(name: str) -> str:
    """What a strategy takes, e.g. ``alphabeta takes depth (default 6)``."""
    taken = [
        f"{parameter.name} (optional)" if parameter.default is None else f"{parameter.name} (default {parameter.default!r})"
        for parameter in signature(REGISTRY[name]).parameters.values()
    ]
    return f"{name} takes " + (", ".join(taken) if taken else "no parameters")


def _parse_arguments(text: str, spec: str) -> dict[str, int | float | str]:
    arguments: dict[str, int | float | str] = {}
    for part in filter(None, (piece.strip() for piece in text.split(","))):
        key, equals, value = part.partition("=")
        key = key.strip()
        if not equals or not key.isidentifier():
            raise UnknownStrategyError(f"bad parameter {part!r} in strategy {spec!r}: write name=value")
        if key in arguments:
            raise UnknownStrategyError(f"parameter {key} is given twice in strategy {spec!r}; give each parameter once")
        arguments[key] = _parse_value(value.strip())
    return arguments


def _parse_value(text: str) -> int | float | str:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text.strip("'\"")
