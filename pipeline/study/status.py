"""How far a study folder got: ``modiar study status DIR``, and the warning every other output
of an unfinished study carries (summary, report)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from engine.store import DamagedFileError, regular_file
from pipeline.exact.cache import read_cached
from pipeline.runs.config import ConfigError
from pipeline.runs.paths import EXACT, GAMES, PLIES
from pipeline.runs.records import Manifest, RecordError, chunk_file, exact_done, file_sha256, parquet_rows, read_study_manifest
from pipeline.study.config import Pairing, Study, parse_study
from pipeline.study.run import Chunk, chunk_done, chunk_listed, plan


@dataclass(frozen=True)
class Progress:
    """The chunks of a study's plan and its exact outcomes, and what of them is on disk as the
    manifest vouches for it."""

    study: Study
    planned: list[Chunk]
    done: list[Chunk]
    exact_written: bool  # exact.parquet, when the config asks for exact outcomes, is there and sound
    damaged: dict[str, str] = field(default_factory=dict)  # finished chunks' files that are not as the manifest vouches
    exact_damage: str | None = None  # what is wrong with an exact.parquet the manifest vouches for

    @property
    def complete(self) -> bool:
        return len(self.done) == len(self.planned) and self.exact_written

    def games(self, pairing: Pairing | None = None) -> int:
        """Games recorded, of one pairing or of the study."""
        return sum(len(chunk) for chunk in self.done if pairing is None or chunk.pairing == pairing)

    def missing_chunks(self, pairing: Pairing) -> int:
        return sum(chunk.pairing == pairing for chunk in self.planned) - sum(chunk.pairing == pairing for chunk in self.done)

    def exact_cached(self) -> int:
        """Of the exact outcomes the study asks for, how many the cache folder holds already."""
        return _exact_cached(self.study)


def progress(directory: Path, manifest: Manifest | None = None, *, verified: bool = False) -> Progress:
    """Which chunks of the study in ``directory`` are done (their files match their checksums),
    and whether its exact outcomes are written. ``verified``: the games' files were checked
    already (records.scan_games); the plies' files and exact.parquet are checked all the same."""
    manifest = read_study_manifest(directory) if manifest is None else manifest
    study = _study(directory, manifest)
    try:
        chunks = plan(study)
    except ConfigError as error:
        raise RecordError(f"{directory}: the manifest's config is not a study config ({error})") from None
    done = [chunk for chunk in chunks if chunk_done(directory, manifest, chunk, study.keep_plies, games_checked=verified)]
    listed = [chunk for chunk in chunks if chunk not in done and chunk_listed(manifest, chunk)]
    found = {chunk.name: _chunk_damage(directory, manifest, chunk, study.keep_plies) for chunk in listed}
    damaged = {name: damage for name, damage in found.items() if damage is not None}
    exact = study.exact_pairings()
    written = not exact or exact_done(directory, manifest, len(exact))
    damage = None if written or "exact" not in manifest else _file_damage(directory, dict(manifest["exact"]), EXACT)
    return Progress(study, chunks, done, written, damaged, damage)


def _chunk_damage(directory: Path, manifest: Manifest, chunk: Chunk, keep_plies: bool) -> str | None:
    """What is wrong with the files of a chunk the manifest lists as finished; None when they are
    only missing (a chunk to play, not a damaged one)."""
    entry = manifest["chunks"][chunk.name]
    for folder in (GAMES, PLIES) if keep_plies else (GAMES,):
        file = chunk_file(entry, folder)
        found = None if file is None else _file_damage(directory, dict(file), file["file"])
        if found is not None:
            return found
    games = entry["games"]["file"]
    rows = parquet_rows(directory / games)
    if rows is not None and rows != len(chunk):
        return f"{games} holds {rows} games, its chunk {len(chunk)}"
    return None


def _file_damage(directory: Path, entry: dict[str, object], name: str) -> str | None:
    """Why a file the manifest vouches for (its entry: sha256) is there but not as vouched; None
    when it is as vouched, or not there at all (missing, not damaged)."""
    found = file_sha256(directory / name)
    if found is None and not os.path.lexists(directory / name):
        return None
    if found is None:
        try:
            regular_file(directory / name)
        except DamagedFileError as error:
            return str(error)  # not a regular file: a FIFO, a folder
        return f"{name} cannot be read"
    if found != entry.get("sha256"):
        return f"{name} does not match its checksum in the manifest (changed, or another study's)"
    return None


def _study(directory: Path, manifest: Manifest) -> Study:
    try:
        return parse_study(manifest["config"])
    except ConfigError as error:
        raise RecordError(f"{directory}: the manifest's config is not a study config ({error})") from None


def incomplete_warning(directory: Path, manifest: Manifest | None = None, *, verified: bool = False) -> str | None:
    """One line saying that the study is unfinished and what is missing (chunks, or its exact
    outcomes), None when it is complete (``verified`` as for progress). Status, summary and
    report all open with it, so they agree on what is done."""
    state = progress(directory, manifest, verified=verified)
    if state.complete:
        return None
    missing = []
    if len(state.done) < len(state.planned):
        unfinished = [pairing for pairing in state.study.pairings() if state.missing_chunks(pairing)]
        shown = "; ".join(
            f"{_pairing_name(pairing, state)} {state.games(pairing):,} of {pairing.games:,}" for pairing in unfinished[:4]
        )
        more = f"; and {len(unfinished) - 4} more" if len(unfinished) > 4 else ""
        missing.append(
            f"{len(state.done)} of {len(state.planned)} chunks done, {state.games():,} of "
            f"{state.study.total_games():,} games; unfinished pairings: {shown}{more}"
        )
    if not state.exact_written:
        missing.append(f"{_exact_missing(state)}, so no sampled figure is checked against its exact value")
    return (
        f"INCOMPLETE STUDY: {'; '.join(missing)}. Every figure below covers only what is recorded; "
        "run 'modiar study run' with its config again to finish it."
    )


def _exact_missing(state: Progress) -> str:
    if state.exact_damage is not None:
        return f"exact outcomes unusable: {state.exact_damage}"
    return _not_computed(state.exact_cached(), len(state.study.exact_pairings()))


def _not_computed(cached: int, pairings: int) -> str:
    return f"exact outcomes not computed yet ({cached} of {pairings} pairings in the cache folder, none in {EXACT})"


def exact_words(directory: str | Path, manifest: Manifest | None = None) -> str:
    """Where a study's exact outcomes stand, in one phrase (the notebooks print it): not asked for
    (exact = false in its config), written (exact.parquet, as the manifest vouches), or
    exact_pending's words."""
    directory = Path(directory)
    manifest = read_study_manifest(directory) if manifest is None else manifest
    study = _study(directory, manifest)
    if study.exact is False:
        return "no exact outcomes: the study's config says exact = false"
    if not study.exact_pairings():
        return "no exact outcomes: the study has no pairing of table strategies"
    return exact_pending(directory, manifest) or f"exact outcomes of {len(study.exact_pairings())} pairings in {EXACT}"


def exact_pending(directory: str | Path, manifest: Manifest | None = None) -> str | None:
    """ "exact outcomes not computed yet (n of m pairings in the cache folder, none in
    exact.parquet)" when the study asks for exact outcomes and its run has not written them; None
    when they are written or not asked for. The report's warning, captions and abstract say it so."""
    directory = Path(directory)
    manifest = read_study_manifest(directory) if manifest is None else manifest
    study = _study(directory, manifest)
    pairings = study.exact_pairings()
    if not pairings or exact_done(directory, manifest, len(pairings)):
        return None
    return _not_computed(_exact_cached(study), len(pairings))


def _exact_cached(study: Study) -> int:
    """Of the exact outcomes ``study`` asks for, how many the cache folder holds already."""
    return sum(read_cached(pairing.south, pairing.north, pairing.rules) is not None for pairing in study.exact_pairings())


def status(directory: Path, state: Progress | None = None) -> str:
    """Chunks done of all planned (a chunk counts when its files match their checksums),
    games recorded, and per ordered pairing the games recorded of those planned and the chunks
    missing; then each finished chunk's file that is damaged (``state``: progress(directory), when
    the caller has it)."""
    state = progress(directory) if state is None else state
    study = state.study
    several = bool(study.variants)
    rule_sets = ", ".join(f"{variant.label} ({variant.rules.name})" for variant in study.rule_sets()) if several else ""
    verdict = "complete" if state.complete else f"INCOMPLETE, {_what_is_missing(state)}"
    pairings = study.pairings()
    headers: tuple[str, ...] = ("variant", "south", "north") if several else ("south", "north")
    names = [_names(pairing, several) for pairing in pairings]
    widths = _widths([headers, *names])
    lines = [
        f"study {study.name} in {directory}: {len(state.done)} of {len(state.planned)} chunks done ({verdict}), "
        f"{state.games():,} of {study.total_games():,} games, rules {rule_sets or study.rules.name}",
        f"  {_padded(headers, widths)}{'games':>12}{'of':>12}{'chunks missing':>16}",
    ]
    for pairing, cells in zip(pairings, names, strict=True):
        missing = state.missing_chunks(pairing)
        lines.append(f"  {_padded(cells, widths)}{state.games(pairing):>12,}{pairing.games:>12,}{missing or '':>16}")
    exact = len(study.exact_pairings())
    if exact and state.exact_written:
        lines.append(f"exact outcomes: {exact} pairings in {EXACT}, matching the manifest")
    elif exact:
        lines.append(f"exact outcomes: INCOMPLETE, {_exact_missing(state)}")
    lines += [f"damaged: {damage}" for damage in state.damaged.values()]
    if not state.complete:
        lines.append("run 'modiar study run' with the study's config again to finish it" + _replays(state))
    return "\n".join(lines)


def damage(state: Progress) -> str | None:
    """The first damaged file of a study (a finished chunk's, or exact.parquet), and how many
    there are, in one line; None when none is."""
    found = [*state.damaged.values(), *([state.exact_damage] if state.exact_damage else [])]
    if not found:
        return None
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return f"{found[0]}{more}; 'modiar study run' with the study's config replaces it"


def _what_is_missing(state: Progress) -> str:
    """The verdict of an unfinished study: its chunks missing and damaged, else its exact outcomes."""
    damaged = len(state.damaged)
    missing = len(state.planned) - len(state.done) - damaged
    parts = [f"{missing} {_chunks(missing)} missing"] if missing else []
    parts += [f"{damaged} {_chunks(damaged)} damaged"] if damaged else []
    if state.exact_damage is not None:
        parts.append("exact outcomes damaged")
    return ", ".join(parts) or "exact outcomes missing"


def _chunks(count: int) -> str:
    return "chunk" if count == 1 else "chunks"


def _replays(state: Progress) -> str:
    damaged = len(state.damaged) + (state.exact_damage is not None)
    return "; it replaces the damaged files, playing their chunks again" if damaged else ""


def _names(pairing: Pairing, several: bool) -> tuple[str, ...]:
    """The pairing's variant (in a study of several rule sets), South's and North's strategies."""
    return (pairing.variant, pairing.south, pairing.north) if several else (pairing.south, pairing.north)


def _widths(rows: list[tuple[str, ...]]) -> list[int]:
    """Each column's width: its widest cell and two spaces, so that no two columns run together."""
    return [max(len(cell) for cell in column) + 2 for column in zip(*rows, strict=True)]


def _padded(cells: tuple[str, ...], widths: list[int]) -> str:
    return "".join(f"{cell:<{width}}" for cell, width in zip(cells, widths, strict=True))


def _pairing_name(pairing: Pairing, state: Progress) -> str:
    under = f" ({pairing.variant})" if state.study.variants else ""
    return f"{pairing.south} v {pairing.north}{under}"
