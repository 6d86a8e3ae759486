"""Where the engine keeps what it computes once per rule set: a folder its caller chooses.

The engine picks no folder of its own and reads no environment variable. Until a caller says
where (``set_cache_folder``), position tables, solutions and policy tables are built in
memory, each time a process first needs them; once a folder is set they are kept in it.

What the cache folder holds is listed once, here (KINDS and SCRATCH), and read by every writer
for its subfolder's name and by ``modiar cache`` (pipeline.cache) for what it may remove: one
subfolder a kind, each file sealed by engine.store.integrity (arrays or JSON, by its suffix) with an
identity naming its rule set and the engine's version:

    tables/      <rule set>-engine<version>.npz               engine.tables.positions
    solutions/   <rule set>-cap<cap>-engine<version>.npz      engine.solver.solution
    policies/    <rule set>-<values>-engine<version>.npz      engine.players.policy
    exact/       ...-engine<version>.json                     pipeline.exact.cache
    search/      ...-engine<version>.json                     pipeline.search_ladder.run
    scratch/     atlas-<host>-<pid>-.../, each a cache folder of the kinds above for one running
                 atlas task (pipeline.atlas.analyse), removed as the task ends

``pipeline`` sets the folder (``--cache DIR``, ``$MODIAR_CACHE`` or the user's cache folder).
Files are written whole or not at all (``write_atomic``), so processes sharing a folder see
either no file or a complete one.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO, NamedTuple


class CacheKind(NamedTuple):
    """A kind of file the cache folder keeps, in a subfolder of its own."""

    folder: str  # the cache folder's subfolder
    suffix: str  # what its files' names end in: .npz sealed arrays, .json sealed JSON (engine.store.integrity)


TABLES = CacheKind("tables", ".npz")  # position tables
SOLUTIONS = CacheKind("solutions", ".npz")
POLICIES = CacheKind("policies", ".npz")  # policy tables
EXACT = CacheKind("exact", ".json")  # exact outcomes and exploitabilities
SEARCH = CacheKind("search", ".json")  # the search ladder's pairings, each played once
KINDS = (TABLES, SOLUTIONS, POLICIES, EXACT, SEARCH)
SCRATCH = "scratch"  # the atlas tasks' folders, each holding the kinds above

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
        pid = pid_in(path.name.rpartition(".tmp-")[2])
        if pid is None or not process_running(pid):
            path.unlink(missing_ok=True)


def pid_in(text: str) -> int | None:
    """The pid ``text`` (a part of a file's name) gives, in ASCII digits; None when it gives none."""
    return int(text) if text.isascii() and text.isdigit() else None


def process_running(pid: int) -> bool:
    """Whether a process of this ``pid`` runs (on this machine). A number no process can have
    runs none: 0 (to os.kill, the caller's own process group), beyond the largest pid, or the id
    of another process's thread."""
    if not 0 < pid <= _PID_MAX or _thread_of_another(pid):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _thread_of_another(pid: int) -> bool:
    """Whether ``pid`` is the id of a thread of another process, not of a process: Linux's kill
    takes a thread's id too, and a writer's name carries its process's id. Read from /proc where
    there is one; elsewhere (no /proc) False."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Tgid:"):
                    return int(line.split()[1]) != pid
    except (OSError, ValueError):
        pass
    return False


_PID_MAX = 2**31 - 1  # pids are C ints (pid_t) on every system Python runs on


def _blocking_file(folder: Path) -> str:
    """The first part of ``folder`` that exists and is not a folder."""
    for part in (*reversed(folder.parents), folder):
        if part.exists() and not part.is_dir():
            return str(part)
    return str(folder)
