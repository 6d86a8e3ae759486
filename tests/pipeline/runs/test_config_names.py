"""Configs by name: a bundled config runs by its name alone under the command of its kind, and
under another kind's command is refused with the command that runs it; a config that is not there
is answered with the bundled ones of its kind and the nearest name; a misspelt key or rule field
of a config with the nearest one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipeline.atlas.config import load_atlas
from pipeline.ladder.run import load_ladder
from pipeline.runs.config import ConfigError
from pipeline.runs.paths import RUNS, STUDIES, bundled, bundled_kind, study_config
from pipeline.search_ladder.run import load_search_ladder
from pipeline.study.config import load_study

LOADERS = {"study": load_study, "ladder": load_ladder, "search ladder": load_search_ladder, "atlas": load_atlas}
BUNDLED = sorted(path.stem for path in STUDIES.glob("*.toml"))
STUDY = 'name = "small"\nseed = 7\nstrategies = ["random", "greedy"]\n'


def test_every_bundled_config_is_of_one_kind_and_every_kind_has_one() -> None:
    assert set(LOADERS) == set(RUNS)
    assert sorted(name for kind in RUNS for name in bundled(kind)) == BUNDLED
    assert all(bundled(kind) for kind in RUNS)


@pytest.mark.parametrize("name", BUNDLED)
def test_a_bundled_config_runs_by_its_name_under_its_own_command_only(name: str) -> None:
    kind = bundled_kind(name)
    assert study_config(name) == STUDIES / f"{name}.toml"
    LOADERS[kind](study_config(name))  # refused by none of its checks
    for other, load in LOADERS.items():
        if other != kind:
            with pytest.raises(ConfigError, match=re.escape(f"{name} is a bundled {kind}, not a")) as refused:
                load(study_config(name))
            assert str(refused.value).endswith(f": {RUNS[kind]} {name} runs it")


@pytest.mark.parametrize("kind", RUNS)
def test_a_missing_config_names_the_bundled_ones_of_its_kind_and_how_to_run_one(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as refused:
        LOADERS[kind](study_config("nothing-of-the-kind"))
    message = str(refused.value)
    names = bundled(kind)
    assert message.startswith(f"cannot read {kind} config nothing-of-the-kind: No such file or directory; ")
    assert message.endswith(f" are named without a path: {', '.join(names)} (e.g. {RUNS[kind]} {names[0]})")


@pytest.mark.parametrize("name", BUNDLED)
def test_a_bundled_name_misspelt_gets_the_name_and_its_command(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    kind = bundled_kind(name)
    for typo in (name[:-1], name[0] + name[2:], name + "s"):
        with pytest.raises(ConfigError, match=re.escape(f"did you mean {name} ({RUNS[kind]} {name})?")):
            LOADERS[kind](study_config(typo))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("games_per_sea = 10\n", "unknown key 'games_per_sea' (did you mean 'games_per_seat'?); a study has the keys"),
        ("games_per_seat = 10\n[rules]\nstones = 3\n", "unknown rule 'stones' in [rules] (did you mean 'stones_per_pit'?)"),
        ("games_per_seat = 10\n[rules]\nfeedin = false\n", "unknown rule 'feedin' in [rules] (did you mean 'feeding'?)"),
        ("games_per_seat = 10\n[rules]\ncolour = 'red'\n", "unknown rule 'colour' in [rules]; the rules are"),
        ("rungs = 10\n", "unknown key 'rungs'; a study has the keys"),
    ],
)
def test_a_misspelt_key_or_rule_of_a_config_gets_the_nearest(text: str, message: str, tmp_path: Path) -> None:
    config = tmp_path / "small.toml"
    config.write_text(STUDY + text)
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_study(config)
