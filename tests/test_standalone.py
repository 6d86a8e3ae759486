"""The repository stands on its own: RULES.md is its rules, and nothing points outside it.

RULES.md names every rule event of engine.EVENTS and every field of engine.Rules, has every
section and "Settled here" row that the code and the tests cite, and its examples (board
codes, pictures, turns worked by hand) are what the engine computes. No file of the
repository mentions a folder outside it.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from locations import ROOT

import engine
from engine import Rules, apply_move, end_event, legal_moves, pack, parse_board, render, unpack

RULES_MD = ROOT / "RULES.md"
TEXT = RULES_MD.read_text(encoding="utf-8") if RULES_MD.is_file() else ""

# Pointers out of the checkout, spelt in pieces so that this file does not match itself.
OUTSIDE = ("../" + "shared", "shared/" + "RULES.md", "/" + "work/")

CITED_SECTION = re.compile(r"""RULES\.md(?:'s|,)?\s*\(?"([A-Z][^"\n]{2,40})\"""")  # RULES.md, "A turn"
CITED_QUESTION = re.compile(r'Settled here, "([^"]+)"')
CITED_ROW = re.compile(r"Settled here, row (\d+)")
FENCED = re.compile(r"^```[a-z]*\n(.*?)^```$", re.MULTILINE | re.DOTALL)
TURN = re.compile(
    r"(?P<side>South|North) (?:plays pit (?P<pit>\d) |to move )at ply (?P<ply>\d+)(?: under (?P<rules>\S+))?: "
    r"(?:captures (?P<captured>\d+)(?: from pits? (?P<pits>[\d, ]+))?"
    r"|legal moves (?P<moves>none|[\d, ]+?)(?: \((?P<end>\w+)\))?)"
)
CODE_ROW = re.compile(r"^\| ([\d, ]+) \| `(0x[0-9A-F]+)` \| (\d+) \|$", re.MULTILINE)


def repository_files() -> list[Path]:
    """Tracked files, and the untracked ones git would add (not ignored), that exist."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    listing = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return [ROOT / name for name in sorted(set(listing.split("\0"))) if name and (ROOT / name).is_file()]


def citing_files(*suffixes: str) -> list[Path]:
    """The repository's files that may cite RULES.md, this one (whose patterns would match) left out."""
    here = Path(__file__).resolve()
    return [path for path in repository_files() if path.suffix in suffixes and path.resolve() not in (here, RULES_MD)]


def section(title: str) -> str:
    """The text of RULES.md's section ``title``: from its heading to the next heading."""
    found = re.search(rf"^#+ {re.escape(title)}\n(.*?)(?=^#|\Z)", TEXT, re.MULTILINE | re.DOTALL)
    assert found, f"RULES.md has no section {title!r}"
    return found.group(1)


def table_column(text: str, column: int) -> list[str]:
    """The cells of one column of the markdown tables in ``text``, header and rule lines left out."""
    rows = [line.split("|")[1:-1] for line in text.splitlines() if line.startswith("|")]
    cells = [row[column].strip() for row in rows if len(row) > column]
    return [cell for cell in cells if not set(cell) <= set("-: ")][1:] if cells else []


def names_in_backticks(cells: list[str]) -> list[str]:
    return [cell.strip("`") for cell in cells if cell.startswith("`")]


def test_rules_md_is_at_the_top_of_the_repository():
    assert RULES_MD.is_file()
    assert TEXT.startswith("# Modiar")


def test_no_file_of_the_repository_points_outside_it():
    offenders = [
        f"{path.relative_to(ROOT)}: {pointer}"
        for path in repository_files()
        for pointer in OUTSIDE
        if pointer.encode() in path.read_bytes()
    ]
    assert offenders == [], "files that point outside the repository (RULES.md is the repository's own)"


def test_rules_md_defines_every_rule_event_in_the_order_of_engine_events():
    assert names_in_backticks(table_column(section("Rule events"), 0)) == list(engine.EVENTS)
    for name in engine.EVENTS:
        assert f"`{name}`" in TEXT


def test_rules_md_defines_every_field_of_the_rule_set_in_order():
    fields = [field.name for field in dataclasses.fields(Rules)]
    assert names_in_backticks(table_column(section("Variants"), 0)) == fields
    for name in fields:
        assert f"`{name}`" in TEXT


def test_rules_md_default_column_is_the_default_rule_set():
    """Variants: the default of every field, as the table gives it, is Rules()'s."""
    variants = section("Variants")
    defaults = dict(zip(names_in_backticks(table_column(variants, 0)), table_column(variants, 1), strict=True))
    for field in dataclasses.fields(Rules):
        assert defaults[field.name] == repr(getattr(Rules(), field.name)).replace("'", '"')


def test_rule_set_names_in_rules_md_are_the_names_the_engine_gives():
    """Rule-set names: every name and token example reads back into a rule set of that name."""
    names = set(re.findall(r"`(modiar(?:-[\w.]+)*)`", TEXT)) | set(re.findall(r" under (modiar[\w.-]*):", TEXT))
    tokens = table_column(section("Rule-set names"), 3)
    names |= {f"modiar-{token.strip('`')}" for token in tokens}
    assert len(names) >= 10
    for name in names:
        assert Rules.from_name(name).name == name
    assert Rules().name == "modiar"


def test_every_section_of_rules_md_that_the_repository_cites_exists():
    """Code, tests, README and docs/ cite RULES.md by section ("A turn", "Perfect play", ...)."""
    headings = re.findall(r"^#+ (.+)$", TEXT, re.MULTILINE)
    cited = set()
    for path in citing_files(".py", ".md", ".ipynb", ".toml"):
        cited |= set(CITED_SECTION.findall(path.read_text(encoding="utf-8")))
    assert {"A turn", "Perfect play", "Variants", "Settled here"} <= cited
    missing = [title for title in cited if not any(heading.startswith(title) for heading in headings)]
    assert missing == []


def test_every_settled_question_the_tests_cite_is_a_row_of_settled_here():
    settled = section("Settled here")
    numbers = table_column(settled, 0)
    questions = table_column(settled, 1)
    assert numbers == [str(row) for row in range(1, len(numbers) + 1)]
    cited_questions, cited_rows = set(), set()
    for path in citing_files(".py", ".md"):
        source = path.read_text(encoding="utf-8")
        cited_questions |= set(CITED_QUESTION.findall(source))
        cited_rows |= {int(row) for row in CITED_ROW.findall(source)}
    assert cited_questions, "the tests cite Settled here by question"
    for question in cited_questions:
        assert any(row.startswith(question) for row in questions), question
    assert max(cited_rows) <= len(questions)


# --------------------------------------------------------------------------------------
# The examples of RULES.md, worked by hand, against the engine
# --------------------------------------------------------------------------------------


def test_board_codes_of_rules_md():
    """Board code: each row of the table is pack/unpack of its counts, in hex and decimal."""
    rows = CODE_ROW.findall(section("Board code"))
    assert len(rows) >= 4
    for counts_text, hex_code, decimal in rows:
        counts = tuple(int(count) for count in counts_text.split(","))
        assert int(hex_code, 16) == int(decimal)
        assert pack(counts) == int(decimal)
        assert unpack(int(decimal)) == counts
    assert engine.start_board() == 0x1C71C71C7 == sum(7 << 6 * i for i in range(6))


def test_board_pictures_of_rules_md_are_what_render_draws():
    pictures = [block.rstrip("\n") for block in FENCED.findall(TEXT) if block.startswith("pit      5")]
    assert len(pictures) >= 2
    for picture in pictures:
        assert render(parse_board(picture)) == picture
    assert render(engine.start_board()) in pictures
    assert render(pack([1, 2, 3, 4, 5, 6])) in pictures


def turn_examples() -> list[str]:
    return [block for block in FENCED.findall(TEXT) if block.startswith(("South ", "North "))]


def pictured_boards(block: str) -> list[int]:
    """The boards drawn side by side in an example: North's row reads 5 4 3, South's 0 1 2."""
    rows = {}
    for line in block.splitlines():
        if line.startswith(("North ", "South ")):
            rows[line.split()[0]] = [[int(count) for count in row.split()] for row in re.findall(r"\[([\d ]+)\]", line)]
    return [pack([*south, *reversed(north)]) for south, north in zip(rows["South"], rows["North"], strict=True)]


def test_rules_md_has_turn_examples():
    assert len(turn_examples()) >= 15


@pytest.mark.parametrize("block", turn_examples(), ids=lambda block: block.splitlines()[0])
def test_turn_example_of_rules_md(block):
    """A turn worked by hand in RULES.md: the engine's move (or legal moves) from its first board."""
    head = TURN.fullmatch(block.splitlines()[0])
    assert head, f"an example's first line must read like the others: {block.splitlines()[0]!r}"
    mover = ("South", "North").index(head["side"])
    ply = int(head["ply"])
    rules = Rules.from_name(head["rules"] or "modiar")
    boards = pictured_boards(block)
    if head["pit"] is None:
        (board,) = boards
        moves = () if head["moves"] == "none" else tuple(int(pit) for pit in head["moves"].split(","))
        assert legal_moves(board, mover, ply, rules) == moves
        assert end_event(board, mover, ply, rules) == head["end"]
        return
    pit = int(head["pit"])
    result = apply_move(boards[0], mover, pit, ply, rules)
    assert unpack(result.board) == unpack(boards[-1])
    assert result.captured == int(head["captured"])
    if head["pits"]:
        assert result.captured_pits == tuple(int(taken) for taken in head["pits"].split(","))
    if len(boards) == 3:
        # The sown board is the board after a forfeited capture: the first move gives it up.
        sown = apply_move(boards[0], mover, pit, 0, rules.replace(first_move_forfeit=True)).board
        assert unpack(sown) == unpack(boards[1])
