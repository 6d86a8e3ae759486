"""A rule set's name that spells no rule set (RULES.md, Rule-set names): the error names the part
and the way out, the token nearest in spelling, which is itself a part of a valid name."""

from __future__ import annotations

import re

import pytest
from variants import EVERY_FIELD_ALONE, OWARE_LIKE

from engine import Rules
from engine.game.rules import RULE_FIELDS

# (the part written, the part meant): a letter lost, two letters of the prefix lost, a letter
# changed, a value cut short (the field known, its value not)
TYPOS = [
    ("stone5", "stones5"),
    ("feedoff", "feedingoff"),
    ("orign0ff", "originoff"),
    ("capture2.4", "captures2.4"),
    ("slamallow", "slamallowed"),
    ("rowsopp", "rowsopponent"),
    ("feedingof", "feedingoff"),
]


@pytest.mark.parametrize(("part", "meant"), TYPOS)
def test_a_misspelt_part_gets_the_part_it_meant_which_is_valid(part: str, meant: str) -> None:
    with pytest.raises(ValueError, match=re.escape(f"did you mean {meant!r}?")) as refused:
        Rules.from_name(f"modiar-{part}")
    assert str(refused.value).startswith(f"rule set name 'modiar-{part}' has ") and "\n" not in str(refused.value)
    Rules.from_name(f"modiar-{meant}")  # the suggestion spells a rule set


def test_a_valid_part_and_a_part_too_far_to_guess() -> None:
    assert Rules.from_name("modiar-captures2.4") == Rules(capture_counts=(2, 4))
    with pytest.raises(ValueError, match="has an unknown part 'xyz'; each part is a field's prefix") as refused:
        Rules.from_name("modiar-xyz")
    for field in RULE_FIELDS:
        assert field.prefix in str(refused.value)
    with pytest.raises(ValueError) as refused:
        Rules.from_name("modiar-feedingmaybe")
    assert str(refused.value) == "rule set name 'modiar-feedingmaybe' has a bad value 'maybe' for feeding, which takes on or off"


@pytest.mark.parametrize("rules", [*EVERY_FIELD_ALONE, OWARE_LIKE], ids=lambda rules: rules.name)
def test_every_token_with_a_letter_of_its_prefix_lost_is_found_again(rules: Rules) -> None:
    """Whatever letter of a field's prefix is dropped, the error suggests the whole token."""
    for field in RULE_FIELDS:
        value = getattr(rules, field.name)
        if value == field.default:
            continue
        token = field.token(value)
        for lost in range(len(field.prefix)):
            with pytest.raises(ValueError, match=re.escape(f"did you mean {token!r}?")):
                Rules.from_name(f"modiar-{token[:lost]}{token[lost + 1 :]}")
