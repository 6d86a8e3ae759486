"""Workers: they end with the process that started them; a bad scheduler or too many jobs is one line."""

from __future__ import annotations

import contextlib
import http.server
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator

import psutil
import pytest
from joblib import Parallel, delayed
from polling import wait_until
from servers import speaking_first

from pipeline.cli import main
from pipeline.runs import cluster, workers
from pipeline.runs.costs import COSTS
from pipeline.runs.paths import ROOT, STUDIES
from pipeline.runs.records import RecordError

# MCTS games take about 0.2 s each: this study plays for over 30 s on two workers.
SLOW_STUDY = """
name = "slow"
seed = 1
games_per_seat = 400
strategies = ["mcts(playouts=400)"]

[rules]
"""


def gone(process: psutil.Process) -> bool:
    """Ended: a zombie holds no memory and no files, only its exit status for a parent that may be gone."""
    try:
        return process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.fixture
def session() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Processes started in sessions of their own, whose process groups are killed whatever happens."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()


# ---------------------------------------------------------------------------------------------
# Workers end with their parent


@pytest.mark.parametrize("kill", [signal.SIGKILL, signal.SIGTERM], ids=["kill -9", "SIGTERM"])
def test_loky_workers_end_with_a_killed_study_run(tmp_path, session, kill):
    # Regression: the two loky workers and their resource trackers outlived a killed 'modiar study
    # run' by 370 s (the chunks already sent, then loky's idle timeout), holding its stdout and stderr.
    config = tmp_path / "slow.toml"
    config.write_text(SLOW_STUDY)
    command = [sys.executable, "-m", "pipeline.cli", "study", "run", str(config), "--out", str(tmp_path / "out"), "--jobs", "2"]
    run = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    session.append(run)
    parent = psutil.Process(run.pid)
    assert wait_until(lambda: len(loky_workers(parent)) == 2, 60), "no loky workers within 60 s"
    busy = loky_workers(parent)
    assert wait_until(lambda: all(_cpu_seconds(worker) > 0.3 for worker in busy), 60), "the workers never started a chunk"
    children = parent.children(recursive=True)
    run.send_signal(kill)
    try:
        run.communicate(timeout=5)  # its stdout and stderr closed: no worker or tracker holds them
    except subprocess.TimeoutExpired:
        pytest.fail("5 s after the run was killed, its workers still hold its stdout and stderr")
    assert wait_until(lambda: all(map(gone, children)), 5), [child.cmdline() for child in children if not gone(child)]


def _cpu_seconds(process: psutil.Process) -> float:
    """The CPU time a process has used (its first chunk under way once it is a fraction of a second)."""
    try:
        times = process.cpu_times()
    except psutil.Error:
        return 0.0
    return float(times.user + times.system)


def loky_workers(parent: psutil.Process) -> list[psutil.Process]:
    try:
        return [child for child in parent.children(recursive=True) if "LokyProcess" in " ".join(child.cmdline())]
    except psutil.Error:
        return []


def test_a_worker_ends_with_its_parent(session):
    """Its watching thread sees the parent gone (every PARENT_POLL_SECONDS) and ends the worker:
    the test waits for that exit, the event itself, not for a time."""
    parent_code = textwrap.dedent("""
        import multiprocessing, os, threading, time
        from pipeline.runs.workers import exit_with_parent

        def worker():
            exit_with_parent()
            exit_with_parent()
            watchers = sum(thread.name == "exit with parent" for thread in threading.enumerate())
            print(os.getpid(), watchers, flush=True)
            time.sleep(60)

        multiprocessing.get_context("fork").Process(target=worker).start()
        time.sleep(60)
    """)
    run = subprocess.Popen([sys.executable, "-c", parent_code], cwd=ROOT, stdout=subprocess.PIPE, start_new_session=True)
    session.append(run)
    assert run.stdout is not None
    pid, watchers = map(int, run.stdout.readline().split())
    assert watchers == 1  # one watching thread, however often it is asked
    worker = psutil.Process(pid)
    run.kill()
    try:
        worker.wait(timeout=30)  # the worker's exit; the timeout only keeps a failure from hanging
    except psutil.TimeoutExpired:
        pytest.fail("the worker outlived its parent by 30 s")


def test_the_main_process_is_never_watched():
    workers.exit_with_parent()  # joblib plays here with one job, and dask's threads of a local cluster
    assert not any(thread.name == "exit with parent" for thread in threading.enumerate())


def test_loky_workers_watch_their_parent_before_their_first_task():
    with workers.backend("loky", None, 2):
        names = Parallel(n_jobs=2)(delayed(lambda: [thread.name for thread in threading.enumerate()])() for _ in range(2))
    assert all("exit with parent" in thread_names for thread_names in names)


# ---------------------------------------------------------------------------------------------
# Scheduler addresses


@pytest.mark.parametrize(
    "address", ["tcp://127.0.0.1:8786", "127.0.0.1:8786", "tls://scheduler.example.org:8786", "[::1]:8786", "localhost:1"]
)
def test_dask_addresses_pass(address):
    workers.check_scheduler(address)


def test_an_inproc_address_passes_only_in_its_own_process():
    workers.check_scheduler(f"inproc://192.0.2.2/{os.getpid()}/1")
    with pytest.raises(RecordError):
        workers.check_scheduler(f"inproc://192.0.2.2/{os.getpid() + 1}/1")


@pytest.mark.parametrize(
    "address", ["foo", "inproc://x", "", "tcp://", "127.0.0.1", "127.0.0.1:0", "host:65536", "ucx://h:1", "tcp://h:1/x", "://h:1"]
)
def test_other_addresses_are_refused(address):
    with pytest.raises(RecordError, match=r"^--scheduler takes a dask scheduler address, tcp://HOST:PORT .*, not "):
        workers.check_scheduler(address)


@pytest.mark.parametrize("address", ["foo", "inproc://x", ""])
def test_modiar_refuses_a_scheduler_that_is_no_dask_address_in_one_line(tmp_path, capsys, address):
    arguments = ["study", "run", str(STUDIES / "smoke.toml"), "--out", str(tmp_path / "out"), "--quiet"]
    assert main([*arguments, "--backend", "dask", "--scheduler", address]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"not {address!r}" in err and "tcp://HOST:PORT" in err
    assert not (tmp_path / "out").exists()
    assert main([*arguments, "--scheduler", address]) == 2
    assert "--scheduler goes with --backend dask" in capsys.readouterr().err


class Silent(http.server.BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def http_server() -> Iterator[str]:
    """The address of a web server on this machine: it answers, but not as dask."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Silent)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_scheduler_that_answers_but_not_as_dask_is_given_up_in_one_line(tmp_path, http_server, session):
    # Regression: dask waits for a scheduler's handshake without end, and this hung with no output.
    arguments = ["study", "run", str(STUDIES / "smoke.toml"), "--out", str(tmp_path / "out"), "--backend", "dask"]
    code = (
        "import sys, pipeline.runs.workers, pipeline.cli; pipeline.runs.workers.CONNECT_SECONDS = 1; "
        "sys.exit(pipeline.cli.main())"
    )
    command = [sys.executable, "-c", code, *arguments, "--scheduler", http_server]
    run = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    session.append(run)
    _, err = run.communicate(timeout=30)  # it ends: given up after CONNECT_SECONDS, not hanging on the handshake
    assert run.returncode == 2
    assert err.decode() == f"modiar: error: cannot reach the dask scheduler {http_server!r}: no dask answer within 1 s\n"
    assert not (tmp_path / "out").exists()


BANNERS = [b"SSH-2.0-OpenSSH_9.0\r\n", b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"]


@pytest.fixture(params=BANNERS, ids=["ssh", "http"])
def speaks_first(request) -> Iterator[str]:
    """The address of a server on this machine that writes first (an SSH banner, an HTTP response)."""
    with speaking_first(request.param) as address:
        yield address


@pytest.mark.parametrize("command", ["study", "atlas"])
def test_a_scheduler_address_that_speaks_first_is_one_line_not_an_allocation_of_exbibytes(
    tmp_path, speaks_first, session, command
):
    """dask once read "SSH-2.0-" as a frame length and ended study run and atlas run in
    ArrayMemoryError: Unable to allocate 2.82 EiB."""
    config = STUDIES / "smoke.toml"
    if command == "atlas":
        config = tmp_path / "tiny.toml"
        config.write_text('name = "tiny"\n[grid]\nstones_per_pit = [2]\n')
    arguments = [command, "run", str(config), "--out", str(tmp_path / "out"), "--backend", "dask", "--quiet"]
    run = subprocess.Popen(
        [sys.executable, "-m", "pipeline.cli", *arguments, "--scheduler", speaks_first],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    session.append(run)
    _, err = run.communicate(timeout=60)
    assert run.returncode == 2, err.decode()
    assert err.decode() == (
        f"modiar: error: {speaks_first} did not answer as a dask scheduler: what it sent is no dask message; "
        "is it the scheduler's port?\n"
    )
    assert not (tmp_path / "out").exists()  # a failed start leaves nothing


def test_an_unknown_backend_is_refused():
    with pytest.raises(RecordError, match="unknown backend 'spark'; use one of loky, dask"), workers.backend("spark", None, 1):
        pass


# ---------------------------------------------------------------------------------------------
# Jobs


def test_more_jobs_than_memory_are_refused_with_the_estimate(monkeypatch):
    monkeypatch.setattr(workers, "memory_bytes", lambda: 24 << 30)
    workers.check_jobs(2)
    workers.check_jobs(35)  # 23.9 GB
    with pytest.raises(RecordError) as refused:
        workers.check_jobs(200)
    assert str(refused.value) == (
        "--jobs 200 needs about 137 GB (700 MB a worker) and this machine has 24 GB; use --jobs 35 or fewer"
    )


def test_this_machine_takes_one_job_and_not_a_million():
    assert workers.memory_bytes() > COSTS.study_worker_bytes
    workers.check_jobs(1)
    with pytest.raises(RecordError, match=r"^--jobs 1000000 needs about \d+ GB"):
        workers.check_jobs(1_000_000)


def test_the_runner_uses_these_workers():
    from pipeline.study import run as runner

    assert runner._backend is workers.backend and runner.check_backend is workers.check_backend


def test_parallel_jobs_are_the_jobs_asked_off_a_dask_cluster():
    with workers.backend("loky", None, 3):
        assert workers.parallel_jobs(3) == 3
    assert workers.parallel_jobs(1) == 1  # joblib's sequential path, in this process: meant here


def test_the_code_fingerprint_is_the_sources_not_where_they_are_installed(tmp_path):
    """A worker on another machine has the project in another folder: same sources, same fingerprint."""
    for package in ("engine", "pipeline"):
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    code = "from pipeline.runs.cluster import code_fingerprint; print(code_fingerprint())"

    def fingerprint() -> str:
        environment = {**os.environ, "PYTHONPATH": str(tmp_path)}
        run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=environment, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        return run.stdout.strip()

    assert fingerprint() == cluster.code_fingerprint()
    rules = tmp_path / "engine" / "game" / "rules.py"
    rules.write_text(rules.read_text() + "\n")
    assert fingerprint() != cluster.code_fingerprint()
