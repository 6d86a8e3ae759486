"""A run on a real dask cluster (a ``dask scheduler`` and ``dask worker`` processes on loopback,
started and stopped by the tests): every worker runs this modiar's code or the run is refused
before any task; tasks run on the workers, however few; a worker that cannot load a task, or a
scheduler lost mid-run, ends the run in one line."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from joblib import Parallel, delayed
from polling import wait_until
from servers import DaskCluster, dask_cluster, project_copy
from study_configs import small_config, toml_text

from pipeline.cli import main
from pipeline.runs import cluster, workers
from pipeline.runs.paths import ROOT
from pipeline.runs.records import RecordError

pytest.importorskip("distributed")

ATLAS = 'name = "tiny"\n[grid]\nstones_per_pit = [2]\n'
STUDY = toml_text(small_config())
# MCTS games of about a tenth of a second, two a chunk: the run writes chunks for a few seconds
SLOW_STUDY = 'name = "slow"\nseed = 1\ngames_per_seat = 16\nchunk_games = 2\nstrategies = ["mcts(playouts=50)"]\n[rules]\n'
# the line of the published start value, and the same line off by one
START_VALUE = '"start_value": solution.start_value(),'
OFF_BY_ONE = '"start_value": solution.start_value() + 1,'


def modiar(*arguments: str, seconds: float = 120) -> subprocess.CompletedProcess[str]:
    """``modiar`` run as a process of its own (dask's threads would outlive a call in this one)."""
    command = [sys.executable, "-m", "pipeline.cli", *arguments, "--quiet"]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=seconds)


def config(folder: Path, text: str) -> str:
    path = folder / "config.toml"
    path.write_text(text)
    return str(path)


@pytest.fixture(scope="module")
def other_code(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DaskCluster, str]]:
    """A cluster of two workers, the second started from a copy of the project whose atlas
    publishes every start value off by one; and that worker's address."""
    folder = tmp_path_factory.mktemp("other-code")
    copy = project_copy(folder / "copy", "pipeline/atlas/analyse.py", START_VALUE, OFF_BY_ONE)
    with dask_cluster(folder, None, copy) as running:
        yield running, list(running.workers)[1]


@pytest.mark.parametrize("command", ["atlas", "study"])
def test_a_worker_running_other_code_is_refused_before_any_task(tmp_path, other_code, command):
    # Such a worker once published every start value off by one, sealed as engine 1.
    running, other = other_code
    text = ATLAS if command == "atlas" else STUDY
    out = tmp_path / "out"
    run = modiar(command, "run", config(tmp_path, text), "--out", str(out), "--backend", "dask", "--scheduler", running.address)
    assert run.returncode == 2, run.stderr
    fingerprint = cluster.code_fingerprint()[: cluster.SHOWN]
    assert run.stderr.startswith(
        f"modiar: error: the dask worker {other} runs other engine or pipeline code than this modiar "
        f"(fingerprint {fingerprint} here, "
    ), run.stderr
    assert run.stderr.endswith(" there); start it from the same installation\n") and run.stderr.count("\n") == 1, run.stderr
    assert not out.exists()  # no task ran: nothing written


def test_a_worker_that_cannot_tell_its_code_is_refused_before_any_task(tmp_path):
    copy = project_copy(tmp_path / "copy", "pipeline/runs/cluster.py", "def code_fingerprint(", "def older_fingerprint(")
    with dask_cluster(tmp_path, copy) as running:
        (mute,) = running.workers
        out = tmp_path / "out"
        study = config(tmp_path, STUDY)
        run = modiar("study", "run", study, "--out", str(out), "--backend", "dask", "--scheduler", running.address)
    assert run.returncode == 2, run.stderr
    assert run.stderr.startswith(f"modiar: error: the dask worker {mute} cannot run this modiar's code (AttributeError")
    assert run.stderr.endswith("; start it from the same installation\n") and run.stderr.count("\n") == 1, run.stderr
    assert not out.exists()


@pytest.fixture(scope="module")
def one_worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaskCluster]:
    """A cluster of one worker of one thread, this checkout's code."""
    with dask_cluster(tmp_path_factory.mktemp("one-worker"), None) as running:
        yield running


def test_tasks_run_on_a_cluster_of_one_single_thread_worker(one_worker):
    # joblib once ran every task inside modiar, the memory check trusting the worker's limit.
    with workers.backend("dask", one_worker.address, 1):
        pids = list(Parallel(n_jobs=workers.parallel_jobs(1))(delayed(os.getpid)() for _ in range(3)))
    (worker,) = one_worker.workers.values()
    assert pids == [worker.pid] * 3 != [os.getpid()] * 3


def test_a_worker_that_cannot_load_a_task_fails_the_run_in_one_line(tmp_path, monkeypatch, one_worker):
    # The worker once dropped its connection on the task it could not unpickle, and the run waited for ever.
    (tmp_path / "here_only.py").write_text("def task():\n    return 1\n")  # a module the worker does not have
    monkeypatch.syspath_prepend(str(tmp_path))
    import here_only

    def run() -> object:
        with workers.backend("dask", one_worker.address, 1):
            return list(Parallel(n_jobs=workers.parallel_jobs(1))(delayed(here_only.task)() for _ in range(2)))

    error = _within(run, 60)
    (worker,) = one_worker.workers
    assert isinstance(error, RecordError), error
    assert str(error) == (
        f"the dask worker {worker} could not load a task (ModuleNotFoundError: No module named 'here_only'); "
        "start it from the same installation"
    )
    assert one_worker.workers[worker].poll() is None  # the worker is still there for the next run


def test_a_worker_that_joins_with_other_code_runs_no_task(monkeypatch, one_worker):
    """The code is checked again by each task, on its worker: a worker that joined after the
    check (here, one whose code no longer matches the client's) refuses it."""
    with workers.backend("dask", one_worker.address, 1):
        monkeypatch.setattr(cluster, "code_fingerprint", lambda: "0" * 64)
        with pytest.raises(RecordError, match=r"^the dask worker tcp://127\.0\.0\.1:\d+ runs other engine or pipeline code"):
            list(Parallel(n_jobs=workers.parallel_jobs(1))(delayed(os.getpid)() for _ in range(2)))


def test_losing_the_scheduler_mid_run_is_one_line_and_keeps_what_was_written(tmp_path):
    out = tmp_path / "out"
    study = config(tmp_path, SLOW_STUDY)

    def chunks() -> list[Path]:
        return sorted((out / "games").glob("*.parquet")) if (out / "games").exists() else []

    with dask_cluster(tmp_path, None) as running:
        command = [sys.executable, "-m", "pipeline.cli", "study", "run", study, "--out", str(out), "--quiet"]
        command += ["--backend", "dask", "--scheduler", running.address]
        run = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert wait_until(lambda: bool(chunks()) or run.poll() is not None, 120), "no chunk written within 120 s"
            running.scheduler.kill()
            _, err = run.communicate(timeout=60)
        finally:
            run.kill()
            run.wait()
    assert run.returncode == 2, err
    assert err.startswith(f"modiar: error: lost the dask scheduler {running.address}: ") and err.count("\n") == 1, err
    written = {path: path.read_bytes() for path in chunks()}
    assert written
    assert main(["study", "run", study, "--out", str(out), "--jobs", "1", "--quiet"]) == 0  # resumed
    assert all(path.read_bytes() == data for path, data in written.items())
    assert len(chunks()) == 8


def _within(call: Callable[[], Any], seconds: float) -> object:
    """What ``call`` returned or raised, failing the test if it takes more than ``seconds``."""
    outcome: list[object] = []

    def target() -> None:
        try:
            outcome.append(call())
        except Exception as error:
            outcome.append(error)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"still running after {seconds:g} s")
    return outcome[0]


def test_a_task_whose_workers_die_is_one_line():
    """dask runs a task whose worker died on another, and gives up after allowed-failures more:
    a task that takes more memory than any worker has (here one that ends its worker)."""
    import dask
    from distributed import LocalCluster

    with (
        dask.config.set({"distributed.scheduler.allowed-failures": 0}),
        LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=":0") as local,
        pytest.raises(RecordError) as refused,
        workers.backend("dask", local.scheduler_address, 1),
    ):
        list(Parallel(n_jobs=workers.parallel_jobs(1))(delayed(os._exit)(1) for _ in range(2)))
    assert re.fullmatch(
        r"dask gave up a task after 1 worker died running it \(the last tcp://127\.0\.0\.1:\d+\), most likely for lack of "
        r"memory; what was written is kept, run again on workers with more memory",
        str(refused.value),
    ), refused.value


def test_a_scheduler_without_workers_is_one_line(tmp_path):
    """joblib would wait for a worker without end; the run waits CONNECT_SECONDS (1 here)."""
    with dask_cluster(tmp_path) as running:
        out = tmp_path / "out"
        code = (
            "import sys, pipeline.runs.workers, pipeline.cli; pipeline.runs.workers.CONNECT_SECONDS = 1; "
            "sys.exit(pipeline.cli.main())"
        )
        command = [sys.executable, "-c", code, "study", "run", config(tmp_path, STUDY), "--out", str(out), "--quiet"]
        run = subprocess.run(
            [*command, "--backend", "dask", "--scheduler", running.address], cwd=ROOT, capture_output=True, text=True, timeout=60
        )
    assert run.returncode == 2, run.stderr
    assert (
        run.stderr
        == f"modiar: error: the dask scheduler {running.address} has no worker (none within 1 s); start workers first\n"
    )
    assert not out.exists()
