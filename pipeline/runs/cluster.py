"""The tasks of a run on a dask cluster: run by the cluster's workers only, and only by workers
that run this modiar's engine and pipeline code.

Before any task, check_code asks every worker for its code_fingerprint (its own copy of the
function) and refuses a worker whose answer differs from this process's, or that cannot answer.
Each task asks again on its worker (run_batch), so that a worker that joined the cluster after
the check runs no task of another code either.

ClusterBackend, not joblib's own dask backend, hands the tasks to the cluster, for two reasons.
joblib's takes the cluster's threads for its number of jobs, and joblib runs the tasks of one
job inside this process, one after the other: a cluster of one single-thread worker never ran a
task. And a task that a worker cannot unpickle (a function it does not have) breaks the worker's
connection to the scheduler, and joblib waits for an answer for ever; here a task travels as
bytes that run_batch unpickles on the worker, so that a failure to load it is the task's error,
one line, and the worker lives on.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import pickle
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import CancelledError
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from joblib.parallel import ParallelBackendBase, SequentialBackend, get_active_backend

import engine
from pipeline.runs.paths import PACKAGE
from pipeline.runs.records import RecordError

if TYPE_CHECKING:
    from distributed import Client, Future
    from distributed.scheduler import KilledWorker

SHOWN = 12  # the hex digits of a fingerprint a message shows
SAME_INSTALLATION = "start it from the same installation"


@functools.cache
def code_fingerprint() -> str:
    """A SHA-256 of the engine's and the pipeline's source files as installed: each .py file by
    its path relative to the packages' folder and its bytes. Computed once a process."""
    digest = hashlib.sha256()
    for package in (Path(str(engine.__file__)).parent, PACKAGE):
        for path in sorted(package.rglob("*.py")):
            source = path.read_bytes()
            digest.update(f"{path.relative_to(package.parent).as_posix()}\0{len(source)}\0".encode())
            digest.update(source)
    return digest.hexdigest()


def check_code(client: Client, where: str, seconds: float) -> None:
    """Refuse (RecordError, naming the worker) a worker of ``client``'s cluster whose engine or
    pipeline code is not this process's, or that cannot tell; and a cluster (``where``) that has
    no worker within ``seconds``."""
    try:
        client.wait_for_workers(1, timeout=seconds)
    except TimeoutError:
        raise RecordError(f"the dask scheduler {where} has no worker (none within {seconds:g} s); start workers first") from None
    here = code_fingerprint()
    answers = client.run(code_fingerprint, on_error="return")
    for worker, answer in sorted(answers.items()):
        if isinstance(answer, BaseException):
            raise RecordError(f"the dask worker {worker} cannot run this modiar's code ({_said(answer)}); {SAME_INSTALLATION}")
        if answer != here:
            raise RecordError(_other_code(worker, here, str(answer)))


def run_batch(batch: bytes, fingerprint: str) -> Any:
    """In a dask worker: the pickled joblib ``batch`` called, once this worker's code is known to be
    the code whose ``fingerprint`` the client has; RecordError, naming the worker, if it is not
    or if the batch cannot be unpickled here."""
    from distributed import get_worker

    worker = get_worker().address
    here = code_fingerprint()
    if here != fingerprint:
        raise RecordError(_other_code(worker, fingerprint, here))
    try:
        calls = pickle.loads(batch)
    except Exception as error:
        raise RecordError(f"the dask worker {worker} could not load a task ({_said(error)}); {SAME_INSTALLATION}") from None
    return calls()


class ClusterBackend(ParallelBackendBase):  # type: ignore[misc]
    """joblib's tasks as dask futures of ``client``: run_batch of each batch, pickled."""

    supports_retrieve_callback = True

    def __init__(self, client: Client) -> None:
        super().__init__()
        self.client = client
        self._futures: set[Future[Any]] = set()  # in flight; a future leaves it in dask's callback thread
        self._lock = threading.Lock()

    def effective_n_jobs(self, n_jobs: int) -> int:
        """The cluster's threads, and at least 2: with 1, joblib would run the tasks in this process."""
        return max(2, sum(self.client.ncores().values()))  # type: ignore[no-untyped-call]

    def submit(self, func: Callable[[], Any], callback: Callable[[Future[Any]], None] | None = None) -> Future[Any]:
        # dask's own pickler: it pickles by value what a worker cannot import (a test's lambda)
        import cloudpickle  # type: ignore[import-untyped]

        future = self.client.submit(run_batch, cloudpickle.dumps(func), code_fingerprint(), pure=False)
        with self._lock:
            self._futures.add(future)
        future.add_done_callback(self._forget)  # type: ignore[no-untyped-call]
        if callback is not None:
            future.add_done_callback(callback)  # type: ignore[no-untyped-call]
        return future

    def retrieve_result_callback(self, out: Future[Any]) -> Any:
        return out.result()

    def abort_everything(self, ensure_ready: bool = True) -> None:
        with self._lock:
            futures = list(self._futures)
        self.client.cancel(futures)  # type: ignore[no-untyped-call]

    def get_nested_backend(self) -> tuple[ParallelBackendBase, int | None]:
        return SequentialBackend(nesting_level=1), None  # a task's own Parallel runs in its worker's thread

    def _forget(self, future: Future[Any]) -> None:
        with self._lock:
            self._futures.discard(future)


def cluster_jobs() -> int | None:
    """The n_jobs of the cluster joblib runs on (ClusterBackend), or None on any other backend."""
    active, _ = get_active_backend()
    return active.effective_n_jobs(-1) if isinstance(active, ClusterBackend) else None


@contextmanager
def cluster_failures(client: Client, where: str) -> Iterator[None]:
    """The block, with what the cluster of ``client`` (its scheduler at ``where``) cannot do turned
    into one line (RecordError): run a task whose workers all died running it, or go on without
    its scheduler (its futures cancelled, the client closing)."""
    from distributed.comm.core import CommClosedError
    from distributed.scheduler import KilledWorker

    try:
        yield
    except KilledWorker as error:
        raise RecordError(_given_up(error)) from None
    except (CancelledError, CommClosedError) as error:
        if client.status == "running":
            raise
        _close_quietly(client)
        reason = getattr(error, "reason", None) or str(error) or "its tasks were cancelled"
        raise RecordError(f"lost the dask scheduler {where}: {reason}; what was written is kept, run again to go on") from None


def _given_up(error: KilledWorker) -> str:
    deaths = error.allowed_failures + 1
    return (
        f"dask gave up a task after {deaths} worker{'s' if deaths > 1 else ''} died running it "
        f"(the last {getattr(error.last_worker, 'address', error.last_worker)}), most likely for lack of memory; "
        "what was written is kept, run again on workers with more memory"
    )


def _close_quietly(client: Client) -> None:
    """Close a client that lost its scheduler: its attempts to reconnect, cancelled as it
    closes, would log a traceback."""
    kept = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        client.close()  # type: ignore[no-untyped-call]
    finally:
        logging.disable(kept)


def _other_code(worker: str, here: str, there: str) -> str:
    return (
        f"the dask worker {worker} runs other engine or pipeline code than this modiar "
        f"(fingerprint {here[:SHOWN]} here, {there[:SHOWN]} there); {SAME_INSTALLATION}"
    )


def _said(error: BaseException) -> str:
    if type(error) is Exception and len(error.args) == 1:
        return str(error)  # the repr of an error dask could not send whole, as a worker's answer
    return f"{type(error).__name__}: {error}"
