"""``modiar play``: a person at the terminal, played through engine.play_game like any game."""

from __future__ import annotations

import io

import pytest

import engine
import pipeline.play
from engine import Rules, pack, play_game
from pipeline.cli import main
from pipeline.play import Human, ending, opening, play_terminal

SOUTH, NORTH = 0, 1
ANSWERS = "x\n9\n" + "0\n1\n2\n5\n4\n3\n" * 200  # a bad word, a pit off the board, then every pit in turn


class Scripted:
    """The person's answers as a plain strategy: the first answer that is a legal pit, which is
    the move Human settles on after refusing the others."""

    spec = "human"

    def __init__(self, answers: str) -> None:
        self.answers = iter(answers.split())

    def choose(self, here: engine.Position, rng: engine.Rng) -> int:
        for text in self.answers:
            if text.isdigit() and int(text) in here.moves:
                return int(text)
        raise AssertionError("the script ran out of answers")


def person(answers: list[str]) -> tuple[Human, list[str]]:
    """A Human who types ``answers`` in turn, and the lines the terminal shows."""
    typed, shown = iter(answers), []
    return Human(lambda prompt: next(typed), shown.append), shown


# ---------------------------------------------------------------------------------------------
# The game loop: play_game's own


@pytest.mark.parametrize("south, north, seed", [("human", "random", 11), ("greedy", "human", 4), ("human", "human", 2)])
def test_modiar_play_gives_the_record_play_game_gives(monkeypatch, south, north, seed):
    records = []

    def keep(*arguments, **options):
        records.append(play_terminal(*arguments, **options))
        return records[-1]

    monkeypatch.setattr(pipeline.play, "play_terminal", keep)
    monkeypatch.setattr("sys.stdin", io.StringIO(ANSWERS))
    assert main(["play", "--south", south, "--north", north, "--seed", str(seed)]) == 0
    script = Scripted(ANSWERS)  # two people share the one stdin, as they share the one script
    players = [script if spec == "human" else spec for spec in (south, north)]
    assert records == [play_game(*players, seed=seed)]
    assert sum(records[0].events[end] for end in engine.END_EVENTS) == 1


def test_modiar_play_asks_again_after_a_bad_move_and_finishes(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO(ANSWERS))
    assert main(["play", "--south", "human", "--north", "greedy"]) == 0
    out = capsys.readouterr().out
    assert "'x' is not a pit: type 0, 1 or 2, or q to quit." in out
    assert "South cannot play pit 9: there is no pit 9, and South plays only pits 0, 1 and 2." in out
    last = out.rstrip().splitlines()[-1]
    assert "; the game ends. " in last and (" wins " in last or "It is a draw" in last)


def test_modiar_play_leaves_cleanly_at_end_of_input(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("0\n"))
    assert main(["play", "--south", "greedy", "--north", "human"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("Game abandoned before move 2.")


def test_modiar_play_leaves_when_asked():
    shown: list[str] = []
    answers = iter(["q"])
    assert play_terminal("human", "random", rules=Rules(), ask=lambda prompt: next(answers), say=shown.append) is None
    assert shown[-1] == "\nGame abandoned before move 1."


def test_modiar_play_rejects_an_unknown_strategy(capsys):
    assert main(["play", "--north", "nonsense"]) == 2
    assert "unknown strategy 'nonsense'" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# What the person reads


def test_the_opening_says_who_plays_which_row_and_which_way_stones_go():
    south, sowing, scoring = opening("human", "greedy", Rules())
    assert south == (
        "You play South, the bottom row (pits 0, 1 and 2); greedy plays North, the top row (pits 3, 4 and 5). South moves first."
    )
    assert sowing == (
        "Stones are sown counter-clockwise, one a pit: left to right along South's row (0, 1, 2), then right to left "
        "along North's row (3, 4, 5), and round again. The first stone goes back into the pit it was taken from."
    )
    assert scoring == (
        "A player scores the stones it captures and, when the game ends, the stones left in its own row; "
        "the most of the 42 stones wins."
    )
    assert opening("random", "human", Rules())[0].startswith("You play North, the top row (pits 3, 4 and 5); random plays South")
    assert opening("human", "human", Rules())[0].startswith("Two players: South, the bottom row")
    assert "The first stone goes into the next pit." in opening("human", "greedy", Rules(sow_origin=False))[1]


def test_each_move_shows_who_played_what_the_captures_the_board_and_the_score():
    shown: list[str] = []
    answers = iter(["0", "q"])
    play_terminal("human", "greedy", rules=Rules(), seed=3, ask=lambda prompt: next(answers), say=shown.append)
    #  South plays 0 (7 stones: 0, 1, 2, 3, 4, 5, 0): pit 0 makes 2, forfeited on the first move
    #      5  4  3          5  4  3
    # N  [ 7  7  7]  ->  [ 8  8  8]
    # S  [ 7  7  7]      [ 2  8  8]
    #      0  1  2          0  1  2
    assert shown[-3] == (
        "\nMove 1: South plays pit 0; the first move of the game captures nothing, so the 2 stones it would take stay"
        " on the board.\n"
        + engine.render(pack([2, 8, 8, 8, 8, 8]))
        + "\nCaptured: South 0, North 0. If the game ended now: South 18, North 24."
    )
    #  greedy North plays 5 (8 stones: 5, 0, 1, 2, 3, 4, 5, 0): lands in 0 with 4, then 5 holds 2
    #      5  4  3          5  4  3
    # N  [ 8  8  8]  ->  [ 0  9  9]      captured: 4 from pit 0 and 2 from pit 5
    # S  [ 2  8  8]      [ 0  9  9]
    #      0  1  2          0  1  2
    assert shown[-2] == (
        "\nMove 2: North plays pit 5 and captures 6 stones from pits 0 and 5.\n"
        + engine.render(pack([0, 9, 9, 9, 9, 0]))
        + "\nCaptured: South 0, North 6. If the game ended now: South 18, North 24."
    )


@pytest.mark.parametrize(
    "board, mover, typed, legal, reason",
    [
        #      5  4  3
        # N  [ 2  2  2]     pit 0 holds nothing
        # S  [ 0  3  3]
        #      0  1  2
        (pack([0, 3, 3, 2, 2, 2]), SOUTH, "0", "1", "South cannot play pit 0: it is empty."),
        #      5  4  3
        # N  [ 2  2  2]     pit 0 holds a singleton
        # S  [ 1  1  3]
        #      0  1  2
        (
            pack([1, 1, 3, 2, 2, 2]),
            SOUTH,
            "0",
            "2",
            "South cannot play pit 0: it holds a single stone, and a pit needs at least 2 stones to be played.",
        ),
        #      5  4  3          5  4  3
        # N  [ 0  0  0]  ->  [ 0  0  1]     pit 0 (0, 1) leaves North's row empty; pit 2 (2, 3) feeds it
        # S  [ 2  0  2]      [ 2  0  1]
        #      0  1  2          0  1  2
        (
            pack([2, 0, 2, 0, 0, 0]),
            SOUTH,
            "0",
            "2",
            "South cannot play pit 0: North's row is empty, so South must feed it: play pit 2, "
            "which sows stones into North's row.",
        ),
        #      5  4  3          5  4  3
        # N  [ 0  0  1]  ->  [ 0  0  2]     pit 2 (2, 3) makes 2 in pit 3, North's only stones
        # S  [ 2  0  2]      [ 2  0  1]
        #      0  1  2          0  1  2
        (
            pack([2, 0, 2, 1, 0, 0]),
            SOUTH,
            "2",
            "0",
            "South cannot play pit 2: it would capture every stone in North's row, and taking a whole row (a grand slam) "
            "is not allowed.",
        ),
        #      5  4  3
        # N  [ 7  7  7]     North to move: pit 0 is South's
        # S  [ 8  8  2]
        #      0  1  2
        (
            pack([8, 8, 2, 7, 7, 7]),
            NORTH,
            "0",
            "3",
            "North cannot play pit 0: it is in South's row, and North plays only pits 3, 4 and 5.",
        ),
    ],
    ids=["empty pit", "single stone", "must feed", "grand slam", "not your pit"],
)
def test_an_illegal_pit_is_refused_with_the_rule_in_plain_words(board, mover, typed, legal, reason):
    human, shown = person([typed, legal])
    assert human.choose(engine.position(board, mover, ply=1), engine.Rng.for_game(0)) == int(legal)
    assert shown == [reason]


@pytest.mark.parametrize(
    "seed, rules, sentence",
    [
        (1, Rules(), "North has only single stones left; the game ends. South wins 33 to 9 after 15 moves."),
        (
            7,
            Rules(),
            "Every move South could make would capture all of North's stones, which is not allowed; the game ends. "
            "South wins 23 to 19 after 24 moves.",
        ),
        (295, Rules(), "North has no stones left in its row; the game ends. South wins 22 to 20 after 17 moves."),
        (5, Rules(), "North has only single stones left; the game ends. It is a draw, 21 to 21 after 17 moves."),
        (0, Rules(ply_cap=3), "The limit of 3 moves is reached; the game ends. North wins 24 to 18 after 3 moves."),
    ],
    ids=["singleton_end", "grand_slam_end", "empty_row_end", "draw", "ply cap"],
)
def test_the_game_ends_with_a_sentence_saying_why_and_who_won(seed, rules, sentence):
    record = play_game("random", "random", rules=rules, seed=seed)
    assert ending(record, rules) == sentence


@pytest.mark.parametrize("answer", ["²", "٣", "1" * 5000, "1000"])
def test_a_superscript_or_a_5000_digit_answer_is_no_pit_and_asked_again(answer):
    """An answer "²" passes str.isdigit and 5,000 digits pass it too, but int() refused both with a
    ValueError traceback in the middle of the game."""
    human, shown = person([answer, "0"])
    start = engine.position(engine.start_board(), SOUTH, 0)
    assert human.choose(start, engine.Rng(0)) == 0
    assert len(shown) == 1 and shown[0].endswith("is not a pit: type 0, 1 or 2, or q to quit.")
    assert len(shown[0]) < 120
