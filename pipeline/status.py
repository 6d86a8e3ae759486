"""How far a study folder got: ``modiar study status DIR``, and the warning every other output
of an unfinished study carries (summary, report)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pipeline.paths import EXACT
from pipeline.records import Manifest, RecordError, exact_done, read_manifest
from pipeline.runner import Chunk, chunk_done, chunk_listed, plan
from pipeline.study import ConfigError, Pairing, Study, parse_study


@dataclass(frozen=True)
class Progress:
    """The chunks of a study's plan, and those of them on disk as the manifest vouches for them."""

    study: Study
    planned: list[Chunk]
    done: list[Chunk]

    @property
    def complete(self) -> bool:
        return len(self.done) == len(self.planned)

    def games(self, pairing: Pairing | None = None) -> int:
        """Games recorded, of one pairing or of the study."""
        return sum(len(chunk) for chunk in self.done if pairing is None or chunk.pairing == pairing)

    def missing_chunks(self, pairing: Pairing) -> int:
        return sum(chunk.pairing == pairing for chunk in self.planned) - sum(chunk.pairing == pairing for chunk in self.done)


def progress(directory: Path, manifest: Manifest | None = None, *, verified: bool = False) -> Progress:
    """Which chunks of the study in ``directory`` are done (their files match their checksums).
    ``verified``: the files were checked already (records.scan_games), the manifest is enough."""
    manifest = read_manifest(directory) if manifest is None else manifest
    try:
        study = parse_study(manifest["config"])
        chunks = plan(study)
    except ConfigError as error:
        raise RecordError(f"{directory}: the manifest's config is not a study config ({error})") from None
    if verified:
        return Progress(study, chunks, [chunk for chunk in chunks if chunk_listed(manifest, chunk)])
    return Progress(study, chunks, [chunk for chunk in chunks if chunk_done(directory, manifest, chunk, study.keep_plies)])


def incomplete_warning(directory: Path, manifest: Manifest | None = None, *, verified: bool = False) -> str | None:
    """One line saying that the study is unfinished and what is missing, None when it is complete
    (``verified`` as for progress)."""
    state = progress(directory, manifest, verified=verified)
    if state.complete:
        return None
    unfinished = [pairing for pairing in state.study.pairings() if state.missing_chunks(pairing)]
    shown = "; ".join(
        f"{_pairing_name(pairing, state)} {state.games(pairing):,} of {pairing.games:,}" for pairing in unfinished[:4]
    )
    more = f"; and {len(unfinished) - 4} more" if len(unfinished) > 4 else ""
    return (
        f"INCOMPLETE STUDY: {len(state.done)} of {len(state.planned)} chunks done, {state.games():,} of "
        f"{state.study.total_games():,} games; unfinished pairings: {shown}{more}. "
        "Every figure below covers only the games recorded; run 'modiar study run' with its config again to finish it."
    )


def status(directory: Path) -> str:
    """Chunks done of all planned (a chunk counts when its files match their checksums),
    games recorded, and per ordered pairing the games recorded of those planned and the chunks missing."""
    state = progress(directory)
    study = state.study
    several = bool(study.variants)
    rule_sets = ", ".join(f"{variant.label} ({variant.rules.name})" for variant in study.rule_sets()) if several else ""
    verdict = "complete" if state.complete else f"INCOMPLETE, {len(state.planned) - len(state.done)} chunks missing"
    lines = [
        f"study {study.name} in {directory}: {len(state.done)} of {len(state.planned)} chunks done ({verdict}), "
        f"{state.games():,} of {study.total_games():,} games, rules {rule_sets or study.rules.name}",
        (f"  {'variant':<24}" if several else "  ") + f"{'south':<24}{'north':<24}{'games':>12}{'of':>12}{'chunks missing':>16}",
    ]
    for pairing in study.pairings():
        variant = f"{pairing.variant:<24}" if several else ""
        missing = state.missing_chunks(pairing)
        lines.append(
            f"  {variant}{pairing.south:<24}{pairing.north:<24}{state.games(pairing):>12,}{pairing.games:>12,}{missing or '':>16}"
        )
    exact = len(study.exact_pairings())
    if exact:
        manifest = read_manifest(directory)
        if exact_done(directory, manifest, exact):
            lines.append(f"exact outcomes: {exact} pairings in {EXACT}, matching the manifest")
        elif "exact" in manifest:
            lines.append(f"exact outcomes: {EXACT} is missing or changed; run the study again to rewrite it from the cache")
        else:
            lines.append(f"exact outcomes: {exact} pairings, written to {EXACT} once every chunk is done")
    if not state.complete:
        lines.append("run 'modiar study run' with the study's config again to play the missing chunks")
    return "\n".join(lines)


def _pairing_name(pairing: Pairing, state: Progress) -> str:
    under = f" ({pairing.variant})" if state.study.variants else ""
    return f"{pairing.south} v {pairing.north}{under}"
