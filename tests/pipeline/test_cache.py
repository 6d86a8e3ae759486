"""``modiar cache show`` and ``modiar cache clear`` (pipeline.cache): where the cache
folder is and what it holds; emptied only with --yes (or a yes at a terminal), only when it holds
nothing but a cache's files, and not while a process writes to it."""

from __future__ import annotations

import io
import os
import re
import socket
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import engine
import pipeline.cache
from engine.store.integrity import write_arrays, write_json
from pipeline.cli import main
from pipeline.estimates import size
from pipeline.runs.paths import ROOT

# A cache of each kind, as the engine and pipeline.exact.cache name their files (bytes: about their size).
FILES = {
    "tables/modiar-stones2-engine1.npz": 3000,
    "solutions/modiar-stones2-cap400-engine1.npz": 2000,
    "policies/modiar-stones2-greedy-engine1.npz": 500,
    "policies/modiar-stones2-perfect-engine1.npz": 500,
    "exact/modiar-stones2-random-random-a846940b2dbf-engine1.json": 40,
    "search/modiar-stones2-mcts-playouts-1-random-0123456789ab-engine1.json": 40,
}
HALF_WRITTEN = b"PK\x03\x04\x14\x00"  # what a writer of an .npz killed mid-write leaves


def made(folder: Path, files: dict[str, int]) -> Path:
    """``files`` in ``folder``, sealed as the engine seals its kind's (engine.store.integrity), a
    temporary file half written; a name that is no cache file's holds that many bytes of text."""
    for name, n_bytes in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        identity = {"rules": "modiar-stones2", "engine": 1}
        if path.suffix == ".npz" and "-engine" in path.name and not path.name.startswith("."):
            write_arrays(path, {"padding": np.zeros(n_bytes, np.uint8)}, {**identity, "kind": path.parent.name})
        elif path.suffix == ".json" and "-engine" in path.name:
            write_json(path, {"padding": "x" * n_bytes}, identity)
        elif ".tmp-" in path.name:
            path.write_bytes(HALF_WRITTEN)
        else:
            path.write_bytes(b"x" * n_bytes)
    return folder


def snapshot(folder: Path) -> dict[str, int]:
    return {str(path.relative_to(folder)): path.lstat().st_size for path in sorted(folder.rglob("*"))}


def described(folder: Path) -> str:
    """What ``modiar cache clear`` says it removes from ``folder``: its files, their size."""
    files = [path for path in folder.rglob("*") if path.is_file()]
    n_bytes = sum(path.stat().st_size for path in files)
    return f"{len(files)} files, {n_bytes:,} B" if n_bytes < 1024 else f"{len(files)} files, {size(n_bytes)}"


def ended_pid() -> int:
    """The pid of a process that has ended."""
    return int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, check=True).stdout)


def shown(folder: Path) -> str:
    """How ``modiar cache show`` gives the files under ``folder`` and their size."""
    files = [path for path in folder.rglob("*") if path.is_file()] if folder.is_dir() else []
    n_bytes = sum(path.stat().st_size for path in files)
    return f"{len(files):,} {n_bytes:,} B" if n_bytes < 1024 else f"{len(files):,} {size(n_bytes)}"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(autouse=True)
def no_terminal(monkeypatch: pytest.MonkeyPatch, cache: Path) -> None:
    """No terminal on stdin; and the engine's cache folder, which main() sets, set back afterwards (the cache fixture)."""
    monkeypatch.setattr("sys.stdin", io.StringIO(""))


def test_show_of_a_missing_cache_says_nothing_is_cached_and_makes_no_folder(tmp_path, capsys):
    code, out, _ = run(capsys, "cache", "show", "--cache", str(tmp_path / "none"))
    assert code == 0 and out == f"cache folder {tmp_path / 'none'} (from --cache): not there yet, nothing cached\n"
    assert not (tmp_path / "none").exists()


def test_show_gives_each_kind_its_files_and_size_and_names_where_the_folder_comes_from(tmp_path, capsys, monkeypatch):
    cache = made(tmp_path / "cache", FILES)
    monkeypatch.setenv("MODIAR_CACHE", str(cache))
    code, out, _ = run(capsys, "cache", "show")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"cache folder {cache} (from $MODIAR_CACHE)"
    rows = {line.split()[0]: " ".join(line.split()[1:]) for line in lines[2:-1]}
    kinds = {"tables", "solutions", "policies", "exact", "search", "scratch"}
    assert rows == {kind: shown(cache / kind) for kind in kinds} | {"total": shown(cache)}
    assert lines[-1].startswith("modiar cache clear empties it")
    (cache / "notes.txt").write_text("mine")
    code, out, _ = run(capsys, "cache", "show", "--cache", str(cache))
    assert "notes.txt (not modiar's)" in out and out.splitlines()[-1].endswith("modiar cache clear refuses this folder")


def test_clear_with_yes_empties_the_cache_and_keeps_its_folder(tmp_path, capsys):
    cache = made(tmp_path / "cache", FILES)
    stale = cache / "tables" / f".modiar-engine1.npz.tmp-{ended_pid()}"  # a writer killed mid-write
    stale.write_bytes(HALF_WRITTEN)
    task = cache / "scratch" / f"atlas-{socket.gethostname()}-{ended_pid()}-abc_12"  # an atlas task killed
    made(task, {"tables/modiar-stones3-engine1.npz": 10})
    removed = described(cache)
    code, out, err = run(capsys, "cache", "clear", "--cache", str(cache), "--yes")
    assert code == 0, err
    assert out == f"removed {removed} from the cache folder {cache}\n"
    assert cache.is_dir() and list(cache.iterdir()) == []
    again = run(capsys, "cache", "clear", "--cache", str(cache), "--yes")
    assert again == (0, f"the cache folder {cache} holds nothing: nothing to clear\n", "")


def test_clear_of_the_files_the_engine_and_pipeline_write_empties_the_cache(tmp_path, capsys):
    engine.release_caches()  # a solution an earlier test kept in memory would not be written to this cache
    cache = tmp_path / "cache"
    (tmp_path / "ladder.toml").write_text('name = "small"\nrungs = ["random", "perfect"]\n[rules]\nstones_per_pit = 2\n')
    argv = ["ladder", "run", str(tmp_path / "ladder.toml"), "--out", str(tmp_path / "ladder"), "--jobs", "1", "--quiet"]
    assert main([*argv, "--cache", str(cache)]) == 0
    assert {path.name for path in cache.iterdir()} == {"tables", "solutions", "policies", "exact"}
    files = sum(path.is_file() for path in cache.rglob("*"))
    capsys.readouterr()
    code, out, err = run(capsys, "cache", "clear", "--cache", str(cache), "--yes")
    assert code == 0 and out.startswith(f"removed {files} files"), out + err
    assert list(cache.iterdir()) == []


@pytest.mark.parametrize(
    "intruder",
    ["notes.txt", "photos/cat.jpg", "tables/notes.txt", "exact/x-engine1.npz", "scratch/atlas/x", "tables/deep/x-engine1.npz"],
)
def test_clear_refuses_a_folder_that_is_not_a_cache_and_leaves_it_intact(tmp_path, capsys, intruder):
    folder = made(tmp_path / "folder", {**FILES, intruder: 10})
    before = snapshot(folder)
    code, out, err = run(capsys, "cache", "clear", "--cache", str(folder), "--yes")
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith(f"modiar: error: {folder} does not look like a modiar cache: it holds {folder}/")
    assert snapshot(folder) == before


def test_clear_never_follows_a_symbolic_link(tmp_path, capsys):
    elsewhere = made(tmp_path / "elsewhere", {"tables/modiar-engine1.npz": 10})
    cache = made(tmp_path / "cache", FILES)
    (cache / "tables" / "modiar-stones4-engine1.npz").symlink_to(elsewhere / "tables" / "modiar-engine1.npz")
    (cache / "scratch").symlink_to(elsewhere)
    before = snapshot(tmp_path)
    assert run(capsys, "cache", "clear", "--cache", str(cache), "--yes")[0] == 2
    assert snapshot(tmp_path) == before


def test_clear_without_yes_and_no_terminal_refuses_in_one_line(tmp_path, capsys):
    cache = made(tmp_path / "cache", FILES)
    before = snapshot(cache)
    code, out, err = run(capsys, "cache", "clear", "--cache", str(cache))
    assert code == 2 and out == ""
    assert err == f"modiar: error: modiar cache clear would remove {described(cache)} from {cache}: add --yes to remove them\n"
    assert snapshot(cache) == before


@pytest.mark.parametrize(("answer", "removed"), [("y\n", True), ("n\n", False), ("\n", False), ("", False)])
def test_clear_at_a_terminal_asks(tmp_path, capsys, monkeypatch, answer, removed):
    cache = made(tmp_path / "cache", FILES)
    terminal = io.StringIO(answer)
    terminal.isatty = lambda: True  # type: ignore[method-assign]
    monkeypatch.setattr("sys.stdin", terminal)
    files = described(cache)
    code, out, _ = run(capsys, "cache", "clear", "--cache", str(cache))
    assert code == 0 and out.startswith(f"remove {files} from the cache folder {cache}? [y/N] ")
    assert out.endswith(f"removed {files} from the cache folder {cache}\n" if removed else "nothing removed\n")
    assert (list(cache.iterdir()) == []) == removed


@pytest.mark.parametrize(
    "writing",
    [
        f"tables/.modiar-stones3-engine1.npz.tmp-{os.getpid()}",
        f"scratch/atlas-{socket.gethostname()}-{os.getpid()}-abc/tables/modiar-stones3-engine1.npz",
        "scratch/atlas-another-machine-12-abc/tables/modiar-stones3-engine1.npz",
    ],
    ids=["a file being written", "a running atlas task", "another machine's atlas task"],
)
def test_clear_refuses_a_cache_being_written(tmp_path, capsys, writing):
    cache = made(tmp_path / "cache", {**FILES, writing: 10})
    before = snapshot(cache)
    code, _, err = run(capsys, "cache", "clear", "--cache", str(cache), "--yes")
    assert code == 2 and err.count("\n") == 1 and re.match(rf"modiar: error: the cache {cache} is in use: ", err), err
    assert snapshot(cache) == before


@pytest.mark.parametrize("pid", ["99999999999999999999", "0"], ids=["beyond any pid", "pid 0"])
@pytest.mark.parametrize(
    "left",
    ["tables/.modiar-stones3-engine1.npz.tmp-{pid}", "scratch/atlas-{host}-{pid}-x/tables/modiar-stones3-engine1.npz"],
    ids=["a temporary file", "an atlas task's scratch folder"],
)
def test_a_writer_whose_pid_no_process_can_have_is_gone_to_show_and_clear(tmp_path, capsys, pid, left):
    """Pid 0 (to os.kill, the caller's own process group) and a number beyond any pid (beyond a
    C long) name no running writer: what they left is stale, listed by show and removed by clear."""
    cache = made(tmp_path / "cache", FILES)
    name = left.format(pid=pid, host=socket.gethostname())
    made(cache, {name: 10})
    code, out, err = run(capsys, "cache", "show", "--cache", str(cache))
    assert code == 0 and out.endswith("modiar cache clear empties it; what a command needs is built again\n"), err
    removed = described(cache)
    assert run(capsys, "cache", "clear", "--cache", str(cache), "--yes") == (
        0,
        f"removed {removed} from the cache folder {cache}\n",
        "",
    )
    assert list(cache.iterdir()) == []


def test_a_writer_named_by_a_threads_id_is_gone_to_clear(tmp_path, capsys):
    """Linux's kill takes a thread's id as well as a process's: a temporary file named by the id of
    a live thread (a thread of this very process here; on a shared machine, any process's) names no
    running writer, and is cleared, not taken for a writer forever."""
    cache = made(tmp_path / "cache", FILES)
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        made(cache, {f"tables/.modiar-stones3-engine1.npz.tmp-{thread.native_id}": 10})
        code, out, err = run(capsys, "cache", "clear", "--cache", str(cache), "--yes")
    finally:
        stop.set()
        thread.join()
    assert code == 0 and out.startswith("removed ") and list(cache.iterdir()) == [], err


def test_clear_empties_the_cache_a_search_ladder_filled(tmp_path, capsys):
    cache, config = tmp_path / "cache", tmp_path / "search.toml"
    config.write_text(
        'name = "small"\nseed = 1\nplayouts = [1]\nround_games = 100\nplayout_budget = 200\n[rules]\nstones_per_pit = 2\n'
    )
    argv = ["ladder", "search", str(config), "--out", str(tmp_path / "ladder"), "--jobs", "1", "--quiet", "--cache", str(cache)]
    assert main(argv) == 0
    assert (cache / "search").is_dir()
    capsys.readouterr()
    code, out, _ = run(capsys, "cache", "show", "--cache", str(cache))
    assert (
        code == 0
        and "not modiar's" not in out
        and out.endswith("modiar cache clear empties it; what a command needs is built again\n")
    )
    removed = described(cache)
    assert run(capsys, "cache", "clear", "--cache", str(cache), "--yes") == (
        0,
        f"removed {removed} from the cache folder {cache}\n",
        "",
    )
    assert list(cache.iterdir()) == []


@pytest.mark.parametrize(
    "users",
    ["exact/budget-engine2024.json", "tables/modiar-stones9-engine1.npz", "tables/.notes-engine1.npz.tmp-12"],
    ids=["a JSON file", "an npz file", "a temporary file's name"],
)
def test_clear_removes_nothing_when_a_file_named_as_modiars_carries_no_seal_of_modiars(tmp_path, capsys, users):
    cache = made(tmp_path / "cache", FILES)
    (cache / users).write_text('{"budget": 2024}\n')
    before = snapshot(cache)
    code, out, err = run(capsys, "cache", "clear", "--cache", str(cache), "--yes")
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith(f"modiar: error: {cache} does not look like a modiar cache: it holds {cache / users}, ")
    assert "nothing removed" in err and snapshot(cache) == before
    code, out, _ = run(capsys, "cache", "show", "--cache", str(cache))
    assert code == 0 and out.splitlines()[-1].startswith(f"1 of its entries are not modiar's (e.g. {cache / users})")


@pytest.mark.parametrize("when", ["after the check", "at the first removal"])
def test_clear_removes_nothing_through_a_folder_swapped_for_a_link(tmp_path, monkeypatch, when):
    """tables/ swapped for a link to another folder holding files of the same names, between
    clear's check and its removals: the other folder's files stay."""
    cache = made(tmp_path / "cache", FILES)
    elsewhere = made(tmp_path / "elsewhere", {name: 10 for name in FILES if name.startswith("tables/")})
    before = snapshot(elsewhere)

    def swap() -> None:
        (cache / "tables").rename(tmp_path / "moved")
        (cache / "tables").symlink_to(elsewhere / "tables")

    found = pipeline.cache.check(cache)
    if when == "after the check":
        swap()
    else:
        unlink = os.unlink

        def swapping(*args, **kwargs):
            if not (cache / "tables").is_symlink():
                swap()
            return unlink(*args, **kwargs)

        monkeypatch.setattr(os, "unlink", swapping)
    pipeline.cache.clear(found)
    monkeypatch.undo()
    assert snapshot(elsewhere) == before and (cache / "tables").is_symlink()


def test_make_clean_says_where_the_cache_folder_is_and_how_to_see_and_clear_it(tmp_path):
    """Run in a folder of its own (its .venv is an empty folder), asking the tests' python where the cache is."""
    (tmp_path / ".venv").mkdir()
    makefile, env = ROOT / "Makefile", {**os.environ, "MODIAR_CACHE": str(tmp_path / "cache")}
    clean = ["make", "-f", str(makefile), "clean", f"BIN={Path(sys.executable).parent}"]
    done = subprocess.run(clean, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / ".venv").exists()
    assert f"and exact outcomes, {tmp_path / 'cache'}\n" in done.stdout
    assert "modiar cache show" in done.stdout and "modiar cache clear" in done.stdout
    listed = subprocess.run(["make", "-f", str(makefile)], cwd=tmp_path, capture_output=True, text=True, timeout=60).stdout
    line = next(line for line in listed.splitlines() if line.startswith("  make clean"))
    assert "modiar cache show" in line and "modiar cache clear" in line
