"""The processes that play a study's games: joblib's loky workers on this machine, or a dask cluster.

A mistake here ends in one line (RecordError) before any game, not in a hang or a machine out
of memory: a scheduler address that is not a dask address (check_scheduler), a scheduler that
gives no dask answer within CONNECT_SECONDS (backend), more workers than this machine's memory
holds (check_jobs), a dask worker whose engine or pipeline code is not this process's
(pipeline.runs.cluster). And a worker ends with the process that started it (exit_with_parent): a
killed ``modiar study run`` leaves no worker behind. On a dask cluster the tasks run on its
workers however few they are (parallel_jobs), and a lost scheduler is one line too.
"""

from __future__ import annotations

import multiprocessing
import os
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from joblib import parallel_config

from pipeline.runs.cluster import ClusterBackend, check_code, cluster_failures, cluster_jobs
from pipeline.runs.costs import COSTS
from pipeline.runs.extras import MissingExtraError, require
from pipeline.runs.records import RecordError

if TYPE_CHECKING:
    from distributed import Client

BACKENDS = ("loky", "dask")
CONNECT_SECONDS = 10.0  # how long a dask scheduler has to answer: connection and handshake together
SCHEDULER_SCHEMES = ("tcp", "tls")  # tls:// takes its certificates from dask's configuration (distributed.comm.tls)
PARENT_POLL_SECONDS = 0.5  # how often a worker checks that its parent is alive

# host:port, the host a name, an IPv4 address or a bracketed IPv6 address, as dask writes them
_HOST_PORT = re.compile(r"(?:[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\]):(\d{1,5})")
_watching: int | None = None  # the pid of the process whose parent is watched (a forked copy watches nothing)


@contextmanager
def backend(name: str, scheduler: str | None, jobs: int) -> Iterator[None]:
    """joblib's loky backend, its workers ending with this process; or a dask cluster
    (pipeline.runs.cluster.ClusterBackend) on the scheduler given (checked, and given CONNECT_SECONDS
    to answer and to have a worker), else on a local cluster of ``jobs`` workers, every worker's
    code checked. Raises RecordError, having started nothing, when that cannot be; and, on dask,
    when the cluster fails the block's tasks (cluster_failures)."""
    check_backend(name)
    if name == "loky":
        with parallel_config(backend="loky", initializer=exit_with_parent):
            yield
        return
    client = _local_cluster(jobs) if scheduler is None else connect(scheduler)
    where = scheduler or "of the local cluster"
    with client, parallel_config(backend=ClusterBackend(client)):
        check_code(client, where, CONNECT_SECONDS)
        with cluster_failures(client, where):
            yield


def parallel_jobs(jobs: int) -> int:
    """The n_jobs to give joblib.Parallel for ``jobs`` workers: ``jobs`` on loky; on a dask cluster
    (backend), its threads and at least 2, for joblib runs the tasks of one job in this process,
    never on the cluster."""
    return cluster_jobs() or jobs


def check_backend(name: str) -> None:
    """Refuse (RecordError) a backend joblib is not given here, and dask when dask.distributed
    (the extra modiar-lab[dask]) is not installed."""
    if name not in BACKENDS:
        raise RecordError(f"unknown backend {name!r}; use one of {', '.join(BACKENDS)}")
    if name == "dask":
        try:
            require("dask", "--backend dask")
        except MissingExtraError as error:
            raise RecordError(str(error)) from None


def check_scheduler(address: str) -> None:
    """Refuse (RecordError) an address that is not a dask scheduler's: tcp://HOST:PORT, HOST:PORT or
    tls://HOST:PORT. An inproc:// address names a scheduler inside this very process (a test's
    LocalCluster(processes=False)), so it passes only with this process's id in it."""
    scheme, separator, location = address.rpartition("://")
    scheme = scheme if separator else "tcp"
    if scheme in SCHEDULER_SCHEMES and _is_host_port(location):
        return
    if scheme == "inproc" and _in_this_process(location):
        return
    raise RecordError(
        f"--scheduler takes a dask scheduler address, tcp://HOST:PORT (or HOST:PORT, or tls://HOST:PORT), not {address!r}"
    )


def connect(address: str) -> Client:
    """A dask client of the scheduler at ``address`` (checked first), or RecordError when it gives
    no dask answer within CONNECT_SECONDS. dask bounds the connection by its timeout but then
    waits for the scheduler's handshake without end, forever on a server that is not dask: so the
    client starts in a thread, given up after CONNECT_SECONDS and closed should it start later."""
    check_scheduler(address)
    seconds = CONNECT_SECONDS
    # dask's own timeout runs a little longer, so that every kind of silence gets the same message
    start = _ClientStart(address, seconds + 1)
    answer = start.wait(seconds)
    if answer is None:
        raise RecordError(f"cannot reach the dask scheduler {address!r}: no dask answer within {seconds:g} s")
    if isinstance(answer, (OSError, TypeError)):  # TypeError: tls:// without certificates in dask's configuration
        raise RecordError(f"cannot reach the dask scheduler {address!r}: {answer}") from None
    if isinstance(answer, Exception):
        # A server of another kind that speaks first (an SSH banner, an HTTP response): dask reads
        # its first bytes as a frame length and fails, e.g. allocating 2.82 EiB for "SSH-2.0-".
        raise RecordError(
            f"{address} did not answer as a dask scheduler: what it sent is no dask message; is it the scheduler's port?"
        ) from None
    if isinstance(answer, BaseException):
        raise answer
    return answer


def check_jobs(jobs: int) -> None:
    """Refuse (RecordError) more workers than this machine's memory holds, at a study worker's
    peak (COSTS.study_worker_bytes) each. Only for workers on this machine (loky, or dask's local
    cluster), not for a scheduler's."""
    worker = COSTS.study_worker_bytes
    needed, memory = jobs * worker, memory_bytes()
    if needed > memory:
        raise RecordError(
            f"--jobs {jobs} needs about {needed / 2**30:.0f} GB ({worker >> 20} MB a worker) "
            f"and this machine has {memory / 2**30:.0f} GB; use --jobs {max(1, memory // worker)} or fewer"
        )


def memory_bytes() -> int:
    """This machine's physical memory."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def exit_with_parent() -> None:
    """End this worker process within about PARENT_POLL_SECONDS of the end of the process that
    started it. Without this, loky workers outlive a killed or terminated ``modiar study run`` by
    minutes: they play the chunks already sent, then wait out loky's 300 s idle timeout, holding
    their memory and the parent's stdout and stderr, and keeping loky's resource trackers alive
    (those end, having removed the run's semaphores and shared-memory folders, with the last worker).

    Idempotent (one watching thread a process), and nothing in the main process, where joblib
    plays with one job and dask's local threads run.
    """
    global _watching
    parent = multiprocessing.parent_process()
    if parent is None or parent.pid is None or _watching == os.getpid():
        return
    _watching = os.getpid()
    threading.Thread(target=_watch_parent, args=(parent.pid,), daemon=True, name="exit with parent").start()


def _watch_parent(parent: int) -> None:
    # An orphan is adopted by init or a subreaper, so its parent's pid changes. The pid comes from
    # multiprocessing, not os.getppid(), so that a parent gone before the first call counts too.
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_SECONDS)
    os._exit(1)  # not sys.exit: that ends this thread only, and the cleanup would wait on the dead parent's pipes


def _is_host_port(location: str) -> bool:
    match = _HOST_PORT.fullmatch(location)
    return match is not None and 1 <= int(match[1]) <= 65535


def _in_this_process(location: str) -> bool:
    """dask's inproc addresses read IP/PID/NUMBER."""
    return location.split("/")[1:2] == [str(os.getpid())]


def _local_cluster(jobs: int) -> Client:
    from distributed import Client

    return Client(n_workers=jobs, threads_per_worker=1)  # type: ignore[no-untyped-call]


class _ClientStart:
    """A dask client starting in a daemon thread, which the caller may stop waiting for."""

    def __init__(self, address: str, seconds: float) -> None:
        self._answer: Client | BaseException | None = None
        self._given_up = False
        self._lock = threading.Lock()
        self._done = threading.Event()
        threading.Thread(target=self._start, args=(address, seconds), daemon=True, name="dask connect").start()

    def wait(self, seconds: float) -> Client | BaseException | None:
        """The client, or what its start raised; None (and the client given up) after ``seconds``."""
        self._done.wait(seconds)
        with self._lock:
            self._given_up = self._answer is None
            return self._answer

    def _start(self, address: str, seconds: float) -> None:
        from distributed import Client

        answer: Client | BaseException
        try:
            # The default client on purpose: dask's exit handler closes that one, even when it failed
            # to start, while its event loop still runs. Any other client that failed is closed only
            # as the interpreter ends, after twice its timeout and with a traceback.
            answer = Client(address, timeout=seconds)  # type: ignore[no-untyped-call]
        except Exception as error:
            answer = error
        with self._lock:
            self._answer, late = answer, self._given_up
        self._done.set()
        if late and isinstance(answer, Client):
            answer.close()  # type: ignore[no-untyped-call]


def keep_caches_loaded() -> None:
    """loky restarts a worker whose memory has grown 300 MB since its first task, taking that
    for a leak; a worker here means to keep the position tables and the solution loaded, and
    restarting it would only load them again. The limit is a private loky setting, so it is
    raised only where it exists."""
    try:
        from joblib.externals.loky import process_executor
    except ImportError:
        return
    if hasattr(process_executor, "_MAX_MEMORY_LEAK_SIZE"):
        process_executor._MAX_MEMORY_LEAK_SIZE = max(process_executor._MAX_MEMORY_LEAK_SIZE, 16 << 30)
