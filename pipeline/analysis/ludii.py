"""The Ludii-comparable table: a study's self-play measured as the Ludii general game system
measures a game (the Ludii "Evaluation" metrics, Digital Ludeme Project), so that Modiar can be
set beside the games of Ludii's database.

    comparable(games, plies)   one row per self-play group: the Ludii metrics, counted as Ludii counts

Ludii measures a game by playing it against itself, every game a trial, and averaging over the
trials. The files named below are those of github.com/Ludeme/Ludii, under
Evaluation/src/metrics unless a path says otherwise. Where the table differs from our own
metrics (pipeline.analysis.metrics.ludii for whole games, pipeline.analysis.turns.ludii_plies per ply), and why:

- Self-play only: Ludii's trials are a game's self-play, so a pairing of two strategies has no
  counterpart there; the table keeps the groups where south == north.
- A game stopped by the ply cap is a draw. Core/src/game/Game.java: when the turn or move
  limit is reached (checkMaxTurns), every player not yet ranked gets the draw rank
  (Core/src/other/context/Context.java, computeNextDrawRank: (active players + 1) / 2 + winners,
  so 1.5 for both players; Core/src/other/RankUtils.java turns it into utility 0), and the trial
  ends with Status(winner 0, EndType TurnLimit or MoveLimit), whatever the score.
  Our records keep the winner of the score (RULES.md, "Ply cap"), and so does
  pipeline.analysis.metrics.ludii. So here, for the games with end_reason "ply_cap":
    - AdvantageP1 (single/outcome/AdvantageP1.java: the mean of (utility of player 1 + 1) / 2)
      counts them one half;
    - Balance (single/outcome/Balance.java: 1 - |win rate of player 1 - win rate of player 2|,
      the rates summed into int arrays, so that a draw adds nothing to either) counts them for
      neither side;
    - Drawishness (single/outcome/Drawishness.java: games where every player's utility is 0)
      counts them as draws, although its description says "not including timeouts";
    - Completion (single/outcome/Completion.java: games whose Status has a winner) does not count
      them: the same as ours, which already left them out;
    - Timeouts (single/outcome/Timeouts.java: EndType MoveLimit or TurnLimit) is the same as ours.
  Game.java evaluates the end rules before the limit, so a game whose player to move has no
  legal move exactly at the cap would end naturally in Ludii; our records mark it "ply_cap"
  (no end event fires at the cap) and it is counted here as a timeout, a draw.
- Duration: the mean number of plies, as ours: single/duration/DurationMoves.java averages the
  real moves of each trial, DurationTurns.java its turns (Core/src/other/trial/Trial.java,
  numTurns: the changes of mover), one a move when the players alternate as here.
  Duration_p99 is the 99th percentile of the plies (linear interpolation, as numpy.percentile),
  which Ludii does not give.
- BranchingFactor: Ludii's per game (ludii_plies' BranchingFactor_per_game: the mean legal moves
  over a game's turns, averaged over the games, a game without a move counting 0). Our own
  BranchingFactor is that too, without the games that have no move, so the two differ only
  when a game has no move at all. BranchingFactor_per_turn beside it pools the turns of every
  game (a long game weighs as much as its turns).
- DecisionMoves: ours (single/complexity/DecisionMoves.java; Ludii's would be NaN with a game
  without a move, which we leave out).
- PositionalRepetition: Ludii's to the letter (ludii_plies' PositionalRepetition_ludii):
  single/stateRepetition/PositionalRepetition.java divides two ints, which makes a game count 1
  when some board comes back and 0 otherwise, and keys a state by the board alone
  (State.stateHash, without the side to move); the metric is the share of games with a
  repeated board. PositionalRepetition_ours beside it is 1 - distinct states / states with
  states keyed by (board, side to move) and real division.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from pipeline.analysis.metrics import ludii
from pipeline.runs.records import IS_SELF_PLAY, PAIRING_COLUMNS

# The column of ludii_plies' table behind each per-ply column of the comparable table.
FROM_PLIES = {
    "BranchingFactor": "BranchingFactor_per_game",
    "BranchingFactor_per_turn": "BranchingFactor_per_turn",
    "DecisionMoves": "DecisionMoves",
    "PositionalRepetition": "PositionalRepetition_ludii",
    "PositionalRepetition_ours": "PositionalRepetition",
}
WHOLE_GAMES = ("AdvantageP1", "Balance", "Completion", "Drawishness", "Timeouts", "Duration", "Duration_low", "Duration_high")
ENDS = ("", "_low", "_high")


def comparable(games: pl.LazyFrame, plies: pl.DataFrame, by: Sequence[str] = PAIRING_COLUMNS) -> pl.DataFrame:
    """The Ludii-comparable table of a study's self-play, one row per group of ``by`` (which must
    hold south and north) where south == north, sorted by ``by``.

    ``games`` is the games table (pipeline.runs.records.scan_games); ``plies`` is
    pipeline.analysis.turns.ludii_plies of the same games with the same ``by`` (the report computes it
    pairing by pairing). Columns: *by, games, then Ludii's AdvantageP1, Balance, Completion,
    Drawishness and Timeouts with a ply-cap game counted as a draw; Duration with
    Duration_low/_high (95% normal interval) and Duration_p99; BranchingFactor (Ludii's, per
    game), BranchingFactor_per_turn, DecisionMoves, PositionalRepetition (Ludii's) and
    PositionalRepetition_ours, each with NAME_low/_high (their intervals in ludii_plies). The
    module docstring says where each differs from pipeline.analysis.metrics.ludii and ludii_plies.

    Raises ValueError when ``by`` leaves out south or north, when ``plies`` lacks a column of
    ``by``, or when its games differ from those of the self-play groups.
    """
    by = _checked_by(by, plies)
    self_play = games.filter(IS_SELF_PLAY)
    whole = ludii(self_play.with_columns(_ludii_winner()), by=by).select(*by, "games", *WHOLE_GAMES, "Duration_p99")
    per_ply = plies.filter(IS_SELF_PLAY).select(
        *by,
        pl.col("games").alias("_plies_games"),
        *(pl.col(f"{source}{end}").alias(f"{name}{end}") for name, source in FROM_PLIES.items() for end in ENDS),
    )
    table = whole.join(per_ply, on=by, how="left", maintain_order="left")
    _check_games(table, by)
    return table.drop("_plies_games")


def _ludii_winner() -> pl.Expr:
    """The winner as Ludii scores it: a game stopped by the ply cap is a draw."""
    return pl.when(pl.col("end_reason") == "ply_cap").then(pl.lit("draw")).otherwise(pl.col("winner")).alias("winner")


def _checked_by(by: Sequence[str], plies: pl.DataFrame) -> list[str]:
    by = list(by)
    if not {"south", "north"} <= set(by):
        raise ValueError(f"by={by} must hold 'south' and 'north': the table keeps the self-play groups, where they are equal")
    missing = [name for name in by if name not in plies.columns]
    if missing:
        raise ValueError(f"the plies table has no column {missing}: pass pipeline.analysis.turns.ludii_plies(games, by={by})")
    return by


def _check_games(table: pl.DataFrame, by: list[str]) -> None:
    """Each self-play group's games must be those ludii_plies replayed."""
    wrong = table.filter(pl.col("_plies_games").is_null() | (pl.col("_plies_games") != pl.col("games")))
    if wrong.height:
        row = wrong.row(0, named=True)
        group = ", ".join(f"{name}={row[name]}" for name in by)
        raise ValueError(
            f"the plies table holds {row['_plies_games']} games for {group}, the games table {row['games']}: "
            "compute it with pipeline.analysis.turns.ludii_plies from the same games"
        )
