"""Servers on this machine for the tests of --scheduler: one that speaks first (an SSH banner, an
HTTP response), which is no dask scheduler, and a real dask cluster on loopback."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from polling import wait_until

from pipeline.runs.paths import ROOT


@contextmanager
def speaking_first(banner: bytes) -> Iterator[str]:
    """The address of a server that writes ``banner`` to whoever connects, for the block."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def serve() -> None:
        with contextlib.suppress(OSError):
            while True:
                connection, _ = server.accept()
                connection.sendall(banner)
                held.append(connection)  # kept open: the client is left to read what it got

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    finally:
        server.close()
        for connection in held:
            connection.close()


@dataclass(frozen=True)
class DaskCluster:
    """A dask scheduler and its workers, on loopback; ``workers`` maps each worker's address to its
    process, in the order they were asked for."""

    address: str
    scheduler: subprocess.Popen[bytes]
    workers: dict[str, subprocess.Popen[bytes]]


@contextmanager
def dask_cluster(folder: Path, *code: Path | None) -> Iterator[DaskCluster]:
    """A real ``dask scheduler`` and one ``dask worker`` for each of ``code``: None runs this
    checkout's engine and pipeline, a folder the copies of them it holds (imported first: it is
    the worker's working folder and its PYTHONPATH). One thread a worker and no nanny, so that a
    worker's pid is the pid of the process that runs its tasks. Every process is killed as the
    block ends, whatever happens."""
    from distributed import Client

    dask = str(Path(sys.executable).parent / "dask")
    file = folder / "scheduler.json"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    scheduler = [dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", str(file)]
    processes = [subprocess.Popen(scheduler, **quiet)]  # type: ignore[call-overload]
    try:
        if not wait_until(lambda: file.exists() and file.stat().st_size > 0, 60):
            raise AssertionError("the dask scheduler gave no address within 60 s")
        address = json.loads(file.read_text())["address"]
        worker = ["worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard", "--host", "127.0.0.1"]
        for copy in code:
            environment = {**os.environ, "PYTHONPATH": str(copy)} if copy else None
            processes.append(subprocess.Popen([dask, *worker], cwd=copy, env=environment, **quiet))  # type: ignore[call-overload]
        with Client(address, timeout=30) as client:
            if code:
                client.wait_for_workers(len(code), timeout=60)
            addresses = {pid: worker for worker, pid in client.run(os.getpid).items()}
        yield DaskCluster(address, processes[0], {addresses[process.pid]: process for process in processes[1:]})
    finally:
        for process in processes:
            process.kill()
            process.wait()


def project_copy(folder: Path, file: str, line: str, changed: str) -> Path:
    """A copy of this checkout's engine and pipeline in ``folder`` whose ``file`` has ``line``
    changed to ``changed``; a worker started there (dask_cluster) imports the copy."""
    for package in ("engine", "pipeline"):
        shutil.copytree(ROOT / package, folder / package, ignore=shutil.ignore_patterns("__pycache__"))
    path = folder / file
    text = path.read_text()
    assert text.count(line) == 1, f"{line!r} is not once in {file}"
    path.write_text(text.replace(line, changed))
    return folder
