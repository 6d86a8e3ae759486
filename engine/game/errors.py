"""The engine's exceptions."""


class IllegalMoveError(ValueError):
    """A move the rules forbid; the message names the pit, the board and the rule."""
