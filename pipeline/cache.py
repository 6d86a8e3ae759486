"""The cache folder as a whole: what ``modiar cache show`` lists and ``modiar cache clear`` removes.

The cache folder (pipeline.runs.paths.cache_folder) holds one subfolder a kind of file, and nothing
else: the list of kinds (engine.store.KINDS, and SCRATCH, the running atlas tasks' folders, each
holding the kinds) is the one the writers name their subfolders by. Beside a file being written
lies ``.<file>.tmp-<pid>`` (engine.store.write_atomic). Everything is rebuilt when a command needs
it, so clearing loses nothing but time.

``clear`` removes only files it has checked are modiar's: named as their kind's files are and
carrying modiar's seal (engine.store.integrity: an identity naming a rule set and the engine's version;
a temporary file, which a killed writer left half written, begins as its kind's files do). A
folder holding anything else (``--cache`` may name any folder) is refused whole, and so is a cache
that a process is writing (a temporary file whose pid runs, a scratch folder of a running task, or
of another machine's). Each file is removed through its folder as the check found it, never
through a link or a folder put in its place since, and only if it is still the file checked.
The cache has no lock: a command started while ``clear`` runs may find a file gone and build it
again.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from engine.store import KINDS, SCRATCH, TEMPORARY_PREFIX, CacheKind, process_running, sealed_identity
from pipeline.runs.estimate import size
from pipeline.runs.paths import scratch_owner

_BY_FOLDER = {kind.folder: kind for kind in KINDS}
_TEMPORARY = re.compile(re.escape(TEMPORARY_PREFIX) + r"(.+)\.tmp-([0-9]+)")  # write_atomic's, of the file named in it
_HEADS = {".npz": b"PK\x03\x04", ".json": b'{"checksum":'}  # how a sealed file begins (JSON: its blanks left out)
_SEAL_NAMES = ("rules", "engine")  # what the identity of every cache file's seal names


class NotACacheError(Exception):
    """The folder holds something modiar does not write there: it may not be a cache at all."""


class CacheBusyError(Exception):
    """A process is writing to the cache."""


@dataclass
class Scan:
    """The files of a cache folder that modiar wrote, what else it holds, and who is writing to it."""

    root: Path
    files: list[Path] = field(default_factory=list)
    folders: list[Path] = field(default_factory=list)  # the kinds' folders, the scratch folders and scratch/
    foreign: dict[Path, str] = field(default_factory=dict)  # each entry that is not modiar's: why, in words
    writers: list[str] = field(default_factory=list)
    seen: dict[Path, tuple[int, int]] = field(default_factory=dict)  # the root's, each folder's and file's inode


def show(folder: Path, source: str) -> str:
    """The cache folder, where its path comes from (``source``), and per subfolder (every kind,
    and any other found) its files and their size."""
    head = f"cache folder {folder} ({source})"
    if not folder.is_dir():
        return f"{head}: not there yet, nothing cached"
    found = {name: _usage(folder / name) for name in (*_BY_FOLDER, SCRATCH)}
    others = sorted(path for path in folder.iterdir() if path.name not in found)
    found |= {f"{path.name} (not modiar's)": _usage(path) for path in others}
    total = (sum(files for files, _ in found.values()), sum(n_bytes for _, n_bytes in found.values()))
    width = max(len(name) for name in found) + 2
    lines = [head, f"  {'kind':<{width}}{'files':>8}{'size':>12}"]
    rows = [*found.items(), ("total", total)]
    lines += [f"  {name:<{width}}{files:>8,}{_size(n_bytes):>12}" for name, (files, n_bytes) in rows]
    foreign = list(scan(folder).foreign)
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
    found = Scan(folder)
    if not folder.is_dir():
        return found
    found.seen[folder] = _inode(os.stat(folder))
    for entry in sorted(folder.iterdir()):
        if _is_folder(entry) and entry.name in _BY_FOLDER:
            _scan_kind(entry, _BY_FOLDER[entry.name], found)
        elif _is_folder(entry) and entry.name == SCRATCH:
            _scan_scratch(entry, found)
        else:
            found.foreign[entry] = "which modiar does not write there"
    return found


def check(folder: Path) -> Scan:
    """The scan of ``folder``; NotACacheError when it holds anything else than a cache's files,
    CacheBusyError when a process is writing to it."""
    found = scan(folder)
    if found.foreign:
        (first, why), *others = found.foreign.items()
        more = f" (and {len(others)} more that are not modiar's)" if others else ""
        raise NotACacheError(
            f"{folder} does not look like a modiar cache: it holds {first}, {why}{more}; nothing removed "
            "(name the cache folder with --cache, or remove this one by hand)"
        )
    if found.writers:
        more = f" (and {len(found.writers) - 1} more)" if len(found.writers) > 1 else ""
        raise CacheBusyError(
            f"the cache {folder} is in use: {found.writers[0]}{more}; nothing removed: clear it once that has ended"
        )
    return found


def clear(found: Scan) -> None:
    """Remove the files of a checked scan, then its folders as they empty: a file written or
    replaced since the scan stays, with its folder. Each is removed through its folder opened
    as the scan found it, never through a link or a folder put in its place since."""
    by_folder: dict[Path, list[str]] = defaultdict(list)
    for path in found.files:
        by_folder[path.parent].append(path.name)
    for folder, names in by_folder.items():
        _remove_as_scanned(found, folder, names, os.unlink)
    for folder in sorted(found.folders, key=lambda path: len(path.parts), reverse=True):  # the deepest first
        _remove_as_scanned(found, folder.parent, [folder.name], os.rmdir)  # not empty: a file written since


class UnconfirmedError(Exception):
    """A clear that needs a confirmation no one can give (no terminal, no --yes)."""


def clear_folder(folder: Path, *, yes: bool, ask: Callable[[str], bool | None]) -> str:
    """Clear the cache folder ``folder`` (``modiar cache clear``) once ``yes`` or ``ask`` (a
    question -> the answer; None where there is no terminal) confirms it; what was done, in words.
    NotACacheError, CacheBusyError, or UnconfirmedError where no one can confirm."""
    found = check(folder)
    if not found.folders:
        return f"the cache folder {folder} holds nothing: nothing to clear"
    if not yes:
        answer = ask(f"remove {described(found)} from the cache folder {folder}? [y/N] ")
        if answer is None:
            raise UnconfirmedError(f"modiar cache clear would remove {described(found)} from {folder}: add --yes to remove them")
        if not answer:
            return "nothing removed"
        found = check(folder)  # again: a run may have started while the question waited
    removed = described(found)
    clear(found)
    return f"removed {removed} from the cache folder {folder}"


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
            found.foreign[task] = "which modiar does not write there"
            continue
        if owner[0] != host:
            found.writers.append(f"{task} is an atlas task's on the machine {owner[0]} (pid {owner[1]}), which may be running")
        elif process_running(owner[1]):
            found.writers.append(f"an atlas task (pid {owner[1]}) works in {task}")
        for entry in sorted(task.iterdir()):
            if _is_folder(entry) and entry.name in _BY_FOLDER:
                _scan_kind(entry, _BY_FOLDER[entry.name], found)
            else:
                found.foreign[entry] = "which modiar does not write there"
        _scanned_folder(task, found)
    _scanned_folder(folder, found)


def _scan_kind(folder: Path, kind: CacheKind, found: Scan) -> None:
    for path in sorted(folder.iterdir()):
        temporary = _TEMPORARY.fullmatch(path.name)
        if path.is_symlink() or not path.is_file():
            found.foreign[path] = "which modiar does not write there"
            continue
        if not (_begins_as_sealed(path, temporary[1], kind) if temporary else _is_sealed(path, kind)):
            found.foreign[path] = "which carries no seal of modiar's"
            continue
        if temporary and process_running(int(temporary[2])):
            found.writers.append(f"pid {temporary[2]} is writing {folder / temporary[1]}")
        found.files.append(path)
        found.seen[path] = _inode(path.lstat())
    _scanned_folder(folder, found)


def _scanned_folder(folder: Path, found: Scan) -> None:
    found.folders.append(folder)
    found.seen[folder] = _inode(folder.lstat())


def _is_sealed(path: Path, kind: CacheKind) -> bool:
    """Whether the file at ``path`` is named as ``kind``'s files are and sealed as modiar's."""
    identity = sealed_identity(path) if _is_cached(path.name, kind) else None
    return identity is not None and all(name in identity for name in _SEAL_NAMES)


def _begins_as_sealed(path: Path, name: str, kind: CacheKind) -> bool:
    """Whether ``path``, the temporary file of ``name``, is named for ``kind``'s file and holds
    nothing (its writer killed at once) or the start of a sealed file of its kind."""
    if not _is_cached(name, kind):
        return False
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)  # a FIFO put there would block
        with open(descriptor, "rb") as handle:
            head = handle.read(64)
    except OSError:
        return False
    if kind.suffix == ".json":
        head = head.translate(None, b" \t\r\n")
    expected = _HEADS[kind.suffix]
    return head[: len(expected)] == expected[: len(head)]


def _is_cached(name: str, kind: CacheKind) -> bool:
    """Whether ``name`` is that of a file of ``kind``."""
    return not name.startswith(".") and name.endswith(kind.suffix) and "-engine" in name


def _remove_as_scanned(found: Scan, folder: Path, names: list[str], remove: Callable[..., None]) -> None:
    """``remove`` (os.unlink or os.rmdir) each of ``names`` in ``folder`` that is still the entry
    the scan saw, through ``folder`` opened as the scan found it; nothing when it is not."""
    descriptor = _open_as_scanned(found, folder)
    if descriptor is None:
        return
    try:
        for name in names:
            with contextlib.suppress(OSError):  # removed meanwhile, or a folder not empty
                if _inode(os.stat(name, dir_fd=descriptor, follow_symlinks=False)) == found.seen.get(folder / name):
                    remove(name, dir_fd=descriptor)
    finally:
        os.close(descriptor)


def _open_as_scanned(found: Scan, folder: Path) -> int | None:
    """A descriptor of ``folder``, opened from the scan's root one part at a time, never through
    a link; None when a part is gone or is not the folder the scan saw there."""
    path, flags = found.root, os.O_RDONLY | os.O_DIRECTORY
    try:
        descriptor = os.open(path, flags)
    except OSError:
        return None
    for part in (None, *folder.relative_to(found.root).parts):
        if part is not None:
            path = path / part
            try:
                inner: int | None = os.open(part, flags | os.O_NOFOLLOW, dir_fd=descriptor)
            except OSError:
                inner = None
            os.close(descriptor)
            if inner is None:
                return None
            descriptor = inner
        if _inode(os.fstat(descriptor)) != found.seen.get(path):
            os.close(descriptor)
            return None
    return descriptor


def _inode(status: os.stat_result) -> tuple[int, int]:
    return status.st_dev, status.st_ino


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
