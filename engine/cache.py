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
    handle) goes to a temporary file beside ``path``, flushed to disk, then renamed into place.
    An OSError names ``path`` itself, never the temporary file (and, when a file stands where a
    folder of the path should be, that file)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError) as error:
        raise NotADirectoryError(error.errno, "a file stands where a folder should be", _blocking_file(path.parent)) from None
    temporary = path.with_name(f"{TEMPORARY_PREFIX}{path.name}.tmp-{os.getpid()}")
    try:
        with open(temporary, "wb") as handle:
            if isinstance(data, bytes):
                handle.write(data)
            else:
                data(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise type(error)(error.errno, error.strerror or str(error), str(path)) from None
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


TEMPORARY_PREFIX = "."  # write_atomic's temporary files: ".<name>.tmp-<pid>" beside the file


def temporary_files(folder: Path) -> list[Path]:
    """The temporary files write_atomic left in ``folder`` (a process killed mid-write)."""
    return sorted(folder.glob(f"{TEMPORARY_PREFIX}*.tmp-*")) if folder.is_dir() else []


def remove_stale_temporaries(folder: Path) -> None:
    """Remove the temporary files of writers that are gone (their pid no longer runs): a kill -9
    mid-write leaves one behind. A live writer's file is left to it."""
    for path in temporary_files(folder):
        pid = path.name.rpartition(".tmp-")[2]
        if not (pid.isdigit() and process_running(int(pid))):
            path.unlink(missing_ok=True)


def process_running(pid: int) -> bool:
    """Whether a process of this ``pid`` runs (on this machine)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _blocking_file(folder: Path) -> str:
    """The first part of ``folder`` that exists and is not a folder."""
    for part in (*reversed(folder.parents), folder):
        if part.exists() and not part.is_dir():
            return str(part)
    return str(folder)
