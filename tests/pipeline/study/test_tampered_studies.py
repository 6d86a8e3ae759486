"""A study's config, folder and records tampered with, its run killed or its disk full: each attack
that once lost data, reported wrong figures or ended in a traceback, by name."""

from __future__ import annotations

import errno
import hashlib
import json
import os
from pathlib import Path

import polars as pl
import pytest
from sealing import edit_manifest
from sealing import manifest as manifest_payload
from study_configs import small_config, toml_text

from engine.store.integrity import sealed
from pipeline.cli import main
from pipeline.runs.config import ConfigError
from pipeline.runs.lock import folder_lock
from pipeline.runs.paths import JOURNAL, LOCK, MANIFEST
from pipeline.runs.records import RecordError, parquet_bytes, read_study_manifest, scan_games
from pipeline.study import run as runner
from pipeline.study.config import load_study, parse_study
from pipeline.study.run import plan, run_study
from pipeline.study.status import status
from pipeline.study.summary import summary

# The small study (tests/study_configs.py) under the default rules, 40 games a seat: 32 chunks of 5 games.
CHANGES = {"games_per_seat": 40, "rules": {}}
SMALL = small_config(**CHANGES)
CONFIG = toml_text(SMALL)


def study(**changes):
    return parse_study({**SMALL, **changes})


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.startswith("modiar: error: ") and err.count("\n") == 1, err
    return err


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """A finished small study (32 chunks of 5 games); tests copy it before spoiling it."""
    return run_study(study(), tmp_path_factory.mktemp("finished") / "small", progress=False)


@pytest.fixture
def copy(finished, tmp_path) -> Path:
    target = tmp_path / "small"
    for name, data in snapshot(finished).items():
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        (target / name).write_bytes(data)
    return target


# ---------------------------------------------------------------------------------------------
# Paths taken from a manifest


@pytest.mark.parametrize("name", ["../precious", "a/b", "ab\n", "", ".", 7])
def test_a_manifest_study_name_that_is_not_a_folder_name_is_refused(copy, name, capsys):
    edit_manifest(copy, lambda manifest: manifest.update(study=name))
    with pytest.raises(RecordError, match=r"study name|'study' must be a JSON string"):
        read_study_manifest(copy)
    assert main(["study", "report", str(copy), "--quiet"]) == 2
    one_line_error(capsys)


@pytest.mark.parametrize(
    "file", ["../../outside.parquet", "/etc/passwd", "games/p000-c00001.parquet", "plies/p000-c00000.parquet"]
)
def test_a_chunk_file_outside_its_place_in_the_study_folder_is_refused(copy, file, capsys):
    edit_manifest(copy, lambda manifest: manifest["chunks"]["p000-c00000"]["games"].update(file=file))
    with pytest.raises(RecordError, match=r"names a file other than games/p000-c00000\.parquet"):
        scan_games(copy)
    assert main(["study", "summary", str(copy)]) == 2
    one_line_error(capsys)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda manifest: manifest.update(chunks=[]), "'chunks' must be a JSON object"),
        (lambda manifest: manifest.update(versions="1"), "'versions' must be a JSON object"),
        (lambda manifest: manifest.update(config=[1]), "'config' must be a JSON object"),
        (lambda manifest: manifest["chunks"]["p000-c00000"]["games"].pop("sha256"), "has no SHA-256"),
        (lambda manifest: manifest["chunks"]["p000-c00000"].pop("rows"), "has no row count"),
        (lambda manifest: manifest["chunks"].update({"../x": {"rows": 1}}), "is not a chunk name"),
        (lambda manifest: manifest.pop("chunks"), "is not a study manifest"),
    ],
)
def test_a_malformed_manifest_is_one_line_in_every_command(copy, change, message, capsys, small_study):
    edit_manifest(copy, change)
    for command in ("status", "summary", "report"):
        assert main(["study", command, str(copy), *(["--quiet"] if command == "report" else [])]) == 2
        assert message in one_line_error(capsys)
    config = small_study(**CHANGES)
    assert main(["study", "run", str(config), "--out", str(copy), "--quiet"]) == 2
    assert message in one_line_error(capsys)


# ---------------------------------------------------------------------------------------------
# One writer per folder; a run killed at any point resumes


def test_a_second_run_on_a_locked_folder_is_refused_naming_the_holder(tmp_path, capsys, small_study):
    folder = tmp_path / "small"
    folder.mkdir()
    config = small_study(**CHANGES, seed=4)
    with folder_lock(folder):
        with pytest.raises(RecordError, match=rf"being written by another 'modiar study run' \(pid {os.getpid()}\)"):
            run_study(study(), folder, progress=False)
        assert main(["study", "run", str(config), "--out", str(folder), "--quiet"]) == 2
        assert "being written by another" in one_line_error(capsys)
    assert sorted(path.name for path in folder.iterdir()) == [LOCK]  # nothing else written
    run_study(study(), folder, progress=False)  # the lock is gone with its holder
    assert len(scan_games(folder).collect()) == 160


def test_a_run_killed_during_its_first_manifest_write_resumes(tmp_path, finished):
    folder = tmp_path / "small"
    folder.mkdir()
    (folder / f".{MANIFEST}.tmp-4242").write_text('{"study": "sm')  # what the kill left
    run_study(study(), folder, progress=False)
    assert not list(folder.glob(".*.tmp-*"))
    assert snapshot(folder) == snapshot(finished)


def test_chunks_finished_before_a_crash_are_kept_in_the_journal_and_the_run_resumes(tmp_path, monkeypatch, finished):
    folder = tmp_path / "small"
    write, written = runner.write_atomic, []

    def disk_full_after_ten_chunks(path, data):
        if len(written) == 10:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        write(path, data)
        written.append(path)

    monkeypatch.setattr(runner, "write_atomic", disk_full_after_ten_chunks)
    with pytest.raises(RecordError, match=r"cannot write .*No space left on device; the chunks already finished are kept"):
        run_study(study(), folder, progress=False)
    assert manifest_payload(folder)["chunks"] == {}  # the chunks are in the journal alone
    assert len(read_study_manifest(folder)["chunks"]) == 10
    assert "INCOMPLETE, 22 chunks missing" in status(folder)
    monkeypatch.undo()
    run_study(study(), folder, progress=False)
    assert snapshot(folder) == snapshot(finished)


def test_a_full_disk_is_one_line_exit_2(tmp_path, monkeypatch, capsys, small_study):
    def full(path, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(runner, "write_atomic", full)
    config = small_study(**CHANGES)
    assert main(["study", "run", str(config), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    assert "No space left on device" in one_line_error(capsys)


def test_the_manifest_is_written_twice_a_run_whatever_the_chunks(tmp_path, monkeypatch, finished):
    writes, write = [], runner.write_manifest
    monkeypatch.setattr(runner, "write_manifest", lambda *arguments: writes.append(write(*arguments)))
    run_study(study(chunk_games=1), tmp_path / "small", progress=False)
    assert len(plan(study(chunk_games=1))) == 160 and len(writes) == 2
    assert not (tmp_path / "small" / JOURNAL).exists()


def test_a_journal_line_cut_short_by_a_kill_is_not_a_chunk(copy):
    entry = manifest_payload(copy)["chunks"]["p003-c00007"]
    edit_manifest(copy, lambda manifest: manifest["chunks"].pop("p003-c00007"))
    line = json.dumps(sealed({"chunk": "p003-c00007", **entry}, {"kind": "finished chunk"}))
    (copy / JOURNAL).write_text(line + "\n" + line[: len(line) // 2])
    assert read_study_manifest(copy)["chunks"]["p003-c00007"] == entry
    assert "32 of 32 chunks done (complete)" in status(copy)


def test_a_finished_study_is_not_written_to_at_all(copy, monkeypatch):
    """As on read-only media: neither the lock nor the manifest is touched."""

    def read_only(directory):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(directory))

    monkeypatch.setattr(runner, "folder_lock", read_only)
    before = {path: path.stat().st_mtime_ns for path in copy.rglob("*")}
    assert run_study(study(), copy, progress=False) == copy
    assert {path: path.stat().st_mtime_ns for path in copy.rglob("*")} == before


def test_an_unfinished_study_on_read_only_media_is_one_line(copy, monkeypatch):
    def read_only(directory):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(directory))

    (copy / "games" / "p000-c00000.parquet").unlink()
    monkeypatch.setattr(runner, "folder_lock", read_only)
    with pytest.raises(RecordError, match="Read-only file system"):
        run_study(study(), copy, progress=False)


# ---------------------------------------------------------------------------------------------
# Unfinished and edited studies are never reported as whole ones


def test_summary_of_an_unfinished_study_says_so_first(tmp_path):
    folder = run_study(study(), tmp_path / "small", progress=False, stop_after=5)
    first = summary(folder).splitlines()[0]
    assert first.startswith("INCOMPLETE STUDY: 5 of 32 chunks done, 25 of 160 games; unfinished pairings: ")
    assert "random v random 25 of 40" in first
    assert "random v greedy 0 of 40" in first


def test_an_edited_games_per_seat_is_replayed_not_claimed(copy, capsys):
    """The manifest's config says 80 games a seat while its chunks hold 40: nothing counts as done."""
    edit_manifest(copy, lambda manifest: manifest["config"].update(games_per_seat=80))
    assert "0 of 32 chunks done" in status(copy)
    run_study(study(games_per_seat=80), copy, progress=False)
    assert "32 of 32 chunks done (complete), 320 of 320 games" in status(copy)
    assert len(scan_games(copy).collect()) == 320


def test_an_edited_row_count_is_caught_when_reading(copy):
    edit_manifest(copy, lambda manifest: manifest["chunks"]["p000-c00000"].update(rows=9))
    with pytest.raises(RecordError, match="holds 5 games, its manifest says 9"):
        scan_games(copy)


# ---------------------------------------------------------------------------------------------
# Configs and folders that cannot be: one line, exit 2, nothing written


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'name = "small"\xff\xfe\n', "is not UTF-8 text (byte 14)"),
        (bytes(range(256)), "is not UTF-8 text"),
        (b"\x00\x01\x02 binary", "is not valid TOML"),
    ],
)
def test_a_config_that_is_not_utf8_text_is_one_line(tmp_path, capsys, data, message):
    config = tmp_path / "bad.toml"
    config.write_bytes(data)
    assert main(["study", "run", str(config), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    assert message in one_line_error(capsys)
    assert not (tmp_path / "out").exists()


def test_a_config_with_a_byte_order_mark_is_read(tmp_path):
    config = tmp_path / "bom.toml"
    config.write_bytes("\ufeff".encode() + CONFIG.encode())
    assert load_study(config) == study()


@pytest.mark.parametrize("path", ["/dev/zero", "/dev/null", "/"])
def test_a_config_that_is_not_a_regular_file_is_refused_before_reading(path, capsys):
    with pytest.raises(ConfigError, match="is not a regular file"):
        load_study(path)
    assert main(["study", "run", path, "--quiet"]) == 2
    one_line_error(capsys)


def test_a_huge_config_file_is_refused(tmp_path):
    config = tmp_path / "huge.toml"
    config.write_text(CONFIG + "#" * (2 << 20) + "\n")
    with pytest.raises(ConfigError, match="larger than 1024 KiB"):
        load_study(config)


def test_a_name_ending_in_a_newline_is_refused():
    with pytest.raises(ConfigError, match="cannot be a folder name"):
        study(name="ab\n")
    with pytest.raises(ConfigError, match="variant label 'ab\\\\n' cannot be used"):
        study(variants={"ab\n": {"rules": {"feeding": False}}})


def test_games_per_seat_that_cannot_be_planned_is_refused_with_the_estimate():
    huge = study(games_per_seat=10**12)
    with pytest.raises(ConfigError, match=r"plans 15,258,792 chunks \(about 18.3 GB .*at most 100,000"):
        plan(huge)


def test_thousands_of_strategies_are_refused_before_pairing_them():
    many = [f"alphabeta(depth={depth})" for depth in range(1, 102)]
    with pytest.raises(ConfigError, match=r"10,201 ordered pairings, at most 10,000"):
        study(strategies=many)


def test_a_chunk_larger_than_a_worker_can_hold_is_refused():
    with pytest.raises(ConfigError, match="chunk_games must be a whole number from 1 to 4194304"):
        study(chunk_games=1 << 30)


@pytest.mark.parametrize("out", ["file", "/dev/null", "file/below", "/proc/version/below", ""])
def test_an_out_folder_that_cannot_be_one_is_one_line(tmp_path, capsys, out, small_study):
    (tmp_path / "file").write_text("keep me")
    config = small_study(**CHANGES)
    target = out if out.startswith("/") or not out else str(tmp_path / out)
    assert main(["study", "run", str(config), "--out", target, "--quiet"]) == 2
    one_line_error(capsys)
    assert (tmp_path / "file").read_text() == "keep me"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["file", "small.toml"]


def test_run_status_and_summary_of_a_folder_that_is_a_file_are_one_line(tmp_path, capsys):
    (tmp_path / "file").write_text("keep me")
    for command in ("status", "summary"):
        assert main(["study", command, str(tmp_path / "file")]) == 2
        one_line_error(capsys)


# ---------------------------------------------------------------------------------------------
# Strategy specs: one spelling each


@pytest.mark.parametrize(
    "specs",
    [
        ["random", " random"],
        ["alphabeta(depth=2)", "alphabeta( depth = 2 )"],
        ["alphabeta(depth=02)", "alphabeta(depth=2)"],
        ["alphabeta", "alphabeta(depth=6)"],
    ],
)
def test_two_spellings_of_one_strategy_are_a_duplicate(specs):
    with pytest.raises(ConfigError, match="is listed twice in strategies"):
        study(strategies=specs)


def test_a_parameter_given_twice_is_an_error():
    with pytest.raises(ConfigError, match="parameter depth is given twice"):
        study(strategies=["alphabeta(depth=1, depth=2)"])


def test_specs_are_recorded_in_their_canonical_spelling(tmp_path):
    spelt = study(strategies=[" random ", "alphabeta( depth = 01 )"], games={"alphabeta(depth=1)  vs  random": 3})
    assert spelt.strategies == ("random", "alphabeta(depth=1)")
    assert spelt.as_dict()["games"] == {"alphabeta(depth=1) vs random": 3}
    folder = run_study(spelt, tmp_path / "spelt", progress=False)
    pairings = scan_games(folder).group_by("south", "north").len().sort("south", "north").collect().rows()
    assert pairings == [("alphabeta(depth=1)", "alphabeta(depth=1)", 40), ("alphabeta(depth=1)", "random", 3),
                        ("random", "alphabeta(depth=1)", 40), ("random", "random", 40)]  # fmt: skip


def test_a_games_key_naming_a_pairing_twice_is_an_error():
    with pytest.raises(ConfigError, match=r"\[games\] names 'random vs greedy' twice"):
        study(games={"random vs greedy": 3, " random  vs greedy": 4})


def test_more_jobs_than_memory_holds_are_refused_with_the_estimate(tmp_path, capsys, small_study):
    config = small_study(**CHANGES)
    assert main(["study", "run", str(config), "--out", str(tmp_path / "out"), "--jobs", "100000", "--quiet"]) == 2
    assert "--jobs 100000 needs about 68359 GB (700 MB a worker)" in one_line_error(capsys)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["study", "ladder", "atlas"])
def test_a_config_nested_3000_deep_is_one_line_naming_the_file_not_a_recursion_error(tmp_path, capsys, command):
    """tomllib reads nested arrays by recursion, and 3,000 levels ended in RecursionError."""
    config = tmp_path / "deep.toml"
    config.write_text("a = " + "[" * 3000 + "]" * 3000 + "\n")
    assert main([command, "run", str(config), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    assert f"{config} nests arrays or tables thousands deep: it is not a {command} config" in one_line_error(capsys)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["deep.toml"]


def test_a_huge_value_in_a_config_is_quoted_short():
    with pytest.raises(ConfigError, match=r"strategies must be a non-empty list .*, not \[1, 1, .*\.\.\.$") as error:
        study(strategies=[1] * 100_000)
    assert len(str(error.value)) < 200


def test_a_chunk_swapped_in_from_another_study_is_damaged_not_missing_and_status_exits_2(copy, tmp_path, capsys):
    other = run_study(study(seed=4), tmp_path / "other", progress=False)
    (copy / "games" / "p000-c00001.parquet").write_bytes((other / "games" / "p000-c00001.parquet").read_bytes())
    assert main(["study", "status", str(copy)]) == 2
    captured = capsys.readouterr()
    assert "31 of 32 chunks done (INCOMPLETE, 1 chunk damaged)" in captured.out
    assert "damaged: games/p000-c00001.parquet does not match its checksum in the manifest" in captured.out
    assert captured.err.count("\n") == 1 and "games/p000-c00001.parquet does not match its checksum" in captured.err
    assert "replaces it" in captured.err
    with pytest.raises(RecordError, match=r"p000-c00001\.parquet does not match its checksum"):  # summary agrees
        summary(copy)
    run_study(study(), copy, progress=False)  # replaced, as status says
    assert main(["study", "status", str(copy)]) == 0 and "32 of 32 chunks done (complete)" in capsys.readouterr().out


def test_a_chunk_sealed_again_with_a_game_whose_winner_its_scores_deny_is_refused_in_one_line(copy, capsys):
    path = copy / "games" / "p000-c00000.parquet"
    games = pl.read_parquet(path)
    first = games.row(0, named=True)
    lost = "north" if first["winner"] != "north" else "south"
    data = parquet_bytes(
        games.with_columns(
            winner=pl.when(pl.col("game_id") == first["game_id"]).then(pl.lit(lost)).otherwise("winner")
        ).to_arrow()
    )
    path.write_bytes(data)
    edit_manifest(
        copy, lambda manifest: manifest["chunks"]["p000-c00000"]["games"].update(sha256=hashlib.sha256(data).hexdigest())
    )
    assert main(["study", "summary", str(copy)]) == 2
    error = one_line_error(capsys)
    assert f"game {first['game_id']} does not add up: winner is {lost}, but the scores" in error
