"""Hand-worked examples of every rule of RULES.md (the single authority).

Each test builds a position with ``engine.pack([pit 0, ..., pit 5])``, draws it beside
the assertion (North's row on top read 5 4 3, South's row below read 0 1 2, as in
``engine.render``; sowing runs counter-clockwise: along the bottom, up the right, back
along the top) and checks the result worked out by hand from RULES.md. "Sown" pictures
show the board after sowing and before the capture.

Unless a test says otherwise the rule set is the default, ``Rules()``, and the move is
played at ply 1 or later, so that the first-move forfeit (which applies at ply 0 only)
does not interfere.
"""

from __future__ import annotations

import argparse
import dataclasses
import re

import pytest
from reference import END_EVENTS, TURN_EVENTS  # the events as RULES.md lists them, written apart from engine/
from variants import EVERY_FIELD_ALONE, OWARE_LIKE

import engine
from engine import IllegalMoveError, Rules, apply_move, end_event, legal_moves, pack, parse_board, play_game, render, unpack
from engine.game.rules import RULE_FIELDS
from pipeline.commands import rules_from

SOUTH, NORTH = 0, 1


def rule_option(text: str) -> tuple[str, object]:
    """``--rule FIELD=VALUE`` as modiar reads it (pipeline.commands.rules_from): the field and its value."""
    field = text.partition("=")[0]
    return field, getattr(rules_from(argparse.Namespace(rules=Rules().name, rule=[text])), field)


def events(**counts: int) -> dict[str, int]:
    """The events dict of one turn: every event 0 except the ones given."""
    unknown = set(counts) - set(TURN_EVENTS + END_EVENTS)
    assert not unknown, f"not a rule event: {unknown}"
    return {name: counts.get(name, 0) for name in TURN_EVENTS + END_EVENTS}


def capture(stones: int, pits: int, own: int = 0, opponent: int = 0, **more: int) -> dict[str, int]:
    """The events dict of a turn whose capture takes ``stones`` from ``pits`` pits."""
    assert own + opponent == stones
    return events(
        capture=1,
        capture_stones=stones,
        capture_pits=pits,
        capture_own_row_stones=own,
        capture_opponent_row_stones=opponent,
        **more,
    )


class Scripted:
    """A strategy that plays a fixed list of absolute pits (for play_game)."""

    def __init__(self, moves: list[int]) -> None:
        self.spec = "scripted"
        self.moves = list(moves)

    def choose(self, position: engine.Position, rng: engine.Rng) -> int:
        return self.moves.pop(0)


def test_event_names_are_the_rule_events_of_rules_md():
    """Rule events: every event of RULES.md's table (and its counters) is in MoveResult.events."""
    assert set(engine.EVENTS) == set(TURN_EVENTS + END_EVENTS)
    assert set(engine.END_EVENTS) == set(END_EVENTS)


# --------------------------------------------------------------------------------------
# Board and notation
# --------------------------------------------------------------------------------------


def test_start_position_and_its_board_code():
    """Board and notation: 7 stones in each of the six pits, 42 in all; board code 0x1C71C71C7."""
    #      5  4  3
    # N  [ 7  7  7]
    # S  [ 7  7  7]
    #      0  1  2
    start = engine.start_board()
    assert start == 0x1C71C71C7
    assert start == sum(7 << 6 * i for i in range(6))
    assert start == pack([7, 7, 7, 7, 7, 7])
    assert unpack(start) == (7, 7, 7, 7, 7, 7)
    assert sum(unpack(start)) == 42
    assert Rules().total_stones == 42


def test_board_code_puts_pit_i_in_bits_6i_to_6i_plus_5():
    """Board code: pit i occupies bits 6*i .. 6*i+5."""
    #      5  4  3
    # N  [ 6  5  4]
    # S  [ 1  2  3]
    #      0  1  2
    code = pack([1, 2, 3, 4, 5, 6])
    assert code == 1 | 2 << 6 | 3 << 12 | 4 << 18 | 5 << 24 | 6 << 30
    assert (code >> 6 * 4) & 0b111111 == 5


def test_render_draws_north_on_top_and_parse_board_reads_it_back():
    """Board and notation: South owns 0 1 2 (left to right), North 3 4 5, drawn 5 4 3 on top."""
    picture = "pit      5   4   3\nNorth    6   5   4\nSouth    1   2   3\npit      0   1   2"
    assert render(pack([1, 2, 3, 4, 5, 6])) == picture
    assert parse_board(picture) == pack([1, 2, 3, 4, 5, 6])
    assert render(engine.start_board()) == "pit      5   4   3\nNorth    7   7   7\nSouth    7   7   7\npit      0   1   2"


def test_start_position_every_pit_of_south_is_playable():
    """A turn, step 1: South moves first and may play pits 0, 1, 2 (each holds 7 >= 2)."""
    assert legal_moves(engine.start_board(), SOUTH, 0) == (0, 1, 2)
    assert end_event(engine.start_board(), SOUTH, 0) is None


# --------------------------------------------------------------------------------------
# A turn, step 1: playable pits
# --------------------------------------------------------------------------------------


def test_playable_pits_singletons_and_empty_pits_are_not_playable():
    """Step 1, playable pits: a singleton (exactly 1 stone) may not be played, nor an empty pit."""
    #      5  4  3
    # N  [ 2  2  2]
    # S  [ 1  1  3]
    #      0  1  2
    board = pack([1, 1, 3, 2, 2, 2])
    assert legal_moves(board, SOUTH, 1) == (2,)


def test_playable_pits_north_plays_only_its_own_row():
    """Step 1: North owns pits 3, 4, 5; pit 3 is a singleton and pit 4 is empty, so only 5."""
    #      5  4  3
    # N  [ 3  0  1]
    # S  [ 2  2  2]
    #      0  1  2
    board = pack([2, 2, 2, 1, 0, 3])
    assert legal_moves(board, NORTH, 1) == (5,)


# --------------------------------------------------------------------------------------
# A turn, step 2: sowing
# --------------------------------------------------------------------------------------


def test_sowing_drops_the_first_stone_back_into_the_origin():
    """Step 2, sowing: 3 stones from pit 0 land in 0, 1, 2; L = 0+3-1 = 2 holds 1: no capture."""
    #     before        after
    #      5  4  3       5  4  3
    # N  [ 2  2  2] -> [ 2  2  2]
    # S  [ 3  0  0]    [ 1  1  1]
    #      0  1  2       0  1  2
    result = apply_move(pack([3, 0, 0, 2, 2, 2]), SOUTH, 0, ply=1)
    assert result.board == pack([1, 1, 1, 2, 2, 2])
    assert result.captured == 0
    assert result.captured_pits == ()
    assert result.events == events()


def test_sowing_a_long_hand_passes_the_origin_and_drops_into_it_again():
    """Settled here, row 1 (a long hand does not skip the origin): 9 stones from pit 1.

    The stones land in 1 2 3 4 5 0 1 2 3: pits 1, 2, 3 get two each, pits 4, 5, 0 one each.
    L = (1 + 9 - 1) mod 6 = 3 holds 1 + 2 = 3: no capture.
    """
    #     before        after
    #      5  4  3       5  4  3
    # N  [ 1  1  1] -> [ 2  2  3]
    # S  [ 1  9  1]    [ 2  2  3]
    #      0  1  2       0  1  2
    result = apply_move(pack([1, 9, 1, 1, 1, 1]), SOUTH, 1, ply=1)
    assert result.board == pack([2, 2, 3, 3, 2, 2])
    assert result.captured == 0
    assert result.events == events()


def test_landing_pit_wraps_around_the_ring():
    """Step 2, landing pit L = (o + n - 1) mod 6: 5 stones from pit 2 land in 2 3 4 5 0, L = 0.

    Pit 0 then holds 1 + 1 = 2: captured (from the mover's own row); pit 5 holds 3: stop.
    """
    #     before        sown          after
    #      5  4  3       5  4  3       5  4  3
    # N  [ 2  2  2] -> [ 3  3  3] -> [ 3  3  3]
    # S  [ 1  3  5]    [ 2  3  1]    [ 0  3  1]
    #      0  1  2       0  1  2       0  1  2
    result = apply_move(pack([1, 3, 5, 2, 2, 2]), SOUTH, 2, ply=1)
    assert result.board == pack([0, 3, 1, 3, 3, 3])
    assert result.captured == 2
    assert result.captured_pits == (0,)
    assert result.events == capture(2, 1, own=2)


# --------------------------------------------------------------------------------------
# A turn, step 3: capture
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before_3", "after_3", "captured"),
    [
        (1, 0, 2),  # L holds 2: captured
        (2, 3, 0),  # 3: not captured
        (3, 0, 4),  # 4: captured
        (4, 5, 0),  # 5: not captured
        (5, 0, 6),  # 6: captured
        (6, 7, 0),  # 7: not captured
        (7, 8, 0),  # 8: not captured (only 2, 4 or 6)
    ],
)
def test_capture_of_2_4_or_6_in_the_landing_pit(before_3, after_3, captured):
    """Step 3, capture: the landing pit is captured if it then holds 2, 4 or 6 stones.

    South plays pit 2 (2 stones: into 2 and 3), L = 3, which then holds k + 1.
    The chain looks back at pit 2 (the origin, now 1): not capturable, and the path ends.

            before            sown               after
              5  4  3           5  4  3            5  4  3
        N  [  3  3  k]  ->  [  3  3 k+1]  ->  [  3  3 k+1 or 0]
        S  [  0  0  2]      [  0  0  1]       [  0  0  1]
              0  1  2           0  1  2            0  1  2
    """
    result = apply_move(pack([0, 0, 2, before_3, 3, 3]), SOUTH, 2, ply=1)
    assert result.board == pack([0, 0, 1, after_3, 3, 3])
    assert result.captured == captured
    if captured:
        assert result.captured_pits == (3,)
        assert result.events == capture(captured, 1, opponent=captured)
    else:
        assert result.captured_pits == ()
        assert result.events == events()


def test_capture_chain_stops_at_the_first_pit_holding_another_number():
    """Step 3, the backward chain: 5 stones from pit 0 land in 0 1 2 3 4, L = 4.

    L = 4 holds 2: captured; pit 3 holds 4: captured; pit 2 holds 3: the chain stops, so
    pit 1 (holding 2) is not captured although it is on the path.
    """
    #     before        sown          after
    #      5  4  3       5  4  3       5  4  3
    # N  [ 2  1  3] -> [ 2  2  4] -> [ 2  0  0]
    # S  [ 5  1  2]    [ 1  2  3]    [ 1  2  3]
    #      0  1  2       0  1  2       0  1  2
    result = apply_move(pack([5, 1, 2, 3, 1, 2]), SOUTH, 0, ply=1)
    assert result.board == pack([1, 2, 3, 0, 0, 2])
    assert result.captured == 6
    assert result.captured_pits == (4, 3)
    assert result.events == capture(6, 2, opponent=6)


def test_capture_chain_does_not_look_past_the_landing_pit():
    """Step 3: only pits before L are looked at; pit 5 (2 stones, after L = 4) stays."""
    #     before        sown          after
    #      5  4  3       5  4  3       5  4  3
    # N  [ 2  1  3] -> [ 2  2  4] -> [ 2  0  0]
    # S  [ 5  1  2]    [ 1  2  3]    [ 1  2  3]
    #      0  1  2       0  1  2       0  1  2
    result = apply_move(pack([5, 1, 2, 3, 1, 2]), SOUTH, 0, ply=1)
    assert unpack(result.board)[5] == 2


def test_capture_chain_after_a_short_hand_stops_at_the_origin_holding_1():
    """Settled here, row 2: after a hand under 7 the origin holds exactly 1 and stops the chain.

    3 stones from pit 0 land in 0 1 2: L = 2 holds 2 and pit 1 holds 2, both captured
    (from the mover's own row); pit 0 holds 1: stop.
    """
    #     before        sown          after
    #      5  4  3       5  4  3       5  4  3
    # N  [ 3  3  1] -> [ 3  3  1] -> [ 3  3  1]
    # S  [ 3  1  1]    [ 1  2  2]    [ 1  0  0]
    #      0  1  2       0  1  2       0  1  2
    result = apply_move(pack([3, 1, 1, 1, 3, 3]), SOUTH, 0, ply=1)
    assert result.board == pack([1, 0, 0, 1, 3, 3])
    assert result.captured == 4
    assert result.captured_pits == (2, 1)
    assert result.events == capture(4, 2, own=4)


def test_capture_chain_is_limited_to_the_pits_sown_this_move():
    """Settled here, row 2: the chain reaches at most back to the origin (pits sown this move).

    With capture counts {1, 2, 4, 6} the origin's single stone is capturable, so the limit
    shows: 2 stones from pit 1 land in 1 and 2. L = 2 holds 2: captured; pit 1 (the origin)
    holds 1: captured; the path is used up, so pit 0 (1 stone, not sown) is not looked at.
    """
    #     before        sown          after
    #      5  4  3       5  4  3       5  4  3
    # N  [ 3  3  3] -> [ 3  3  3] -> [ 3  3  3]
    # S  [ 1  2  1]    [ 1  1  2]    [ 1  0  0]
    #      0  1  2       0  1  2       0  1  2
    rules = Rules(capture_counts=(1, 2, 4, 6))
    result = apply_move(pack([1, 2, 1, 3, 3, 3]), SOUTH, 1, ply=1, rules=rules)
    assert result.board == pack([1, 0, 0, 3, 3, 3])
    assert result.captured == 3
    assert result.captured_pits == (2, 1)
    assert result.events == capture(3, 2, own=3)


def test_capture_chain_of_a_long_hand_takes_each_pit_of_the_ring_once():
    """Settled here, row 2: for n >= 6 the chain is the whole ring, each pit once.

    7 stones from pit 0 land in 0 1 2 3 4 5 0: every pit holds 2 and L = 0. The chain
    takes 0, 5, 4, 3, 2, 1 and stops (each pit once). Grand slam allowed, so it is legal.
    """
    #     before        sown          after
    #      5  4  3       5  4  3       5  4  3
    # N  [ 1  1  1] -> [ 2  2  2] -> [ 0  0  0]
    # S  [ 7  1  1]    [ 2  2  2]    [ 0  0  0]
    #      0  1  2       0  1  2       0  1  2
    rules = Rules(grand_slam="allowed")
    result = apply_move(pack([7, 1, 1, 1, 1, 1]), SOUTH, 0, ply=1, rules=rules)
    assert result.board == pack([0, 0, 0, 0, 0, 0])
    assert result.captured == 12
    assert result.captured_pits == (0, 5, 4, 3, 2, 1)
    assert result.events == capture(12, 6, own=6, opponent=6)


def test_capture_chain_crosses_from_the_opponents_row_into_the_movers_own():
    """Settled here, row 3 (a chain crosses rows; captures may take from the mover's own row).

    4 stones from pit 1 land in 1 2 3 4, L = 4 holds 4, pit 3 holds 2, pit 2 (South's
    own) holds 2: all captured; pit 1 holds 1: stop. North keeps pit 5, so no grand slam.
    """
    #     before        sown          after
    #      5  4  3       5  4  3       5  4  3
    # N  [ 1  3  1] -> [ 1  4  2] -> [ 1  0  0]
    # S  [ 0  4  1]    [ 0  1  2]    [ 0  1  0]
    #      0  1  2       0  1  2       0  1  2
    result = apply_move(pack([0, 4, 1, 1, 3, 1]), SOUTH, 1, ply=1)
    assert result.board == pack([0, 1, 0, 0, 0, 1])
    assert result.captured == 8
    assert result.captured_pits == (4, 3, 2)
    assert result.events == capture(8, 3, own=2, opponent=6)


def test_capture_chain_crosses_from_pit_0_back_to_pit_5_for_north():
    """Settled here, row 3: North's chain runs from South's pit 0 back into North's pit 5.

    North plays pit 4 (3 stones: 4 5 0), L = 0 holds 2: captured (South's row); pit 5
    holds 2: captured (North's own row); pit 4 holds 1: stop.
    """
    #     before        sown          after
    #      5  4  3       5  4  3       5  4  3
    # N  [ 1  3  3] -> [ 2  1  3] -> [ 0  1  3]
    # S  [ 1  1  5]    [ 2  1  5]    [ 0  1  5]
    #      0  1  2       0  1  2       0  1  2
    result = apply_move(pack([1, 1, 5, 3, 3, 1]), NORTH, 4, ply=1)
    assert result.board == pack([0, 1, 5, 3, 1, 0])
    assert result.captured == 4
    assert result.captured_pits == (0, 5)
    assert result.events == capture(4, 2, own=2, opponent=2)


def test_capture_from_the_movers_own_row_by_a_hand_of_7():
    """Step 3 with settled row 1: 7 stones from pit 0 land in 0..5 and 0 again, L = 0 holds 2.

    Pit 0 (South's own row) is captured; pit 5 holds 8: stop. At ply 1 nothing is forfeited.
    """
    #     before        sown          after
    #      5  4  3       5  4  3       5  4  3
    # N  [ 7  7  7] -> [ 8  8  8] -> [ 8  8  8]
    # S  [ 7  7  7]    [ 2  8  8]    [ 0  8  8]
    #      0  1  2       0  1  2       0  1  2
    result = apply_move(engine.start_board(), SOUTH, 0, ply=1)
    assert result.board == pack([0, 8, 8, 8, 8, 8])
    assert result.captured == 2
    assert result.captured_pits == (0,)
    assert result.events == capture(2, 1, own=2)


def test_positions_are_symmetric_north_on_b_is_south_on_b_turned_by_three_pits():
    """Perfect play: North to move on b is the same as South to move on b rotated by three pits.

    The board of test_capture_chain_crosses_from_pit_0_back_to_pit_5_for_north, turned:
    South plays pit 1 (3 stones: 1 2 3), L = 3 holds 2, pit 2 holds 2: both captured,
    pit 1 holds 1: stop. That is North's pit 4 capturing pits 0 and 5, turned.

        North to move                 South to move (turned)
          5  4  3        5  4  3        5  4  3        5  4  3
    N  [ 1  3  3] -> [ 0  1  3]    [ 5  1  1] -> [ 5  1  0]
    S  [ 1  1  5]    [ 0  1  5]    [ 3  3  1]    [ 3  1  0]
         0  1  2        0  1  2        0  1  2        0  1  2
    """
    board = pack([1, 1, 5, 3, 3, 1])
    turned = engine.rotate(board)
    assert turned == pack([3, 3, 1, 1, 1, 5])
    assert engine.rotate(turned) == board
    assert legal_moves(turned, SOUTH, 1) == (0, 1)
    assert legal_moves(board, NORTH, 1) == (3, 4)
    result = apply_move(turned, SOUTH, 1, ply=1)
    assert result.board == pack([3, 1, 0, 0, 1, 5]) == engine.rotate(pack([0, 1, 5, 3, 1, 0]))
    assert result.captured_pits == (3, 2)
    assert result.events == apply_move(board, NORTH, 4, ply=1).events == capture(4, 2, own=2, opponent=2)


# --------------------------------------------------------------------------------------
# A turn, step 4: the first move
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pit", "after"),
    [(0, [2, 8, 8, 8, 8, 8]), (1, [8, 2, 8, 8, 8, 8]), (2, [8, 8, 2, 8, 8, 8])],
)
def test_first_move_forfeit_every_first_move_of_the_start_forfeits_2(pit, after):
    """Step 4, first move: each of South's first moves lands in its own origin making 2 there.

    That capture is forfeited at ply 0: the 2 stones stay, first_move_forfeit counts them.
    """
    #     before        after
    #      5  4  3       5  4  3
    # N  [ 7  7  7] -> [ 8  8  8]
    # S  [ 7  7  7]    [ 2  8  8]
    #      0  1  2       0  1  2
    #     before        after
    #      5  4  3       5  4  3
    # N  [ 7  7  7] -> [ 8  8  8]
    # S  [ 7  7  7]    [ 8  2  8]
    #      0  1  2       0  1  2
    #     before        after
    #      5  4  3       5  4  3
    # N  [ 7  7  7] -> [ 8  8  8]
    # S  [ 7  7  7]    [ 8  8  2]
    #      0  1  2       0  1  2
    result = apply_move(engine.start_board(), SOUTH, pit, ply=0)
    assert result.board == pack(after)
    assert result.captured == 0
    assert result.captured_pits == ()
    assert result.events == events(first_move_forfeit=1, first_move_forfeit_stones=2)


def test_first_move_forfeit_the_table_numbers_every_batched_and_exact_code_reads(default_tables):
    """Step 4 in the tables' numbers: the tables hold no ply 0, so batched play, replay, the
    solver, the exact chain and exploitability read the first moves from engine.tables.first_move.

    Its children are the three boards drawn above (2 stones kept in the origin, nothing
    captured); the start's row of the tables is the move at a later ply, which captures them.
    """
    from engine.tables.first_move import first_moves

    first = first_moves(Rules())
    index = default_tables.index
    assert first.start == index.rank(engine.start_board())
    assert first.pits.tolist() == [0, 1, 2]
    assert first.captured.tolist() == [0, 0, 0]
    # the children are seen by North, the next mover: its row first
    turned = [[8, 8, 8, 2, 8, 8], [8, 8, 8, 8, 2, 8], [8, 8, 8, 8, 8, 2]]
    assert first.children.tolist() == [index.rank(pack(board)) for board in turned]
    assert default_tables.captured[first.start].tolist() == [2, 2, 2]
    assert default_tables.child[first.start].tolist() == [
        index.rank(pack([8, 8, 8, 0, 8, 8])),
        index.rank(pack([8, 8, 8, 8, 0, 8])),
        index.rank(pack([8, 8, 8, 8, 8, 0])),
    ]
    child, captured = first.by_pit()
    assert child.tolist() == first.children.tolist() and captured.tolist() == [0, 0, 0]
    without = first_moves(Rules(first_move_forfeit=False))
    assert without.children.tolist() == default_tables.child[first.start].tolist()
    assert without.captured.tolist() == [2, 2, 2]


@pytest.mark.parametrize("ply", [0, 1, 2, 3])
def test_first_move_forfeit_on_ply_0_only_and_its_stones_are_counted(ply):
    """Settled here, "first-move exception": only the game's first move (ply 0) forfeits.

    The chain of test_capture_chain_stops_at... (6 stones from pits 4 and 3) is forfeited
    at ply 0, with first_move_forfeit_stones = 6; at any later ply it is captured.
    """
    #     before        sown          after
    #      5  4  3       5  4  3       5  4  3
    # N  [ 2  1  3] -> [ 2  2  4] -> [ 2  0  0]
    # S  [ 5  1  2]    [ 1  2  3]    [ 1  2  3]
    #      0  1  2       0  1  2       0  1  2
    result = apply_move(pack([5, 1, 2, 3, 1, 2]), SOUTH, 0, ply=ply)
    if ply == 0:
        assert result.board == pack([1, 2, 3, 4, 2, 2])
        assert result.captured == 0
        assert result.captured_pits == ()
        assert result.events == events(first_move_forfeit=1, first_move_forfeit_stones=6)
    else:
        assert result.board == pack([1, 2, 3, 0, 0, 2])
        assert result.captured == 6
        assert result.captured_pits == (4, 3)
        assert result.events == capture(6, 2, opponent=6)


def test_first_move_forfeit_not_for_norths_first_move_at_ply_1():
    """Settled here, "first-move exception": North's first move (ply 1) captures normally.

    After South's 0 (forfeited), North plays pit 5 (8 stones: 5 0 1 2 3 4 5 0), L = 0.
    Pit 0 holds 2 + 2 = 4: captured; pit 5 holds 2: captured; pit 4 holds 9: stop.
    """
    #     before        sown          after
    #      5  4  3       5  4  3       5  4  3
    # N  [ 8  8  8] -> [ 2  9  9] -> [ 0  9  9]
    # S  [ 2  8  8]    [ 4  9  9]    [ 0  9  9]
    #      0  1  2       0  1  2       0  1  2
    after_south = apply_move(engine.start_board(), SOUTH, 0, ply=0).board
    assert after_south == pack([2, 8, 8, 8, 8, 8])
    result = apply_move(after_south, NORTH, 5, ply=1)
    assert result.board == pack([0, 9, 9, 9, 9, 0])
    assert result.captured == 6
    assert result.captured_pits == (0, 5)
    assert result.events == capture(6, 2, own=2, opponent=4)


# --------------------------------------------------------------------------------------
# Restrictions on the legal moves: grand slam prohibited
# --------------------------------------------------------------------------------------


def test_grand_slam_a_move_that_would_take_all_of_the_opponents_row_is_illegal():
    """Grand slam prohibited: pit 2 (2 stones: 2, 3) would capture North's only 2 stones.

    Pit 0 (2 stones: 0, 1, L = 1 holds 1) captures nothing and stays legal; the turn
    counts grand_slam_blocked.
    """
    #     before        after 0
    #      5  4  3       5  4  3
    # N  [ 0  0  1] -> [ 0  0  1]
    # S  [ 2  0  2]    [ 1  1  2]
    #      0  1  2       0  1  2
    #     before        sown 2        would be
    #      5  4  3       5  4  3       5  4  3
    # N  [ 0  0  1] -> [ 0  0  2] -> [ 0  0  0]
    # S  [ 2  0  2]    [ 2  0  1]    [ 2  0  1]
    #      0  1  2       0  1  2       0  1  2
    board = pack([2, 0, 2, 1, 0, 0])
    assert legal_moves(board, SOUTH, 1) == (0,)
    result = apply_move(board, SOUTH, 0, ply=1)
    assert result.board == pack([1, 1, 2, 1, 0, 0])
    assert result.captured == 0
    assert result.events == events(grand_slam_blocked=1)
    with pytest.raises(IllegalMoveError):
        apply_move(board, SOUTH, 2, ply=1)


def test_grand_slam_a_capture_that_empties_the_opponents_row_but_took_nothing_from_it():
    """Settled here, "what is a grand slam": it must take at least one stone from that row.

    North's row is already empty. Pit 0 (2 stones: 0, 1) makes L = 1 hold 2: South captures
    from its own row; North's row stays empty, but nothing was taken from it: legal. No move
    can feed (pit 1 is a singleton), so the feeding obligation lapses.
    """
    #     before        sown          after
    #      5  4  3       5  4  3       5  4  3
    # N  [ 0  0  0] -> [ 0  0  0] -> [ 0  0  0]
    # S  [ 2  1  0]    [ 1  2  0]    [ 1  0  0]
    #      0  1  2       0  1  2       0  1  2
    board = pack([2, 1, 0, 0, 0, 0])
    assert legal_moves(board, SOUTH, 1) == (0,)
    result = apply_move(board, SOUTH, 0, ply=1)
    assert result.board == pack([1, 0, 0, 0, 0, 0])
    assert result.captured == 2
    assert result.captured_pits == (1,)
    assert result.events == capture(2, 1, own=2, feeding_active=1, feeding_lapsed=1)


def test_grand_slam_every_playable_pit_a_grand_slam_ends_the_game():
    """Settled here, "every playable pit is a grand slam": no legal move, grand_slam_end.

    South's only playable pit, 2, would capture North's only 2 stones (pit 3 after 1 + 1).
    """
    #      5  4  3
    # N  [ 0  0  1]
    # S  [ 0  0  2]
    #      0  1  2
    board = pack([0, 0, 2, 1, 0, 0])
    assert legal_moves(board, SOUTH, 1) == ()
    assert end_event(board, SOUTH, 1) == "grand_slam_end"


def test_grand_slam_end_with_a_singleton_beside_the_grand_slam():
    """End event grand_slam_end: the mover has a playable pit (2), every one a grand slam."""
    #      5  4  3
    # N  [ 0  0  1]
    # S  [ 0  1  2]
    #      0  1  2
    board = pack([0, 1, 2, 1, 0, 0])
    assert legal_moves(board, SOUTH, 1) == ()
    assert end_event(board, SOUTH, 1) == "grand_slam_end"


def test_grand_slam_whole_ring_capture_is_a_grand_slam():
    """Grand slam prohibited: 7 stones from pit 0 would capture the whole ring (see above)."""
    #     before        sown          after
    #      5  4  3       5  4  3       5  4  3
    # N  [ 1  1  1] -> [ 2  2  2] -> [ 0  0  0]
    # S  [ 7  1  1]    [ 2  2  2]    [ 0  0  0]
    #      0  1  2       0  1  2       0  1  2
    board = pack([7, 1, 1, 1, 1, 1])
    assert legal_moves(board, SOUTH, 1) == ()
    assert end_event(board, SOUTH, 1) == "grand_slam_end"


def test_grand_slam_is_no_question_on_the_first_move_whose_capture_is_forfeited():
    """Step 4 before the restrictions: at ply 0 nothing is captured, so nothing is a grand slam.

    Pit 2 (2 stones: 2, 3) would capture North's only 2 stones, but at ply 0 the capture
    is forfeited: the move is legal and the 2 stones stay in pit 3.
    """
    #     before        after
    #      5  4  3       5  4  3
    # N  [ 0  0  1] -> [ 0  0  2]
    # S  [ 2  0  2]    [ 2  0  1]
    #      0  1  2       0  1  2
    board = pack([2, 0, 2, 1, 0, 0])
    assert legal_moves(board, SOUTH, 0) == (0, 2)
    result = apply_move(board, SOUTH, 2, ply=0)
    assert result.board == pack([2, 0, 1, 2, 0, 0])
    assert result.events == events(first_move_forfeit=1, first_move_forfeit_stones=2)


# --------------------------------------------------------------------------------------
# Restrictions on the legal moves: feeding
# --------------------------------------------------------------------------------------


def test_feeding_only_feeding_moves_are_legal_when_the_opponents_row_is_empty():
    """Feeding: North's row is empty; pit 2 (2 stones: 2, 3) feeds, pit 0 (0, 1) does not.

    Only pit 2 is legal; feeding removed pit 0, so feeding_forced fires.
    """
    #     before        after 2
    #      5  4  3       5  4  3
    # N  [ 0  0  0] -> [ 0  0  1]
    # S  [ 2  0  2]    [ 2  0  1]
    #      0  1  2       0  1  2
    board = pack([2, 0, 2, 0, 0, 0])
    assert legal_moves(board, SOUTH, 1) == (2,)
    result = apply_move(board, SOUTH, 2, ply=1)
    assert result.board == pack([2, 0, 1, 1, 0, 0])
    assert result.captured == 0
    assert result.events == events(feeding_active=1, feeding_forced=1)
    with pytest.raises(IllegalMoveError):
        apply_move(board, SOUTH, 0, ply=1)


def test_feeding_for_north():
    """Feeding: South's row is empty; North's pit 5 (2 stones: 5, 0) feeds, pit 4 (4, 5) not."""
    #     before        after 5
    #      5  4  3       5  4  3
    # N  [ 2  2  0] -> [ 1  2  0]
    # S  [ 0  0  0]    [ 1  0  0]
    #      0  1  2       0  1  2
    board = pack([0, 0, 0, 0, 2, 2])
    assert legal_moves(board, NORTH, 1) == (5,)
    result = apply_move(board, NORTH, 5, ply=1)
    assert result.board == pack([1, 0, 0, 0, 2, 1])
    assert result.events == events(feeding_active=1, feeding_forced=1)


def test_feeding_forced_does_not_fire_when_every_move_feeds():
    """Rule events: feeding_forced needs a move removed; the only move, pit 2, feeds anyway."""
    #     before        after
    #      5  4  3       5  4  3
    # N  [ 0  0  0] -> [ 0  0  1]
    # S  [ 0  0  2]    [ 0  0  1]
    #      0  1  2       0  1  2
    board = pack([0, 0, 2, 0, 0, 0])
    assert legal_moves(board, SOUTH, 1) == (2,)
    result = apply_move(board, SOUTH, 2, ply=1)
    assert result.board == pack([0, 0, 1, 1, 0, 0])
    assert result.events == events(feeding_active=1)


def test_feeding_no_move_can_feed_the_obligation_lapses_and_all_moves_are_legal():
    """Settled here, "no move can feed": the obligation lapses; every move is legal.

    North's row is empty; pit 0 (2 stones: 0, 1) and pit 1 (2 stones: 1, 2) both stay in
    South's row. Both are legal, and the turn counts feeding_lapsed.
    """
    #     before        after 0       after 1
    #      5  4  3       5  4  3       5  4  3
    # N  [ 0  0  0] -> [ 0  0  0] -> [ 0  0  0]
    # S  [ 2  2  0]    [ 1  3  0]    [ 2  1  1]
    #      0  1  2       0  1  2       0  1  2
    board = pack([2, 2, 0, 0, 0, 0])
    assert legal_moves(board, SOUTH, 1) == (0, 1)
    result = apply_move(board, SOUTH, 0, ply=1)
    assert result.board == pack([1, 3, 0, 0, 0, 0])
    assert result.events == events(feeding_active=1, feeding_lapsed=1)
    result = apply_move(board, SOUTH, 1, ply=1)
    assert result.board == pack([2, 1, 1, 0, 0, 0])
    assert result.events == events(feeding_active=1, feeding_lapsed=1)


def test_feeding_applies_after_the_grand_slam_ban():
    """Restrictions, "applied in this order": the grand-slam ban first, then feeding.

    North's row is empty. Pit 2 (10 stones: 2 3 4 5 0 1 2 3 4 5, L = 5) feeds, but makes
    pits 5, 4, 3, 2 hold 2 each: it captures 8 and leaves North's row empty, taking 6
    from it: a grand slam, banned. The remaining move, pit 1 (1, 2), cannot feed: the
    obligation lapses and pit 1 is legal.
    """
    #     before        sown 2        after 1
    #      5  4  3       5  4  3       5  4  3
    # N  [ 0  0  0] -> [ 2  2  2] -> [ 0  0  0]
    # S  [ 0  2 10]    [ 1  3  2]    [ 0  1 11]
    #      0  1  2       0  1  2       0  1  2
    board = pack([0, 2, 10, 0, 0, 0])
    assert legal_moves(board, SOUTH, 1) == (1,)
    result = apply_move(board, SOUTH, 1, ply=1)
    assert result.board == pack([0, 1, 11, 0, 0, 0])
    assert result.events == events(feeding_active=1, feeding_lapsed=1, grand_slam_blocked=1)


def test_feeding_means_sowing_at_least_one_stone_into_the_opponents_row():
    """Settled here, "what counts as feeding": the move sows a stone into the opponent's row.

    Same board, grand slam allowed. Pit 2 sows six stones into North's row and then captures
    them all (North's row ends empty): it still counts as feeding, so pit 1 (which sows
    nothing there) is removed, and only pit 2 is legal.
    """
    #     before        sown 2        after 2
    #      5  4  3       5  4  3       5  4  3
    # N  [ 0  0  0] -> [ 2  2  2] -> [ 0  0  0]
    # S  [ 0  2 10]    [ 1  3  2]    [ 1  3  0]
    #      0  1  2       0  1  2       0  1  2
    rules = Rules(grand_slam="allowed")
    board = pack([0, 2, 10, 0, 0, 0])
    assert legal_moves(board, SOUTH, 1, rules) == (2,)
    result = apply_move(board, SOUTH, 2, ply=1, rules=rules)
    assert result.board == pack([1, 3, 0, 0, 0, 0])
    assert result.captured == 8
    assert result.captured_pits == (5, 4, 3, 2)
    assert result.events == capture(8, 4, own=2, opponent=6, feeding_active=1, feeding_forced=1)


def test_feeding_one_stone_into_the_opponents_row_is_enough():
    """Settled here, "what counts as feeding": pit 2's single stone in pit 3 feeds."""
    #     before        after 2
    #      5  4  3       5  4  3
    # N  [ 0  0  0] -> [ 0  0  1]
    # S  [ 2  0  2]    [ 2  0  1]
    #      0  1  2       0  1  2
    result = apply_move(pack([2, 0, 2, 0, 0, 0]), SOUTH, 2, ply=1)
    assert sum(unpack(result.board)[3:]) == 1


# --------------------------------------------------------------------------------------
# End of the game
# --------------------------------------------------------------------------------------


def test_end_singleton_end_when_the_movers_row_holds_only_singletons():
    """End of the game / singleton_end: South's row holds stones, all singletons."""
    #      5  4  3
    # N  [ 2  2  3]
    # S  [ 1  1  0]
    #      0  1  2
    board = pack([1, 1, 0, 3, 2, 2])
    assert legal_moves(board, SOUTH, 4) == ()
    assert end_event(board, SOUTH, 4) == "singleton_end"


def test_end_empty_row_end_when_the_movers_row_is_empty():
    """End of the game / empty_row_end: South's row is empty."""
    #      5  4  3
    # N  [ 2  2  3]
    # S  [ 0  0  0]
    #      0  1  2
    board = pack([0, 0, 0, 3, 2, 2])
    assert legal_moves(board, SOUTH, 4) == ()
    assert end_event(board, SOUTH, 4) == "empty_row_end"


def test_end_events_for_north():
    """End events for North: singletons only (pits 4 and 5) -> singleton_end; empty -> empty_row_end."""
    #      5  4  3
    # N  [ 1  1  0]
    # S  [ 3  3  3]
    #      0  1  2
    #      5  4  3
    # N  [ 0  0  0]
    # S  [ 3  3  3]
    #      0  1  2
    assert legal_moves(pack([3, 3, 3, 0, 1, 1]), NORTH, 5) == ()
    assert end_event(pack([3, 3, 3, 0, 1, 1]), NORTH, 5) == "singleton_end"
    assert legal_moves(pack([3, 3, 3, 0, 0, 0]), NORTH, 5) == ()
    assert end_event(pack([3, 3, 3, 0, 0, 0]), NORTH, 5) == "empty_row_end"


def test_end_no_end_event_while_the_game_goes_on():
    """Rule events: the end events describe a final position only."""
    #      5  4  3
    # N  [ 2  2  2]
    # S  [ 1  1  3]
    #      0  1  2
    assert end_event(pack([1, 1, 3, 2, 2, 2]), SOUTH, 1) is None


def test_final_scoring_21_21_is_a_draw():
    """End of the game / ply cap: each player adds its own row; 21-21 is a draw.

    With a ply cap of 2: South plays 0 (forfeited), North plays 3 (8 stones: 3 4 5 0 1 2
    3 4, L = 4 holds 10: no capture). Nobody captured anything; South's row holds
    3 + 9 + 9 = 21, North's 2 + 10 + 9 = 21.
    """
    #     start         S plays 0     N plays 3
    #      5  4  3       5  4  3       5  4  3
    # N  [ 7  7  7] -> [ 8  8  8] -> [ 9 10  2]
    # S  [ 7  7  7]    [ 2  8  8]    [ 3  9  9]
    #      0  1  2       0  1  2       0  1  2
    record = play_game(Scripted([0]), Scripted([3]), rules=Rules(ply_cap=2))
    assert record.moves == (0, 3)
    assert record.plies == 2
    assert record.end_reason == "ply_cap"
    assert (record.score_south, record.score_north) == (21, 21)
    assert record.winner == "draw"
    assert record.events == events(first_move_forfeit=1, first_move_forfeit_stones=2)
    assert record.rules == "modiar-cap2"


def test_final_scoring_of_a_whole_game_adds_captures_and_own_row():
    """End of the game: a short game with 2 stones per pit, worked by hand to its end.

    ply 0  S 2: 2 3,       L = 3 holds 3                         [2 2 1 3 2 2]
    ply 1  N 3: 3 4 5,     L = 5 holds 3                         [2 2 1 1 3 3]
    ply 2  S 1: 1 2,       L = 2 holds 2: S captures 2 (own)     [2 1 0 1 3 3]
    ply 3  N 5: 5 0 1,     L = 1 holds 2: N captures 2 (South's) [3 0 0 1 3 1]
    ply 4  S 0: 0 1 2,     L = 2 holds 1                         [1 1 1 1 3 1]
    ply 5  N 4: 4 5 0,     L = 0 holds 2, pit 5 holds 2: N captures 4, pit 4 (1) stops
                                                                 [0 1 1 1 1 0]
    ply 6  South's row 0 1 1: singletons only, the game ends (singleton_end).
    South: 2 captured + 2 in its row = 4; North: 6 captured + 2 in its row = 8.
    """
    #     ply 0         S 2           N 3           S 1
    #      5  4  3       5  4  3       5  4  3       5  4  3
    # N  [ 2  2  2] -> [ 2  2  3] -> [ 3  3  1] -> [ 3  3  1]
    # S  [ 2  2  2]    [ 2  2  1]    [ 2  2  1]    [ 2  1  0]
    #      0  1  2       0  1  2       0  1  2       0  1  2
    #     ply 3         N 5           S 0           N 4
    #      5  4  3       5  4  3       5  4  3       5  4  3
    # N  [ 3  3  1] -> [ 1  3  1] -> [ 1  3  1] -> [ 0  1  1]
    # S  [ 2  1  0]    [ 3  0  0]    [ 1  1  1]    [ 0  1  1]
    #      0  1  2       0  1  2       0  1  2       0  1  2
    rules = Rules(stones_per_pit=2)
    record = play_game(Scripted([2, 1, 0]), Scripted([3, 5, 4]), rules=rules)
    assert record.moves == (2, 3, 1, 5, 0, 4)
    assert record.plies == 6
    assert record.end_reason == "no_moves"
    assert (record.score_south, record.score_north) == (4, 8)
    assert record.winner == "north"
    assert record.events == events(
        capture=3,
        capture_stones=8,
        capture_pits=4,
        capture_own_row_stones=4,
        capture_opponent_row_stones=4,
        singleton_end=1,
    )
    assert record.rules == "modiar-stones2"


def test_final_scoring_a_game_with_no_first_move():
    """End of the game: with 1 stone per pit South has no playable pit at ply 0.

    The game ends at once (singleton_end), each player takes its 3 stones: 3-3, a draw.
    """
    #      5  4  3
    # N  [ 1  1  1]
    # S  [ 1  1  1]
    #      0  1  2
    record = play_game("random", "random", rules=Rules(stones_per_pit=1), seed=7)
    assert record.moves == ()
    assert record.plies == 0
    assert record.end_reason == "no_moves"
    assert (record.score_south, record.score_north, record.winner) == (3, 3, "draw")
    assert record.events == events(singleton_end=1)


def test_ply_cap_a_capped_game_ends_with_ply_cap_and_no_end_event():
    """Ply cap: a game not over after ply_cap moves ends there, marked ply_cap, no end event."""
    rules = Rules(ply_cap=5)
    for seed in range(5):
        record = play_game("random", "random", rules=rules, seed=seed)
        assert record.plies == 5
        assert len(record.moves) == 5
        assert record.end_reason == "ply_cap"
        assert all(record.events[name] == 0 for name in END_EVENTS)
        assert record.score_south + record.score_north == 42


def test_ply_cap_of_one_move_scores_the_rows():
    """Ply cap: after South's first move (forfeited, 2 stones back in its origin) the game ends.

    South's row holds 2 + 8 + 8 = 18, North's 8 + 8 + 8 = 24: North wins 24-18.
    """
    #     before        after
    #      5  4  3       5  4  3
    # N  [ 7  7  7] -> [ 8  8  8]
    # S  [ 7  7  7]    [ 2  8  8]
    #      0  1  2       0  1  2
    record = play_game(Scripted([0]), Scripted([]), rules=Rules(ply_cap=1))
    assert (record.plies, record.end_reason) == (1, "ply_cap")
    assert (record.score_south, record.score_north, record.winner) == (18, 24, "north")


def test_ply_cap_no_move_is_legal_once_the_cap_is_reached():
    """Ply cap: after ply_cap moves nothing is legal and no end event fires."""
    rules = Rules(ply_cap=10)
    start = engine.start_board()
    assert legal_moves(start, SOUTH, 9, rules) == (0, 1, 2)
    assert legal_moves(start, SOUTH, 10, rules) == ()
    assert end_event(start, SOUTH, 10, rules) is None
    with pytest.raises(IllegalMoveError, match="ply cap"):
        apply_move(start, SOUTH, 0, ply=10, rules=rules)
    assert Rules().ply_cap == 400


# --------------------------------------------------------------------------------------
# Variants
# --------------------------------------------------------------------------------------


def test_variant_stones_per_pit_4():
    """Variant stones per pit = 4: start 0x104104104; pit 0 sows 0 1 2 3, L = 3 holds 5."""
    #     before        after
    #      5  4  3       5  4  3
    # N  [ 4  4  4] -> [ 4  4  5]
    # S  [ 4  4  4]    [ 1  5  5]
    #      0  1  2       0  1  2
    rules = Rules(stones_per_pit=4)
    start = engine.start_board(rules)
    assert start == pack([4, 4, 4, 4, 4, 4]) == 0x104104104
    assert rules.total_stones == 24
    result = apply_move(start, SOUTH, 0, ply=0, rules=rules)
    assert result.board == pack([1, 5, 5, 5, 4, 4])
    assert result.events == events()  # nothing to forfeit


def test_variant_stones_per_pit_5_first_move_forfeits_a_chain_of_24():
    """Variant stones per pit = 5: pit 0 sows 0 1 2 3 4; pits 4, 3, 2, 1 hold 6, pit 0 holds 1.

    At ply 0 the chain of 24 stones is forfeited (first_move_forfeit_stones = 24), and with
    nothing captured no first move is a grand slam. Without the forfeit the chain is
    captured; North keeps pit 5, so pit 0 is no grand slam.
    """
    #     before        sown          after
    #      5  4  3       5  4  3       5  4  3
    # N  [ 5  5  5] -> [ 5  6  6] -> [ 5  0  0]
    # S  [ 5  5  5]    [ 1  6  6]    [ 1  0  0]
    #      0  1  2       0  1  2       0  1  2
    rules = Rules(stones_per_pit=5)
    assert legal_moves(engine.start_board(rules), SOUTH, 0, rules) == (0, 1, 2)
    result = apply_move(engine.start_board(rules), SOUTH, 0, ply=0, rules=rules)
    assert result.board == pack([1, 6, 6, 6, 6, 5])
    assert result.events == events(first_move_forfeit=1, first_move_forfeit_stones=24)

    # Without the forfeit, pits 1 and 2 are grand slams: pit 1 sows 1 2 3 4 5 and pits
    # 5 4 3 2 hold 6 (all of North's row taken); pit 2 sows 2 3 4 5 0 and pits 0 5 4 3 hold
    # 6 (likewise). Only pit 0 stays legal, and the turn counts grand_slam_blocked.
    rules = Rules(stones_per_pit=5, first_move_forfeit=False)
    assert legal_moves(engine.start_board(rules), SOUTH, 0, rules) == (0,)
    result = apply_move(engine.start_board(rules), SOUTH, 0, ply=0, rules=rules)
    assert result.board == pack([1, 0, 0, 0, 0, 5])
    assert result.captured == 24
    assert result.captured_pits == (4, 3, 2, 1)
    assert result.events == capture(24, 4, own=12, opponent=12, grand_slam_blocked=1)


def test_variant_min_stones_to_play_1_makes_singletons_playable():
    """Variant minimum stones to play = 1: the singleton in pit 0 is playable.

    Its one stone goes back into pit 0 (the first stone drops into the origin), L = 0 holds
    1: no capture, and the board is unchanged.
    """
    #     before        after
    #      5  4  3       5  4  3
    # N  [ 2  2  2] -> [ 2  2  2]
    # S  [ 1  0  0]    [ 1  0  0]
    #      0  1  2       0  1  2
    board = pack([1, 0, 0, 2, 2, 2])
    assert legal_moves(board, SOUTH, 1) == ()
    rules = Rules(min_stones_to_play=1)
    assert legal_moves(board, SOUTH, 1, rules) == (0,)
    result = apply_move(board, SOUTH, 0, ply=1, rules=rules)
    assert result.board == pack([1, 0, 0, 2, 2, 2])
    assert result.events == events()


def test_variant_min_stones_to_play_3():
    """Variant minimum stones to play = 3: pit 0 (2 stones) is no longer playable."""
    #      5  4  3
    # N  [ 1  1  1]
    # S  [ 2  3  0]
    #      0  1  2
    board = pack([2, 3, 0, 1, 1, 1])
    assert legal_moves(board, SOUTH, 1) == (0, 1)
    assert legal_moves(board, SOUTH, 1, Rules(min_stones_to_play=3)) == (1,)


def test_variant_sow_origin_false_skips_the_origin():
    """Variant sow origin = no: the hand starts in the next pit (as in Oware).

    From the start, pit 0's 7 stones land in 1 2 3 4 5 1 2; pit 0 stays empty, L = 2 holds 9.
    """
    #     before        after
    #      5  4  3       5  4  3
    # N  [ 7  7  7] -> [ 8  8  8]
    # S  [ 7  7  7]    [ 0  9  9]
    #      0  1  2       0  1  2
    rules = Rules(sow_origin=False)
    result = apply_move(engine.start_board(rules), SOUTH, 0, ply=0, rules=rules)
    assert result.board == pack([0, 9, 9, 8, 8, 8])
    assert result.events == events()


def test_variant_sow_origin_false_skips_the_origin_on_every_lap():
    """Variant sow origin = no: 9 stones from pit 1 land in 2 3 4 5 0 2 3 4 5 (pit 1 skipped).

    L = 5 holds 1 + 2 = 3: no capture.
    """
    #     before        after
    #      5  4  3       5  4  3
    # N  [ 1  1  1] -> [ 3  3  3]
    # S  [ 1  9  1]    [ 2  0  3]
    #      0  1  2       0  1  2
    result = apply_move(pack([1, 9, 1, 1, 1, 1]), SOUTH, 1, ply=1, rules=Rules(sow_origin=False))
    assert result.board == pack([2, 0, 3, 3, 3, 3])
    assert result.events == events()


def test_variant_sow_origin_false_chain_follows_the_path_that_skips_the_origin():
    """Variant sow origin = no: 12 stones from pit 2 land in 3 4 5 0 1 3 4 5 0 1 3 4, L = 4.

    Pits 4 and 3 hold 4, pit 1 holds 2, pit 0 holds 3. The chain runs back along the path,
    4, 3, then 1 (pit 2 was not sown): it takes 4 + 4 + 2 = 10 and stops at pit 0.
    """
    #     before        sown          after
    #      5  4  3       5  4  3       5  4  3
    # N  [ 1  1  1] -> [ 3  4  4] -> [ 3  0  0]
    # S  [ 1  0 12]    [ 3  2  0]    [ 3  0  0]
    #      0  1  2       0  1  2       0  1  2
    result = apply_move(pack([1, 0, 12, 1, 1, 1]), SOUTH, 2, ply=1, rules=Rules(sow_origin=False))
    assert result.board == pack([3, 0, 0, 0, 0, 3])
    assert result.captured == 10
    assert result.captured_pits == (4, 3, 1)
    assert result.events == capture(10, 3, own=2, opponent=8)


def test_variant_sow_origin_false_short_hand_capture():
    """Variant sow origin = no: 2 stones from pit 2 land in 3 and 4, which then hold 2 each."""
    #     before        sown          after
    #      5  4  3       5  4  3       5  4  3
    # N  [ 3  1  1] -> [ 3  2  2] -> [ 3  0  0]
    # S  [ 0  0  2]    [ 0  0  0]    [ 0  0  0]
    #      0  1  2       0  1  2       0  1  2
    result = apply_move(pack([0, 0, 2, 1, 1, 3]), SOUTH, 2, ply=1, rules=Rules(sow_origin=False))
    assert result.board == pack([0, 0, 0, 0, 0, 3])
    assert result.captured == 4
    assert result.captured_pits == (4, 3)
    assert result.events == capture(4, 2, opponent=4)


def test_variant_capture_counts_2_3_captures_3():
    """Variant capture counts = {2, 3}: L = 3 holding 3 is captured."""
    #     before        sown          after
    #      5  4  3       5  4  3       5  4  3
    # N  [ 3  3  2] -> [ 3  3  3] -> [ 3  3  0]
    # S  [ 0  0  2]    [ 0  0  1]    [ 0  0  1]
    #      0  1  2       0  1  2       0  1  2
    rules = Rules(capture_counts=(2, 3))
    result = apply_move(pack([0, 0, 2, 2, 3, 3]), SOUTH, 2, ply=1, rules=rules)
    assert result.board == pack([0, 0, 1, 0, 3, 3])
    assert result.captured == 3
    assert result.captured_pits == (3,)
    assert result.events == capture(3, 1, opponent=3)


def test_variant_capture_counts_2_3_does_not_capture_4():
    """Variant capture counts = {2, 3}: L = 3 holding 4 is not captured."""
    #     before        after
    #      5  4  3       5  4  3
    # N  [ 3  3  3] -> [ 3  3  4]
    # S  [ 0  0  2]    [ 0  0  1]
    #      0  1  2       0  1  2
    rules = Rules(capture_counts=(2, 3))
    result = apply_move(pack([0, 0, 2, 3, 3, 3]), SOUTH, 2, ply=1, rules=rules)
    assert result.board == pack([0, 0, 1, 4, 3, 3])
    assert result.captured == 0
    assert result.events == events()


def test_variant_capture_rows_opponent_landing_in_own_row_captures_nothing():
    """Variant captures on the opponent's row only: L = 1 (South's row) holding 2 is not taken."""
    #     before        after
    #      5  4  3       5  4  3
    # N  [ 3  3  3] -> [ 3  3  3]
    # S  [ 2  1  0]    [ 1  2  0]
    #      0  1  2       0  1  2
    board = pack([2, 1, 0, 3, 3, 3])
    assert apply_move(board, SOUTH, 0, ply=1).captured == 2  # the default takes it
    result = apply_move(board, SOUTH, 0, ply=1, rules=Rules(capture_rows="opponent"))
    assert result.board == pack([1, 2, 0, 3, 3, 3])
    assert result.captured == 0
    assert result.events == events()


def test_variant_capture_rows_opponent_chain_stops_on_reaching_the_movers_row():
    """Variant captures on the opponent's row only: the chain 4, 3 stops at South's pit 2 (2)."""
    #     before        sown          after
    #      5  4  3       5  4  3       5  4  3
    # N  [ 1  3  1] -> [ 1  4  2] -> [ 1  0  0]
    # S  [ 0  4  1]    [ 0  1  2]    [ 0  1  2]
    #      0  1  2       0  1  2       0  1  2
    result = apply_move(pack([0, 4, 1, 1, 3, 1]), SOUTH, 1, ply=1, rules=Rules(capture_rows="opponent"))
    assert result.board == pack([0, 1, 2, 0, 0, 1])
    assert result.captured == 6
    assert result.captured_pits == (4, 3)
    assert result.events == capture(6, 2, opponent=6)


def test_variant_capture_rows_opponent_for_north():
    """Variant captures on the opponent's row only: North takes pit 0, stops at its own pit 5."""
    #     before        sown          after
    #      5  4  3       5  4  3       5  4  3
    # N  [ 1  3  3] -> [ 2  1  3] -> [ 2  1  3]
    # S  [ 1  1  5]    [ 2  1  5]    [ 0  1  5]
    #      0  1  2       0  1  2       0  1  2
    result = apply_move(pack([1, 1, 5, 3, 3, 1]), NORTH, 4, ply=1, rules=Rules(capture_rows="opponent"))
    assert result.board == pack([0, 1, 5, 3, 1, 2])
    assert result.captured == 2
    assert result.captured_pits == (0,)
    assert result.events == capture(2, 1, opponent=2)


def test_variant_capture_rows_own_landing_in_the_opponents_row_captures_nothing():
    """Variant captures on the mover's own row only: L = 4 (North's row) holding 4 is not taken."""
    #     before        after
    #      5  4  3       5  4  3
    # N  [ 1  3  1] -> [ 1  4  2]
    # S  [ 0  4  1]    [ 0  1  2]
    #      0  1  2       0  1  2
    board = pack([0, 4, 1, 1, 3, 1])
    assert apply_move(board, SOUTH, 1, ply=1).captured == 8  # the default takes 4, 3 and 2
    result = apply_move(board, SOUTH, 1, ply=1, rules=Rules(capture_rows="own"))
    assert result.board == pack([0, 1, 2, 2, 4, 1])
    assert result.captured == 0
    assert result.events == events()


def test_variant_capture_rows_own_chain_stops_on_reaching_the_opponents_row():
    """Variant captures on the mover's own row only: South takes pit 0, stops at North's pit 5 (2)."""
    #     before        sown          after
    #      5  4  3       5  4  3       5  4  3
    # N  [ 1  3  1] -> [ 2  4  2] -> [ 2  4  2]
    # S  [ 1  0  5]    [ 2  0  1]    [ 0  0  1]
    #      0  1  2       0  1  2       0  1  2
    board = pack([1, 0, 5, 1, 3, 1])
    assert apply_move(board, SOUTH, 2, ply=1, rules=Rules(grand_slam="allowed")).captured == 10  # 0, 5, 4, 3
    result = apply_move(board, SOUTH, 2, ply=1, rules=Rules(capture_rows="own"))
    assert result.board == pack([0, 0, 1, 2, 4, 2])
    assert result.captured == 2
    assert result.captured_pits == (0,)
    assert result.events == capture(2, 1, own=2)


def test_variant_capture_rows_own_for_north():
    """Variant captures on the mover's own row only: North takes its pit 3, stops at South's pit 2."""
    #     before        sown          after
    #      5  4  3       5  4  3       5  4  3
    # N  [ 5  1  1] -> [ 1  1  2] -> [ 1  1  0]
    # S  [ 3  3  1]    [ 4  4  2]    [ 4  4  2]
    #      0  1  2       0  1  2       0  1  2
    result = apply_move(pack([3, 3, 1, 1, 1, 5]), NORTH, 5, ply=1, rules=Rules(capture_rows="own"))
    assert result.board == pack([4, 4, 2, 0, 1, 1])
    assert result.captured == 2
    assert result.captured_pits == (3,)
    assert result.events == capture(2, 1, own=2)


def test_variant_first_move_forfeit_false_captures_on_the_first_move():
    """Variant first-move forfeit = no: South's first move 0 captures the 2 stones of pit 0."""
    #     before        sown          after
    #      5  4  3       5  4  3       5  4  3
    # N  [ 7  7  7] -> [ 8  8  8] -> [ 8  8  8]
    # S  [ 7  7  7]    [ 2  8  8]    [ 0  8  8]
    #      0  1  2       0  1  2       0  1  2
    rules = Rules(first_move_forfeit=False)
    result = apply_move(engine.start_board(rules), SOUTH, 0, ply=0, rules=rules)
    assert result.board == pack([0, 8, 8, 8, 8, 8])
    assert result.captured == 2
    assert result.captured_pits == (0,)
    assert result.events == capture(2, 1, own=2)


def test_variant_feeding_off_allows_every_move():
    """Variant feeding = off: with North's row empty pit 0 (which does not feed) is legal too.

    feeding_active still counts the turn (a turn started with the opponent's row empty).
    """
    #     before        after 0
    #      5  4  3       5  4  3
    # N  [ 0  0  0] -> [ 0  0  0]
    # S  [ 2  0  2]    [ 1  1  2]
    #      0  1  2       0  1  2
    rules = Rules(feeding=False)
    board = pack([2, 0, 2, 0, 0, 0])
    assert legal_moves(board, SOUTH, 1, rules) == (0, 2)
    result = apply_move(board, SOUTH, 0, ply=1, rules=rules)
    assert result.board == pack([1, 1, 2, 0, 0, 0])
    assert result.events == events(feeding_active=1)


def test_variant_grand_slam_allowed_captures_the_whole_row():
    """Variant grand slam allowed: pit 2 takes North's last 2 stones; nothing is blocked."""
    #     before        sown          after
    #      5  4  3       5  4  3       5  4  3
    # N  [ 0  0  1] -> [ 0  0  2] -> [ 0  0  0]
    # S  [ 2  0  2]    [ 2  0  1]    [ 2  0  1]
    #      0  1  2       0  1  2       0  1  2
    rules = Rules(grand_slam="allowed")
    board = pack([2, 0, 2, 1, 0, 0])
    assert legal_moves(board, SOUTH, 1, rules) == (0, 2)
    result = apply_move(board, SOUTH, 2, ply=1, rules=rules)
    assert result.board == pack([2, 0, 1, 0, 0, 0])
    assert result.captured == 2
    assert result.captured_pits == (3,)
    assert result.events == capture(2, 1, opponent=2)
    assert apply_move(board, SOUTH, 0, ply=1, rules=rules).events == events()
    assert legal_moves(pack([0, 0, 2, 1, 0, 0]), SOUTH, 1, rules) == (2,)


def test_variant_grand_slam_no_capture_is_legal_but_captures_nothing():
    """Variant grand slam allowed but captures nothing: pit 2 is legal; pit 3's 2 stones stay."""
    #     before        after
    #      5  4  3       5  4  3
    # N  [ 0  0  1] -> [ 0  0  2]
    # S  [ 2  0  2]    [ 2  0  1]
    #      0  1  2       0  1  2
    rules = Rules(grand_slam="no_capture")
    board = pack([2, 0, 2, 1, 0, 0])
    assert legal_moves(board, SOUTH, 1, rules) == (0, 2)
    result = apply_move(board, SOUTH, 2, ply=1, rules=rules)
    assert result.board == pack([2, 0, 1, 2, 0, 0])
    assert result.captured == 0
    assert result.captured_pits == ()
    assert result.events == events()


def test_variant_ply_cap_is_stored_with_the_record():
    """Variant ply cap: the cap belongs to the rule set and is stored with every record."""
    record = play_game("random", "random", rules=Rules(ply_cap=3), seed=1)
    assert record.rules == "modiar-cap3"
    assert Rules.from_name(record.rules).ply_cap == 3
    assert record.plies == 3
    assert record.end_reason == "ply_cap"


# --------------------------------------------------------------------------------------
# IllegalMoveError: the pit, the board's pits and the rule
# --------------------------------------------------------------------------------------


def test_illegal_move_error_is_a_value_error():
    """IllegalMoveError is a ValueError."""
    assert issubclass(IllegalMoveError, ValueError)


def _message(board: int, mover: int, pit: int, ply: int = 1) -> str:
    with pytest.raises(IllegalMoveError) as caught:
        apply_move(board, mover, pit, ply=ply)
    message = str(caught.value)
    assert re.search(rf"\bpit {pit}\b", message), message
    pits = ", ".join(str(count) for count in unpack(board))
    assert pits in message, message
    return message


def test_illegal_move_wrong_row():
    """IllegalMoveError, step 1: a player plays only the pits of its own row."""
    message = _message(engine.start_board(), SOUTH, 3, ply=0)
    assert re.search(r"row|only pits|0, 1 and 2", message, re.IGNORECASE), message
    message = _message(engine.start_board(), NORTH, 0)
    assert re.search(r"row|only pits|3, 4 and 5", message, re.IGNORECASE), message


def test_illegal_move_singleton():
    """IllegalMoveError, step 1: a singleton may not be played."""
    #      5  4  3
    # N  [ 2  2  2]
    # S  [ 1  1  3]
    #      0  1  2
    message = _message(pack([1, 1, 3, 2, 2, 2]), SOUTH, 0)
    assert re.search(r"singleton|at least 2", message, re.IGNORECASE), message


def test_illegal_move_grand_slam():
    """IllegalMoveError, grand slam prohibited."""
    #     before        after 0
    #      5  4  3       5  4  3
    # N  [ 0  0  1] -> [ 0  0  1]
    # S  [ 2  0  2]    [ 1  1  2]
    #      0  1  2       0  1  2
    message = _message(pack([2, 0, 2, 1, 0, 0]), SOUTH, 2)
    assert "grand slam" in message.lower(), message


def test_illegal_move_feeding():
    """IllegalMoveError, feeding."""
    #     before        after 2
    #      5  4  3       5  4  3
    # N  [ 0  0  0] -> [ 0  0  1]
    # S  [ 2  0  2]    [ 2  0  1]
    #      0  1  2       0  1  2
    message = _message(pack([2, 0, 2, 0, 0, 0]), SOUTH, 0)
    assert "feed" in message.lower(), message


# --------------------------------------------------------------------------------------
# The rule set
# --------------------------------------------------------------------------------------


def test_rules_default_is_rules_md():
    """Variants: the default rule set is exactly RULES.md, named "modiar"."""
    rules = Rules()
    assert rules.stones_per_pit == 7
    assert rules.min_stones_to_play == 2
    assert rules.sow_origin is True
    assert tuple(rules.capture_counts) == (2, 4, 6)
    assert rules.capture_rows == "either"
    assert rules.first_move_forfeit is True
    assert rules.feeding is True
    assert rules.grand_slam == "prohibited"
    assert rules.ply_cap == 400
    assert rules.name == "modiar"
    assert Rules.from_name("modiar") == rules


def test_rules_is_frozen():
    """A rule set is a frozen value."""
    with pytest.raises(dataclasses.FrozenInstanceError):
        Rules().ply_cap = 3  # type: ignore[misc]


VARIANTS = [*EVERY_FIELD_ALONE, OWARE_LIKE]


@pytest.mark.parametrize("rules", VARIANTS, ids=lambda rules: rules.name)
def test_rules_name_round_trips_for_variants(rules):
    """Variants: a rule set has a stable short name; Rules.from_name inverts it."""
    assert rules.name != "modiar"
    assert rules.name.startswith("modiar")
    assert Rules.from_name(rules.name) == rules
    assert Rules.from_name(rules.name).name == rules.name


@pytest.mark.parametrize("field", RULE_FIELDS, ids=lambda field: field.name)
def test_each_rule_field_is_declared_once_and_its_text_round_trips(field):
    """A rule field's one declaration (engine.game.rules.RuleField) names every field of Rules, and
    its printer and parser invert each other for every value the test variants give it, so the
    name token, --rule FIELD=VALUE and the reports' labels all read the same declaration."""
    assert [declared.name for declared in RULE_FIELDS] == [f.name for f in dataclasses.fields(Rules)]
    values = {getattr(rules, field.name) for rules in [Rules(), *VARIANTS]}
    assert field.default == getattr(Rules(), field.name) and len(values) >= 2  # every field is varied by a variant
    for value in values:
        assert field.parse(field.token(value)[len(field.prefix) :]) == value
        assert field.label(value) and field.words
        assert rule_option(f"{field.name}={field.token(value)[len(field.prefix) :]}") == (field.name, value)
    assert len({declared.prefix for declared in RULE_FIELDS}) == len(RULE_FIELDS)


def test_a_rule_fields_text_is_read_one_way_everywhere():
    """--rule and a rule set's name spell a value alike (on/off, 2.4.6 or 2,4,6, nocapture or no_capture)."""
    assert Rules.from_name("modiar-captures2.4-feedingoff-slamnocapture") == Rules(
        capture_counts=(2, 4), feeding=False, grand_slam="no_capture"
    )
    assert rule_option("capture_counts=2,4") == ("capture_counts", (2, 4))
    assert rule_option("grand_slam=no_capture") == rule_option("grand_slam=nocapture")
    assert rule_option("feeding=off") == ("feeding", False)
    with pytest.raises(ValueError, match="has a bad value 'sometimes' for grand_slam"):
        Rules.from_name("modiar-slamsometimes")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("stones_per_pit", 0),
        ("stones_per_pit", -1),
        ("min_stones_to_play", 0),
        ("capture_counts", (2, 43)),
        ("capture_counts", (0, 2)),
        ("capture_counts", ()),
        ("capture_rows", "both"),
        ("grand_slam", "sometimes"),
        ("sow_origin", "yes"),
        ("first_move_forfeit", None),
        ("feeding", "on"),
        ("ply_cap", 0),
    ],
)
def test_rules_impossible_values_raise_value_error_naming_the_field(field, value):
    """Rules(...) with an impossible value raises ValueError whose message names the field."""
    with pytest.raises(ValueError, match=field):
        Rules(**{field: value})


def test_rules_capture_count_over_the_total_stones_depends_on_stones_per_pit():
    """A capture count may not exceed the stones in play: 24 with 4 per pit, 42 by default."""
    assert Rules(capture_counts=(2, 24), stones_per_pit=4).capture_counts == (2, 24)
    with pytest.raises(ValueError, match="capture_counts"):
        Rules(capture_counts=(2, 25), stones_per_pit=4)
    with pytest.raises(ValueError, match="min_stones_to_play"):
        Rules(min_stones_to_play=25, stones_per_pit=4)


def test_rules_from_name_rejects_unknown_names():
    """Rules.from_name raises ValueError on a name that is not a rule set's."""
    for name in ("oware", "modiar-bogus3", "modiar-slamsometimes"):
        with pytest.raises(ValueError):
            Rules.from_name(name)
