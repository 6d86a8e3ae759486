"""Where the engine keeps what it computes once per rule set: a folder its caller chooses.

The engine picks no folder of its own and reads no environment variable. Until a caller says
where (``set_cache_folder``), position tables, solutions and policy tables are built in
memory, each time a process first needs them; once a folder is set they are kept in it:

    <folder>/tables/<rule set>-engine<version>.npz        engine.tables
    <folder>/solutions/<rule set>-cap<cap>-engine<version>.npz   engine.solver
    <folder>/policies/<rule set>-<values>-engine<version>.npz    engine.policy

``pipeline`` sets the folder (``--cache DIR``, ``$MODIAR_CACHE`` or the user's cache folder).
Files are written whole or not at all (``write_atomic``), so processes sharing a folder see
either no file or a complete one.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

_folder: Path | None = None


def set_cache_folder(folder: str | os.PathLike[str] | None) -> None:
    """Keep tables and solutions in ``folder`` from now on (in this process); None: in memory."""
    global _folder
    if folder is not None and not isinstance(folder, str | os.PathLike):
        raise TypeError(f"folder must be a folder's path (a str or a pathlib.Path) or None, not {folder!r}")
    _folder = None if folder is None else Path(folder)


def cache_folder() -> Path | None:
    """The folder set by ``set_cache_folder``, None when the engine builds in memory."""
    return _folder


def write_atomic(path: Path, data: bytes | Callable[[BinaryIO], object]) -> None:
    """Write a whole file or nothing: ``data`` (bytes, or a function that writes to a binary
    handle) goes to a temporary file beside ``path``, flushed to disk, then renamed into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with open(temporary, "wb") as handle:
            if isinstance(data, bytes):
                handle.write(data)
            else:
                data(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
