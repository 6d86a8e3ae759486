"""Old names of the public API, kept working for a while with a DeprecationWarning.

Each entry says what the name became; the warning names the new one, so that a notebook or a
script written against an older release keeps running and says what to change.
"""

from __future__ import annotations

import warnings


def renamed(old: str, new: str) -> None:
    """Warn that ``old`` is now ``new`` (at the caller's caller: the line that used the old name)."""
    warnings.warn(f"{old} is deprecated: use {new}", DeprecationWarning, stacklevel=3)


def progress_switch(progress: bool, verbose: bool | None, where: str) -> bool:
    """The on/off switch of a function that took ``verbose=`` before it took ``progress=``."""
    if verbose is None:
        return progress
    warnings.warn(f"{where}(verbose=...) is deprecated: use progress=...", DeprecationWarning, stacklevel=3)
    return verbose
