"""Numbers in words, as every report writes them: a count with its noun, a list of names, a value
with its interval, a value with its sign, a p-value.

    plural(3, "game")               3 games
    listed(["a", "b", "c"])         a, b and c
    interval(0.5, 0.4, 0.6, ".2f")  0.50 [0.40, 0.60]
    signed(-8)                      -8 (and 0, never +0)
    p_value(0.0625)                 0.062 in a table cell; p_words, = 0.062 after "p" in a sentence
    figure(0.0000081)               0.0000081 (never 8.1e-06: the digits that count, without an exponent)

A report's own wording (what its figures mean, how it names a rule set) stays with the report.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy


def plural(count: int, word: str) -> str:
    """``1 game``, ``3 games``: the count and its noun, an s added but for one."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def listed(values: Sequence[object], joined_by: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c`` (``joined_by`` the last two: "or" for a choice); empty for none."""
    words = [str(value) for value in values]
    if len(words) < 2:
        return words[0] if words else ""
    return f"{', '.join(words[:-1])} {joined_by} {words[-1]}"


def interval(value: float, low: float, high: float, spec: str = ".3f") -> str:
    """A value and its interval, each formatted by ``spec``: ``0.512 [0.498, 0.526]``."""
    return f"{value:{spec}} [{low:{spec}}, {high:{spec}}]"


def signed(value: float, form: str = "{:+.0f}") -> str:
    """A value with its sign, but 0 without one: "+6", "0", "-8"."""
    text = form.format(value)
    return text.lstrip("+-") if float(text) == 0 else text


def p_words(p: float | None) -> str:
    """A p-value as a paper prints it, after "p" in a sentence: "< 0.001" below a thousandth, else
    two significant digits ("= 0.062"); "n/a" for none or NaN."""
    if p is None or p != p:
        return "n/a"
    return "< 0.001" if p < 0.001 else f"= {p:.2g}"


def p_value(p: float | None) -> str:
    """A p-value in a table cell: p_words without its "= " ("0.062", "< 0.001")."""
    return p_words(p).removeprefix("= ")


def figure(value: float, digits: int = 2, *, decimals: int = 4) -> str:
    """A figure that may be small, as a paper prints it beside others in one column: ``decimals``
    fixed decimals when that keeps ``digits`` significant ones, else ``digits`` significant
    digits, never an exponent: 0.4636, 0.0012, 0.0000081 and 0; "n/a" for None or NaN."""
    if value is None or value != value:
        return "n/a"
    if value == 0:
        return "0"
    if abs(value) >= 10 ** (digits - 1 - decimals):
        return f"{value:.{decimals}f}"
    return numpy.format_float_positional(value, precision=digits, unique=False, fractional=False, trim="-")


def percent(share: float) -> str:
    """A share as a percentage that keeps a small one readable: 83.7%, 0.029%, 0%."""
    return f"{figure(100 * share, 3, decimals=1)}%"
