"""The cache folder as a whole: what ``modiar cache show`` lists and ``modiar cache clear`` removes.

The cache folder (pipeline.paths.cache_folder) holds one subfolder a kind, and nothing else:

    tables/      position tables     <rule set>-engine<version>.npz           engine.tables
    solutions/   solutions           <rule set>-cap<cap>-engine<version>.npz  engine.solver
    policies/    policy tables       <rule set>-<values>-engine<version>.npz  engine.policy
    exact/       exact outcomes and exploitabilities, ...-engine<version>.json  pipeline.exact.cache
    scratch/     one folder a running atlas task, atlas-<host>-<pid>-..., holding the kinds above
                 (pipeline.atlas.analyse), removed as the task ends

and beside a file being written, ``.<file>.tmp-<pid>`` (engine.cache.write_atomic). Everything is
rebuilt when a command needs it, so clearing loses nothing but time.

``clear`` removes only files it has checked are of that layout: a folder holding anything else
(``--cache`` may name any folder) is refused whole, and so is a cache that a process is writing
(a temporary file whose pid runs, a scratch folder of a running task, or of another machine's).
The cache has no lock: a command started while ``clear`` runs may find a file gone and build it
again.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
from dataclasses import dataclass, field
from pathlib import Path

from engine.cache import TEMPORARY_PREFIX, process_running
from pipeline.estimates import size
from pipeline.paths import SCRATCH, scratch_owner

KINDS = {"tables": ".npz", "solutions": ".npz", "policies": ".npz", "exact": ".json"}  # subfolder: what its files end in
_TEMPORARY = re.compile(re.escape(TEMPORARY_PREFIX) + r"(.+)\.tmp-(\d+)")  # write_atomic's, of the file named in it


class NotACacheError(Exception):
    """The folder holds something modiar does not write there: it may not be a cache at all."""


class CacheBusyError(Exception):
    """A process is writing to the cache."""


@dataclass
class Scan:
    """The files of a cache folder that modiar wrote, what else it holds, and who is writing to it."""

    files: list[Path] = field(default_factory=list)
    folders: list[Path] = field(default_factory=list)  # the kinds' folders, the scratch folders and scratch/
    foreign: list[Path] = field(default_factory=list)
    writers: list[str] = field(default_factory=list)


def show(folder: Path, source: str) -> str:
    """The cache folder, where its path comes from (``source``), and per subfolder (every kind,
    and any other found) its files and their size."""
    head = f"cache folder {folder} ({source})"
    if not folder.is_dir():
        return f"{head}: not there yet, nothing cached"
    found = {kind: _usage(folder / kind) for kind in (*KINDS, SCRATCH)}
    others = sorted(path for path in folder.iterdir() if path.name not in found)
    found |= {f"{path.name} (not modiar's)": _usage(path) for path in others}
    total = (sum(files for files, _ in found.values()), sum(n_bytes for _, n_bytes in found.values()))
    width = max(len(name) for name in found) + 2
    lines = [head, f"  {'kind':<{width}}{'files':>8}{'size':>12}"]
    rows = [*found.items(), ("total", total)]
    lines += [f"  {name:<{width}}{files:>8,}{_size(n_bytes):>12}" for name, (files, n_bytes) in rows]
    foreign = scan(folder).foreign
    if foreign:
        lines.append(
            f"{len(foreign)} of its entries are not modiar's (e.g. {foreign[0]}): modiar cache clear refuses this folder"
        )
    else:
        lines.append("modiar cache clear empties it; what a command needs is built again")
    return "\n".join(lines)


def scan(folder: Path) -> Scan:
    """What ``folder`` holds, sorted by the layout of the module docstring. Symbolic links are
    foreign, never followed."""
    found = Scan()
    if not folder.is_dir():
        return found
    for entry in sorted(folder.iterdir()):
        if _is_folder(entry) and entry.name in KINDS:
            _scan_kind(entry, KINDS[entry.name], found)
        elif _is_folder(entry) and entry.name == SCRATCH:
            _scan_scratch(entry, found)
        else:
            found.foreign.append(entry)
    return found


def check(folder: Path) -> Scan:
    """The scan of ``folder``; NotACacheError when it holds anything else than a cache's files,
    CacheBusyError when a process is writing to it."""
    found = scan(folder)
    if found.foreign:
        more = f" and {len(found.foreign) - 1} more" if len(found.foreign) > 1 else ""
        raise NotACacheError(
            f"{folder} does not look like a modiar cache: it holds {found.foreign[0]}{more}, which modiar does not write "
            "there; nothing removed (name the cache folder with --cache, or remove this one by hand)"
        )
    if found.writers:
        more = f" (and {len(found.writers) - 1} more)" if len(found.writers) > 1 else ""
        raise CacheBusyError(
            f"the cache {folder} is in use: {found.writers[0]}{more}; nothing removed: clear it once that has ended"
        )
    return found


def clear(found: Scan) -> None:
    """Remove the files of a checked scan, then its folders as they empty: a file written since
    the scan stays, with its folder."""
    for path in found.files:
        path.unlink(missing_ok=True)
    for folder in sorted(found.folders, key=lambda path: len(path.parts), reverse=True):  # the deepest first
        with contextlib.suppress(OSError):  # not empty: a file written since
            folder.rmdir()


def total_bytes(found: Scan) -> int:
    return sum(path.stat().st_size for path in found.files if path.exists())


def described(found: Scan) -> str:
    """``12 files, 1.4 GiB``."""
    files = len(found.files)
    return f"{files:,} file{'' if files == 1 else 's'}, {_size(total_bytes(found))}"


def _scan_scratch(folder: Path, found: Scan) -> None:
    host = socket.gethostname()
    for task in sorted(folder.iterdir()):
        owner = scratch_owner(task.name)
        if owner is None or not _is_folder(task):
            found.foreign.append(task)
            continue
        if owner[0] != host:
            found.writers.append(f"{task} is an atlas task's on the machine {owner[0]} (pid {owner[1]}), which may be running")
        elif process_running(owner[1]):
            found.writers.append(f"an atlas task (pid {owner[1]}) works in {task}")
        for entry in sorted(task.iterdir()):
            if _is_folder(entry) and entry.name in KINDS:
                _scan_kind(entry, KINDS[entry.name], found)
            else:
                found.foreign.append(entry)
        found.folders.append(task)
    found.folders.append(folder)


def _scan_kind(folder: Path, suffix: str, found: Scan) -> None:
    for path in sorted(folder.iterdir()):
        temporary = _TEMPORARY.fullmatch(path.name)
        name = temporary[1] if temporary else path.name
        if path.is_symlink() or not path.is_file() or not _is_cached(name, suffix):
            found.foreign.append(path)
            continue
        if temporary and process_running(int(temporary[2])):
            found.writers.append(f"pid {temporary[2]} is writing {folder / name}")
        found.files.append(path)
    found.folders.append(folder)


def _is_cached(name: str, suffix: str) -> bool:
    """Whether ``name`` is that of a file of the kind whose files end in ``suffix``."""
    return not name.startswith(".") and name.endswith(suffix) and "-engine" in name


def _is_folder(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def _usage(folder: Path) -> tuple[int, int]:
    """The files under ``folder`` (symbolic links not followed) and their size in bytes."""
    files = sizes = 0
    if folder.is_symlink() or not folder.exists():
        return files, sizes
    if folder.is_file():
        return 1, folder.stat().st_size
    for root, _, names in os.walk(folder):
        for name in names:
            with contextlib.suppress(OSError):  # removed meanwhile
                sizes += (Path(root) / name).lstat().st_size
                files += 1
    return files, sizes


def _size(n_bytes: int) -> str:
    return f"{n_bytes:,} B" if n_bytes < 1024 else size(n_bytes)
