"""``modiar fair --quality`` (pipeline.fair.run's ``quality``, pipeline.fair.quality) on the 3-stone
variant: each fair start's quality is engine.exact_quality from that start, cached once, and the
report ranks the starts by drama and draws the front of fairness against drama."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import polars as pl
import pytest

import engine
from pipeline.cli import main
from pipeline.exact.quality import SELF_PLAY_QUALITY
from pipeline.fair.quality import drama_starts, start_quality_section
from pipeline.fair.report import default_out
from pipeline.fair.run import QUALITY_COLUMNS, FairSearch, run_fair

THREE = engine.Rules(stones_per_pit=3)


@pytest.fixture(scope="module")
def search() -> FairSearch:
    return run_fair(THREE, moved=1, exact_within=1, quality=True, progress=False)


def measured(search: FairSearch) -> pl.DataFrame:
    return search.starts.filter(pl.col("perfect_t1_comeback").is_not_null())


def test_each_fair_start_has_the_quality_of_play_from_it(search: FairSearch) -> None:
    starts = measured(search)
    fair = search.starts.filter((pl.col("value") == 0) & (pl.col("moved") <= 1))
    assert starts.height == fair.height > 0
    for row in [search.own | {"start": None}, *starts.iter_rows(named=True)]:
        board = None if row["start"] is None else engine.pack([row[f"pit_{pit}"] for pit in range(6)])
        for prefix, spec in SELF_PLAY_QUALITY.items():
            quality = engine.exact_quality(spec, spec, rules=THREE, start=board)
            for name, value in quality.as_dict().items():
                assert row[f"{prefix}_{name}"] == pytest.approx(value, abs=1e-12), (row["start"], prefix, name)


def test_a_second_search_reads_the_qualities_from_the_cache(search: FairSearch, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("computed again")

    monkeypatch.setattr(engine, "exact_quality", refuse)
    again = run_fair(THREE, moved=1, exact_within=1, quality=True, jobs=1, progress=False)
    assert again.starts.select(QUALITY_COLUMNS).equals(search.starts.select(QUALITY_COLUMNS))


def test_a_search_without_quality_has_no_quality_columns() -> None:
    plain = run_fair(THREE, moved=1, exact_within=1, progress=False)
    assert not set(QUALITY_COLUMNS) & set(plain.starts.columns) and not plain.quality


def test_the_front_keeps_the_fair_starts_no_fairer_and_more_dramatic_start_beats(search: FairSearch) -> None:
    starts = drama_starts(measured(search))
    assert starts["perfect_t1_comeback"].to_list() == sorted(starts["perfect_t1_comeback"].to_list(), reverse=True)
    rows = list(starts.iter_rows(named=True))
    for row in rows:
        beaten = any(
            other["decided_by"] == "play"
            and other["unfairness"] <= row["unfairness"]
            and other["perfect_t1_comeback"] >= row["perfect_t1_comeback"]
            and (other["unfairness"], other["perfect_t1_comeback"]) != (row["unfairness"], row["perfect_t1_comeback"])
            for other in rows
        )
        assert row["drama_pareto"] == (row["decided_by"] == "play" and not beaten), row["start"]


def test_modiar_fair_with_quality_writes_its_section_into_a_folder_of_its_own(tmp_path: Path) -> None:
    assert default_out(THREE, 1, True).name == "modiar-stones3-exact-within-1-quality"
    assert default_out(THREE, 1).name == "modiar-stones3-exact-within-1"
    out = tmp_path / "fair"
    argv = ["fair", "--rules", THREE.name, "--moved", "1", "--exact-within", "1", "--quality", "--quiet", "--out", str(out)]
    assert main(argv) == 0
    report = (out / "report.md").read_text()
    assert "## Quality of play from the fair starts" in report and "--quality" in report
    assert (out / "figures" / "fair_drama.svg").is_file()
    starts = pl.read_csv(out / "tables" / "starts.csv")
    assert "perfect_t1_comeback" in starts.columns


def test_the_section_says_what_decides_each_start_and_why_the_own_start_is_no_yardstick(search: FairSearch) -> None:
    """Each row of the section's table names what decides its start (a start fair only at the cap
    is listed, not ranked, and the reader must see which it is); an own start worth v != 0 has its
    losing side behind from ply 0, so the section says its comebacks are not comparable."""
    starts = measured(search)
    section = start_quality_section(search, starts)
    (table,) = section.tables
    assert table.header[1] == "decided by"
    decided = dict(zip(starts["start"].to_list(), starts["decided_by"].to_list(), strict=True))
    assert table.rows[0][1] == search.verdict.decided_by
    assert {row[0]: row[1] for row in table.rows[1:]} == decided
    warning = "nobody is behind at ply 0"
    for value in (search.balance.value, 0, -2):
        text = " ".join(
            start_quality_section(
                dataclasses.replace(search, balance=dataclasses.replace(search.balance, value=value)), starts
            ).text
        )
        assert (warning in text) == (value != 0), value
        assert ("South is behind from ply 0" in text) == (value < 0)
