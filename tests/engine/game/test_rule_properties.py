"""Property tests (hypothesis) of the engine against RULES.md, on the default rules and every variant.

Random games are played move by move through ``legal_moves`` / ``apply_move`` and checked
turn by turn; ``play_game`` records are checked against the end-of-game and ply-cap rules
and replayed. Boards, names and codes are checked to round-trip.
"""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from variants import EVERY_FIELD_ALONE, OWARE_LIKE

import engine
from engine import IllegalMoveError, Rules, apply_move, end_event, legal_moves, pack, parse_board, play_game, render, unpack

SOUTH, NORTH = 0, 1
END_EVENTS = ("singleton_end", "grand_slam_end", "empty_row_end")

# The default rule set and one rule set per variant field of RULES.md ("Variants"), plus
# an Oware-like combination. Small ply caps keep the games that never end short.
RULE_SETS = [Rules(), *EVERY_FIELD_ALONE, OWARE_LIKE]

rule_sets = st.sampled_from(RULE_SETS)
seeds = st.integers(min_value=0, max_value=2**64 - 1)
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def sowing_path(origin: int, hand: int, rules: Rules) -> list[int]:
    """The pits that receive the hand's stones, in order (RULES.md, "A turn", step 2)."""
    ring = [(origin + step) % 6 for step in range(6)]
    if not rules.sow_origin:
        ring = ring[1:]
    return [ring[stone % len(ring)] for stone in range(hand)]


def row(player: int) -> range:
    return range(3 * player, 3 * player + 3)


def check_turn(board: int, mover: int, ply: int, pit: int, rules: Rules, result: engine.MoveResult) -> None:
    """What RULES.md says of any single move, whatever the position."""
    before, after = unpack(board), unpack(result.board)
    hand = before[pit]
    path = sowing_path(pit, hand, rules)
    assert hand >= rules.min_stones_to_play  # step 1: playable pit
    # Stones are conserved: what left the board was captured.
    assert sum(before) == sum(after) + result.captured
    # Pits off the sowing path and off the chain are untouched; the origin is emptied first.
    sown = list(before)
    sown[pit] = 0
    for target in path:
        sown[target] += 1
    for target in range(6):
        if target not in result.captured_pits:
            assert after[target] == sown[target]
    # Captures: the landing pit first, then backwards along the path, each pit once, each
    # captured pit holding a capture count after sowing and emptied.
    taken = result.captured_pits
    assert len(set(taken)) == len(taken)
    assert sum(sown[target] for target in taken) == result.captured
    assert all(sown[target] in rules.capture_counts and after[target] == 0 for target in taken)
    if taken:
        assert taken[0] == path[-1]
        assert list(taken) == list(dict.fromkeys(reversed(path)))[: len(taken)]
        if rules.capture_rows == "opponent":
            assert all(target not in row(mover) for target in taken)
        if rules.capture_rows == "own":
            assert all(target in row(mover) for target in taken)
    # Step 4: the first move of the game captures nothing.
    if ply == 0 and rules.first_move_forfeit:
        assert result.captured == 0
    # Grand slam prohibited: never take stones from the opponent's row and leave it empty.
    opponent = row(mover ^ 1)
    took_from_opponent = any(target in opponent for target in taken)
    if rules.grand_slam == "prohibited" and took_from_opponent:
        assert any(after[target] for target in opponent)
    if rules.grand_slam == "no_capture" and took_from_opponent:
        assert any(after[target] for target in opponent)
    # The events of the move agree with the result.
    events = result.events
    assert events["capture"] == (result.captured > 0)
    assert events["capture_stones"] == result.captured
    assert events["capture_pits"] == len(taken)
    assert events["capture_own_row_stones"] == sum(sown[target] for target in taken if target in row(mover))
    assert events["capture_opponent_row_stones"] == sum(sown[target] for target in taken if target in opponent)
    assert all(events[name] == 0 for name in END_EVENTS)
    opponent_empty = not any(before[target] for target in opponent)
    assert events["feeding_active"] == opponent_empty
    if rules.feeding and opponent_empty and events["feeding_lapsed"] == 0:
        assert any(target in opponent for target in path)  # feeding: the move feeds


def check_position(board: int, mover: int, ply: int, rules: Rules) -> tuple[int, ...]:
    """legal_moves is exactly the set of pits apply_move accepts, and obeys feeding."""
    legal = legal_moves(board, mover, ply, rules)
    assert list(legal) == sorted(set(legal))
    assert all(pit in row(mover) and unpack(board)[pit] >= rules.min_stones_to_play for pit in legal)
    opponent = row(mover ^ 1)
    if rules.feeding and not any(unpack(board)[pit] for pit in opponent):
        # Feeding: when a remaining move feeds, only feeding moves are legal; else none feeds.
        feeds = {any(target in opponent for target in sowing_path(pit, unpack(board)[pit], rules)) for pit in legal}
        assert len(feeds) <= 1
    for pit in range(6):
        if pit not in legal:
            try:
                apply_move(board, mover, pit, ply=ply, rules=rules)
            except IllegalMoveError:
                pass
            else:
                raise AssertionError(f"apply_move accepted pit {pit}, not in legal_moves {legal}\n{render(board)}")
    return legal


def play_randomly(rules: Rules, seed: int):
    """A game played move by move through legal_moves/apply_move, checked every turn."""
    chooser = random.Random(seed)
    board = engine.start_board(rules)
    captured = [0, 0]
    totals = dict.fromkeys(engine.EVENTS, 0)
    moves = []
    mover = SOUTH
    ply = 0
    while True:
        legal = check_position(board, mover, ply, rules)
        if not legal:
            break
        assert ply < rules.ply_cap
        assert end_event(board, mover, ply, rules) is None
        pit = chooser.choice(legal)
        result = apply_move(board, mover, pit, ply=ply, rules=rules)
        check_turn(board, mover, ply, pit, rules, result)
        for name, count in result.events.items():
            totals[name] += count
        captured[mover] += result.captured
        moves.append(pit)
        board = result.board
        # Stones on the board plus stones captured never change.
        assert sum(unpack(board)) + sum(captured) == rules.total_stones == 6 * rules.stones_per_pit
        mover ^= 1
        ply += 1
    return board, mover, ply, captured, totals, moves


@SETTINGS
@given(rules=rule_sets, seed=seeds)
def test_random_games_obey_the_turn_rules(rules, seed):
    """A turn / restrictions: every move is legal, stones are conserved, events agree."""
    board, mover, ply, _, _, _ = play_randomly(rules, seed)
    # The game ends exactly when the mover has no legal move, or at the ply cap.
    assert ply <= rules.ply_cap
    if ply < rules.ply_cap:
        ending = end_event(board, mover, ply, rules)
        assert ending in END_EVENTS
        own = [unpack(board)[pit] for pit in row(mover)]
        if ending == "empty_row_end":
            assert not any(own)
        elif ending == "singleton_end":
            assert any(own) and all(count < rules.min_stones_to_play for count in own)
        else:
            assert rules.grand_slam == "prohibited" and any(count >= rules.min_stones_to_play for count in own)
    else:
        assert legal_moves(board, mover, ply, rules) == ()
        assert end_event(board, mover, ply, rules) is None


@SETTINGS
@given(rules=rule_sets, seed=seeds, south=st.sampled_from(["random", "greedy"]), north=st.sampled_from(["random", "greedy"]))
def test_play_game_records_obey_the_end_of_game_rules(rules, seed, south, north):
    """End of the game / ply cap: the record's scores, winner, plies, end reason and events."""
    record = play_game(south, north, rules=rules, seed=seed)
    assert record.score_south + record.score_north == rules.total_stones
    expected = (
        "south" if record.score_south > record.score_north else "north" if record.score_north > record.score_south else "draw"
    )
    assert record.winner == expected
    assert record.plies == len(record.moves)
    assert (record.end_reason == "ply_cap") == (record.plies == rules.ply_cap)
    assert record.end_reason in ("ply_cap", "no_moves")
    ends = sum(record.events[name] for name in END_EVENTS)
    assert ends == (1 if record.end_reason == "no_moves" else 0)
    assert record.rules == rules.name
    assert (record.seed, record.south, record.north) == (seed, south, north)

    # Replaying the moves with apply_move reproduces the scores and the event counts.
    board, mover, captured = engine.start_board(rules), SOUTH, [0, 0]
    totals = dict.fromkeys(engine.EVENTS, 0)
    for ply, pit in enumerate(record.moves):
        assert pit in legal_moves(board, mover, ply, rules)
        result = apply_move(board, mover, pit, ply=ply, rules=rules)
        for name, count in result.events.items():
            totals[name] += count
        captured[mover] += result.captured
        board, mover = result.board, mover ^ 1
    pits = unpack(board)
    assert record.score_south == captured[SOUTH] + sum(pits[0:3])
    assert record.score_north == captured[NORTH] + sum(pits[3:6])
    assert legal_moves(board, mover, record.plies, rules) == ()
    ending = end_event(board, mover, record.plies, rules)
    if ending is not None:
        totals[ending] += 1
    assert record.events == totals


@SETTINGS
@given(rules=rule_sets, seed=seeds)
def test_the_same_seed_gives_the_same_game(rules, seed):
    """Records are reproducible: the same seed (and strategies, rules) gives the same game."""
    first = play_game("random", "greedy", rules=rules, seed=seed)
    assert play_game("random", "greedy", rules=rules, seed=seed) == first


@settings(max_examples=300, deadline=None)
@given(counts=st.lists(st.integers(min_value=0, max_value=63), min_size=6, max_size=6))
def test_render_and_pack_round_trip(counts):
    """Board code: pack/unpack and render/parse_board are inverses for any 6 pits of 0..63."""
    board = pack(counts)
    assert unpack(board) == tuple(counts)
    assert board == sum(count << 6 * pit for pit, count in enumerate(counts))
    assert parse_board(render(board)) == board
    assert engine.rotate(engine.rotate(board)) == board
    assert unpack(engine.rotate(board)) == tuple(counts[3:] + counts[:3])


@settings(max_examples=300, deadline=None)
@given(board=st.integers(min_value=0, max_value=2**36 - 1))
def test_board_codes_round_trip(board):
    """Board code: every 36-bit code unpacks to six pits that pack back to it."""
    assert pack(unpack(board)) == board


@st.composite
def any_rules(draw) -> Rules:
    stones = draw(st.integers(min_value=1, max_value=10))
    total = 6 * stones
    return Rules(
        stones_per_pit=stones,
        min_stones_to_play=draw(st.integers(min_value=1, max_value=total)),
        sow_origin=draw(st.booleans()),
        capture_counts=tuple(sorted(draw(st.sets(st.integers(min_value=1, max_value=total), min_size=1, max_size=6)))),
        capture_rows=draw(st.sampled_from(["either", "opponent", "own"])),
        first_move_forfeit=draw(st.booleans()),
        feeding=draw(st.booleans()),
        grand_slam=draw(st.sampled_from(["prohibited", "allowed", "no_capture"])),
        ply_cap=draw(st.integers(min_value=1, max_value=10_000)),
    )


@settings(max_examples=300, deadline=None)
@given(rules=any_rules())
def test_rules_names_round_trip(rules):
    """Variants: a rule set has a stable short name, and Rules.from_name(r.name) == r."""
    assert Rules.from_name(rules.name) == rules
    assert (rules.name == "modiar") == (rules == Rules())


@SETTINGS
@given(
    rules=rule_sets,
    counts=st.lists(st.integers(min_value=0, max_value=10), min_size=6, max_size=6),
    mover=st.sampled_from([SOUTH, NORTH]),
    ply=st.integers(min_value=0, max_value=20),
)
def test_any_position_obeys_the_turn_rules_and_is_symmetric(rules, counts, mover, ply):
    """A turn and "Perfect play" symmetry, from arbitrary positions (at most 60 stones).

    North to move on b is South to move on b turned by three pits: same moves (shifted by
    three), same results turned, same events.
    """
    board = pack(counts)
    legal = check_position(board, mover, ply, rules)
    turned = engine.rotate(board)
    assert legal_moves(turned, mover ^ 1, ply, rules) == tuple((pit + 3) % 6 for pit in legal)
    for pit in legal:
        result = apply_move(board, mover, pit, ply=ply, rules=rules)
        check_turn(board, mover, ply, pit, rules, result)
        mirror = apply_move(turned, mover ^ 1, (pit + 3) % 6, ply=ply, rules=rules)
        assert mirror.board == engine.rotate(result.board)
        assert mirror.captured == result.captured
        assert mirror.captured_pits == tuple((target + 3) % 6 for target in result.captured_pits)
        assert mirror.events == result.events
    if not legal and ply < rules.ply_cap:
        assert end_event(board, mover, ply, rules) == end_event(turned, mover ^ 1, ply, rules) in END_EVENTS
