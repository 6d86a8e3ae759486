"""One writer per study folder: ``modiar study run`` holds an exclusive lock on its folder.

The lock is an fcntl lock on ``.modiar.lock`` in the folder, which the kernel releases when
its holder exits, however it exits (kill -9 included): a stale lock cannot outlive its run.
The file itself stays, holding the pid of the last run that held it.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pipeline.runs.paths import LOCK


class FolderBusyError(OSError):
    """Another process holds the folder's lock."""


@contextmanager
def folder_lock(directory: Path, command: str = "modiar study run") -> Iterator[None]:
    """Hold the folder's lock for the block; FolderBusyError naming the holder's pid when another has it."""
    path = directory / LOCK
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise FolderBusyError(f"{directory} is being written by another '{command}' ({_holder(path)})") from None
        os.ftruncate(descriptor, 0)
        os.write(descriptor, f"{os.getpid()}\n".encode())
        yield
    finally:
        os.close(descriptor)  # closing releases the lock


def _holder(path: Path) -> str:
    try:
        pid = path.read_text(encoding="utf-8").strip()
    except OSError:
        pid = ""
    return f"pid {pid}" if pid.isdigit() else "pid unknown"
