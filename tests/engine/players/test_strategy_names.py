"""A strategy spec that names no strategy: the error lists the known ones and, for a name near one
in spelling, suggests it with the spec's parameters kept, as a spec that makes that strategy."""

from __future__ import annotations

import re

import pytest

from engine import UnknownStrategyError, make_strategy
from engine.players.registry import REGISTRY

TYPOS = [
    ("grete", "greedy"),
    ("Greedy", "greedy"),
    ("mtcs(playouts=4)", "mcts(playouts=4)"),
    ("perfct(epsilon=0.1)", "perfect(epsilon=0.1)"),
    ("alpha-beta", "alphabeta"),
    ("heuristik", "heuristic"),
]


@pytest.mark.parametrize(("spec", "meant"), TYPOS)
def test_a_misspelt_strategy_gets_the_spec_it_meant_which_makes_it(spec: str, meant: str) -> None:
    with pytest.raises(UnknownStrategyError, match=re.escape(f"unknown strategy {spec!r} (did you mean {meant!r}?);")) as refused:
        make_strategy(spec)
    assert str(refused.value).endswith(f"known strategies: {', '.join(sorted(REGISTRY))}")
    make_strategy(meant)  # the suggestion is a strategy


@pytest.mark.parametrize("spec", ["nonsense", "", "zzz(depth=2)"])
def test_a_name_near_none_gets_the_list_alone(spec: str) -> None:
    with pytest.raises(UnknownStrategyError) as refused:
        make_strategy(spec)
    assert str(refused.value) == f"unknown strategy {spec!r}; known strategies: {', '.join(sorted(REGISTRY))}"
